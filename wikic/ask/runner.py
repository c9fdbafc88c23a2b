"""`wikic ask`: answer a question from the compiled wiki, citing its pages.

The wiki goes into the prompt as a byte-stable prefix (context.py). A backend
with prefix caching (backends.base.PrefixCaching: the embedded llama backend)
saves the model state after that prefix under .wikic/prefix/ and restores it
in the next ask, even in a new process; other backends get the prefix as the
first message, byte-identical, with a cache key. A question asked before on the same
wiki and model is answered from the state database at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from wikic import snapshot
from wikic.ask.answers import Citations, check_citations, save_answer
from wikic.ask.context import AskWiki, Context, ContextBuilder, read_index
from wikic.ask.index import indexed, listing
from wikic.ask.passages import line_ref
from wikic.ask.select import rank
from wikic.ask.support import quote_answer, quoted, unsupported
from wikic.backends import Backend, Request, make_backend, model_id
from wikic.backends.base import PrefixCaching, stream_or_complete
from wikic.config import Schema, load_schema
from wikic.errors import ProjectError, UsageError
from wikic.hashing import fingerprint
from wikic.lock import ProjectLock
from wikic.privacy.local import LocalOnly, is_remote
from wikic.privacy.redact import Redactor
from wikic.project import Project
from wikic.prompts.loader import Prompts
from wikic.state import Meta, State
from wikic.wiki.page import Page

ANSWER_VERSION = 3  # bump when answers for the same inputs would differ
BYTES_PER_TOKEN = 3  # estimate for backends without a local tokenizer: English runs ~4, so a margin
ESTIMATE_OVERHEAD = 64  # tokens a chat API may add around two messages
SAVED_MARK = Meta.ASK_SAVED  # the build's "clean" mark, as it is with a just-saved answer

BackendFactory = Callable[[Schema], Backend]
OnText = Callable[[str], None]


@dataclass
class AskOptions:
    save: bool = False
    use_cache: bool = True  # False: ask the model again even if this question was answered before
    stale_ok: bool = False  # answer from a wiki older than its sources
    wait: bool = True  # --save: wait for another wikic process to release the project
    on_wait: Callable[[str], None] | None = None
    quote: bool | None = None  # answer with the pages' own sentences, no model; None: schema's ask.mode
    on_progress: Callable[[str], None] | None = None  # a note before long work (many pages to read)


@dataclass
class AskResult:
    question: str
    answer: str = ""
    pages: list[str] = field(default_factory=list)  # cited page paths, wiki/x.md
    dropped_citations: list[str] = field(default_factory=list)
    cited_by_mention: bool = False  # the answer had no [[links]]; `pages` are the pages it names
    prefix_tokens: int = 0
    prefix_cached: bool = False
    question_tokens: int = 0
    evaluated_tokens: int | None = None  # llama: prompt tokens llama.cpp decoded for this answer
    cached_tokens: int = 0  # API backends: the provider's cached prompt tokens
    tokens_estimated: bool = False  # token counts are estimates (no local tokenizer)
    answer_cached: bool = False
    mode: str = "whole"  # whole wiki in the prefix, "selected" sentences after it, or "quote"
    sources_shown: list[str] = field(default_factory=list)  # source lines in the context, sources/x.md:3-4
    unsupported: list[str] = field(default_factory=list)  # answer sentences the context does not support
    context_pages: int = 0
    state_bytes: int = 0  # llama: size of the prefix state saved by this call
    model: str = ""
    saved: str | None = None
    pages_read: int = 0  # pages read for this question: new or changed since the last (ask/index.py)
    seconds: dict[str, float | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Wiki:
    """What every way of answering reads: the project and its schema, and the wiki as ask shows it."""

    project: Project
    schema: Schema
    shown: AskWiki


def ask(
    project: Project,
    question: str,
    opts: AskOptions | None = None,
    on_text: OnText | None = None,
    backend_factory: BackendFactory | None = None,
) -> AskResult:
    started = time.monotonic()
    opts = opts or AskOptions()
    question = " ".join(question.split())
    if not question:
        raise UsageError('ask what? give a question, e.g. wikic ask "what is HNSW?"')
    schema = load_schema(project.schema_path)
    mid = model_id(schema.model, project.root)
    state = State.open(project.state_path)
    try:
        walked_ns = time.time_ns()
        walked = snapshot.wiki(project)  # the mark's walk gives ask its listing of wiki/ too
        mark = check_wiki(project, schema, mid, state, opts.stale_ok, walked)
        current = mark is not None
        read = indexed(project.wiki_dir, state, _reading(opts), listing(walked, walked_ns))
        pages, hidden = shown_pages(schema, read.pages)
        index = read_index(project.wiki_dir, hidden)
        redactor = Redactor.from_config(schema.privacy.redact)
        prompts = Prompts(project.root)
        shown = AskWiki(prompts, schema.title, schema.scope, index, pages, project.root, redactor)
        wiki = _Wiki(project, schema, shown)
        quoting = schema.ask.mode == "quote" if opts.quote is None else opts.quote
        # an answer is kept and looked for where the wiki is current and the model answers: a
        # wiki older than its sources (--stale-ok) may show other lines than its build saw
        key = None
        if mark is not None and not quoting:
            made = _wiki_keys(state, mark, hidden, lambda: fingerprint([index, read.keyed(pages)]))
            key = answer_key(question, *made, prompts, schema, mid)
        stored = state.cached(key) if opts.use_cache and key is not None else None
        shown.read = read.plain  # where ranked or shown whole (an answer stored needs no page's text)
        if stored is None:  # ranked: its words found in every page's terms, the pages shown read
            shown.corpus = read.corpus(pages, question)
        if quoting:
            result = _quote(wiki, question, on_text)
        elif stored is not None:
            result = _from_store(question, stored, on_text)
        else:
            factory = backend_factory or (lambda s: make_backend(s.model, project.root))
            result = _ask_model(wiki, question, factory(schema), on_text)
            if key is not None:
                state.put_cache(
                    key, "ask", _to_store(result), result.prefix_tokens + result.question_tokens, 0
                )
        result.model = mid
        result.pages_read = read.read
        if opts.save:
            result.saved = _save(wiki, state, result, opts, current)
    finally:
        state.close()
    result.seconds["total"] = time.monotonic() - started
    return result


def _reading(opts: AskOptions) -> Callable[[int], None] | None:
    say = opts.on_progress
    if say is None:
        return None
    return lambda n: say(
        f"ask: reading {n:,} pages new or changed since the last question "
        "(what it reads of each is kept in .wikic/state.db: the next question reads only the changed)"
    )


def shown_pages(schema: Schema, pages: list[Page]) -> tuple[list[Page], frozenset[str]]:
    """The pages a prompt may hold, and the slugs of those it may not: with a remote model, none
    built from a privacy.local_only source, nor an answer citing one."""
    local = LocalOnly(schema.privacy.local_only if is_remote(schema.model) else [])
    if not local:
        return pages, frozenset()
    hidden = {p.slug for p in pages if local.covers_any(p.meta.get("sources") or [])}
    cites = {p.slug: p.meta.get("cites") for p in pages}
    hidden |= {s for s, c in cites.items() if isinstance(c, list) and hidden & {str(x) for x in c}}
    return [p for p in pages if p.slug not in hidden], frozenset(hidden)


def _save(wiki: _Wiki, state: State, result: AskResult, opts: AskOptions, current: bool) -> str:
    """File the answer under the project lock; a wiki current before stays current for ask."""
    project = wiki.project
    with ProjectLock(project.lock_path, wait=opts.wait, on_wait=opts.on_wait):
        cited = [p for p in wiki.shown.pages if p.rel in result.pages]
        citations = Citations(cited, result.dropped_citations, result.cited_by_mention)
        saved = save_answer(project, result.question, result.answer, citations, wiki.shown.pages)
        if current:
            state.set_meta(SAVED_MARK, wiki_mark(project, wiki.schema, result.model))
    return saved


def wiki_mark(project: Project, schema: Schema, mid: str, walked: snapshot.Tree | None = None) -> str:
    """What the build records as "clean" when it leaves the wiki current: its inputs and wiki/
    (as `walked` just now)."""
    return snapshot.clean_mark(project, snapshot.build_inputs(project, mid), walked)


def current_mark(
    project: Project, schema: Schema, mid: str, state: State, walked: snapshot.Tree | None = None
) -> str | None:
    """The wiki's mark (wiki_mark) where it is built from the sources, schema and templates as
    they are now, else None. An answer saved since (a new name in wiki/, which the next build
    will index) does not make the wiki stale."""
    mark = wiki_mark(project, schema, mid, walked)
    return mark if mark in (state.get_meta(Meta.CLEAN), state.get_meta(SAVED_MARK)) else None


def check_wiki(
    project: Project,
    schema: Schema,
    mid: str,
    state: State,
    stale_ok: bool,
    walked: snapshot.Tree | None = None,
) -> str | None:
    """Refuse to answer from a wiki that was never built, or (unless stale_ok) is older than its
    inputs; its mark (current_mark) when it is current."""
    if not (project.wiki_dir / "index.md").is_file():
        raise ProjectError("the wiki has not been built yet (no wiki/index.md); run `wikic build` first")
    mark = current_mark(project, schema, mid, state, walked)
    if mark is None and not stale_ok:
        raise ProjectError(
            "the wiki is out of date: sources/, schema.yaml, the prompts or the files in wiki/ changed "
            "since the last build (or it did not finish cleanly); run `wikic build`, or pass --stale-ok "
            "to ask the wiki as it is"
        )
    return mark


def _wiki_keys(state: State, mark: str, hidden: frozenset[str], make: Callable[[], str]) -> tuple[str, str]:
    """What answer_key reads of a current wiki (`make`: the fingerprint of index.md and of every
    page's key) and of its sources (their hashes as the build recorded them), kept in state.db by
    the wiki's mark and the pages hidden from the model: the same mark is the same wiki/, sources
    and schema, as a no-op build takes it. Over 100,000 pages they are made again only after a
    build or a saved answer, not for every question (0.9 s each)."""
    at = fingerprint([mark, sorted(hidden)])
    kept = (state.get_meta(Meta.ASK_KEYS) or "").split("\t")
    if len(kept) == 3 and kept[0] == at:
        return kept[1], kept[2]
    wiki, sources = make(), fingerprint(sorted(state.source_hashes().items()))
    state.set_meta(Meta.ASK_KEYS, "\t".join([at, wiki, sources]))
    return wiki, sources


def answer_key(
    question: str,
    wiki: str,
    sources: str,
    prompts: Prompts,
    schema: Schema,
    mid: str,
) -> str:
    """Everything an answer depends on: the question, the wiki's text (`wiki`: the fingerprint
    of index.md and of each page's slug, title, type, aliases and plain text's digest,
    index.Indexed.keyed), the source lines its citations point at (`sources`: the fingerprint
    of the sources' hashes), the templates, the model."""
    ask_cfg = schema.ask.model_dump(exclude={"cache_bytes"})
    return "ask:" + fingerprint(
        [
            ANSWER_VERSION,
            question,
            wiki,
            sources,
            prompts.stage_hash("ask"),
            mid,
            schema.model.params(),
            ask_cfg,
            schema.title,
            schema.scope,
        ]
    )


STORED = (
    "answer",
    "pages",
    "dropped_citations",
    "cited_by_mention",
    "prefix_tokens",
    "question_tokens",
    "mode",
    "context_pages",
    "tokens_estimated",
    "sources_shown",
    "unsupported",
)


def _to_store(result: AskResult) -> dict[str, Any]:
    return {k: getattr(result, k) for k in STORED}


def _from_store(question: str, stored: dict[str, Any], on_text: OnText | None) -> AskResult:
    result = AskResult(question, answer_cached=True, **{k: stored[k] for k in STORED if k in stored})
    result.seconds = {"prefix": 0.0, "first_token": 0.0}
    if on_text:
        on_text(result.answer)
    return result


def _ask_model(wiki: _Wiki, question: str, backend: Backend, on_text: OnText | None) -> AskResult:
    if isinstance(backend, PrefixCaching):
        result, ctx = _ask_prefix_cached(wiki, question, backend, on_text)
    else:
        result, ctx = _ask_api(wiki, question, backend, on_text)
    citations = check_citations(result.answer, ctx.pages, wiki.shown.pages)
    result.pages = [p.rel for p in citations.cited]
    result.dropped_citations = citations.dropped
    result.cited_by_mention = citations.by_mention
    result.mode, result.context_pages = ctx.mode, len(ctx.pages)
    result.sources_shown = ctx.sources_shown
    result.unsupported = unsupported(result.answer, ctx.system + "\n" + ctx.user, question)
    return result


def _quote(wiki: _Wiki, question: str, on_text: OnText | None) -> AskResult:
    """The pages' own most relevant sentences, each cited: no model, nothing generated."""
    ranking = rank(question, wiki.shown.pages, wiki.shown.corpus)
    chosen = quoted(ranking.ranked)
    text = quote_answer(chosen) or "The wiki has no sentence that bears on this question."
    if on_text:
        on_text(text)
    pages = list({s.page.slug: s.page for s in chosen}.values())
    result = AskResult(question, text, mode="quote", context_pages=len(pages))
    result.pages = [p.rel for p in pages]
    result.sources_shown = list(dict.fromkeys(line_ref(c) for s in chosen for c in s.cites))
    result.seconds = {"prefix": 0.0, "first_token": 0.0}
    return result


def _builder(wiki: _Wiki, count: Callable[[str], int], limit: int) -> ContextBuilder:
    return ContextBuilder(wiki.shown, count, limit)


def _ask_prefix_cached(
    wiki: _Wiki, question: str, backend: PrefixCaching, on_text: OnText | None
) -> tuple[AskResult, Context]:
    """Counted with the model's tokenizer; the prefix's state restored from .wikic/prefix/ when saved."""
    schema = wiki.schema
    started = time.monotonic()
    count, room = backend.prompt_room(schema.ask.answer_tokens)  # loads the model
    loaded = time.monotonic() - started
    # ask.budget caps the prompt as the model reads it: the chat template's tokens count too
    limit = min(schema.ask.budget - backend.template_tokens(), room)
    ctx = _builder(wiki, count, limit).build(question)
    request = _request(schema, ctx, backend.model_id)
    prefix_dir = wiki.project.state_dir / "prefix"
    run = backend.answer_with_prefix(request, prefix_dir, schema.ask.cache_bytes, on_text)
    result = AskResult(
        question,
        run.text,
        prefix_tokens=run.prefix_tokens,
        prefix_cached=run.prefix_cached,
        question_tokens=run.question_tokens,
        evaluated_tokens=run.evaluated_tokens,
        state_bytes=run.state_bytes,
    )
    result.seconds = {"load": loaded, **run.seconds}
    return result, ctx


def _request(schema: Schema, ctx: Context, mid: str) -> Request:
    """The prefix as the first message, byte-identical for an unchanged wiki, with a cache key."""
    return Request(
        messages=[{"role": "system", "content": ctx.system}, {"role": "user", "content": ctx.user}],
        max_tokens=schema.ask.answer_tokens,
        temperature=schema.model.temperature,
        prefix_messages=1,
        cache_key="wikic-ask-" + fingerprint([mid, ctx.system]),
    )


def estimate_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def _ask_api(
    wiki: _Wiki, question: str, backend: Backend, on_text: OnText | None
) -> tuple[AskResult, Context]:
    """The prefix is the first message, byte-identical for an unchanged wiki, with a cache key."""
    schema = wiki.schema
    limit = min(schema.ask.budget, schema.model.context - schema.ask.answer_tokens - ESTIMATE_OVERHEAD)
    ctx = _builder(wiki, estimate_tokens, limit).build(question)
    request = _request(schema, ctx, backend.model_id)
    started = time.monotonic()
    first: list[float] = []

    def emit(piece: str) -> None:
        if not first:
            first.append(time.monotonic() - started)
        if on_text:
            on_text(piece)

    done = stream_or_complete(backend, request, emit)
    result = AskResult(
        question,
        done.text,
        prefix_tokens=estimate_tokens(ctx.system),
        prefix_cached=done.cached_tokens > 0,
        question_tokens=estimate_tokens(ctx.user),
        cached_tokens=done.cached_tokens,
        tokens_estimated=True,
    )
    result.seconds = {"prefix": None, "first_token": first[0] if first else time.monotonic() - started}
    return result, ctx
