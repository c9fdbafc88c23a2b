"""`wikic ask` with the scripted backend: the byte-stable prefix, citations,
the answer cache, --save through build and lint, errors, and over-budget selection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from projects import make_project, run_build, subprocess_env

from wikic.ask.answers import stale_answers
from wikic.ask.runner import AskOptions, ask, estimate_tokens
from wikic.backends.base import Completion, PrefixAnswer, PrefixCaching, Request
from wikic.backends.scripted import ScriptedBackend
from wikic.cli.main import cli
from wikic.config import ModelConfig
from wikic.lock import ProjectLock
from wikic.project import Project
from wikic.wiki.page import split_page


class Recording:
    """The scripted model, keeping every request it is given."""

    def __init__(self) -> None:
        self.inner = ScriptedBackend(ModelConfig(backend="scripted", name="v1"))
        self.model_id = self.inner.model_id
        self.requests: list[Request] = []

    def complete(self, request: Request) -> Completion:
        self.requests.append(request)
        return self.inner.complete(request)


def built(tmp_path: Path, notes: dict[str, str] | None = None) -> Project:
    project = make_project(tmp_path, notes)
    report, _ = run_build(project)
    assert report.ok, report.errors
    return project


def asking(project: Project, question: str, backend: Recording | None = None, **opts: object):  # type: ignore[no-untyped-def]
    backend = backend or Recording()
    return ask(project, question, AskOptions(**opts), backend_factory=lambda schema: backend), backend  # type: ignore[arg-type]


def cli_ask(project: Project, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(project.root), "ask", *args], catch_exceptions=False)


def test_prefix_is_the_first_message_byte_identical_across_questions(tmp_path: Path) -> None:
    project = built(tmp_path)
    first, backend = asking(project, "What is HNSW?")
    asking(project, "Who wrote FAISS?", backend)
    a, b = backend.requests
    assert a.messages[0] == b.messages[0] and a.messages[0]["role"] == "system"
    assert a.prefix_messages == b.prefix_messages == 1
    assert a.cache_key and a.cache_key == b.cache_key
    system = a.messages[0]["content"]
    assert "<index>" in system and '<page title="HNSW">' in system  # the whole wiki fits: every page
    assert "What is HNSW?" in a.messages[1]["content"] and "What is HNSW?" not in system
    assert first.mode == "whole" and first.context_pages == len(list(project.wiki_dir.glob("*.md"))) - 2
    # a changed wiki is a different prefix
    path = project.sources_dir / "tools.md"
    path.write_text(path.read_text() + "\n## Annoy\n\nAnnoy is a tree index from Spotify.\n")
    run_build(project)
    asking(project, "What is HNSW?", backend)
    assert backend.requests[2].messages[0] != system
    assert backend.requests[2].cache_key != a.cache_key


def test_citations_to_existing_pages_are_kept_and_others_dropped(tmp_path: Path) -> None:
    project = built(tmp_path)
    # the scripted model echoes the question, so the answer cites what the question names
    result = cli_ask(project, "--json", "Compare [[HNSW]] with [[FAISS]] and [[Qdrant]]")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pages"] == ["wiki/hnsw.md", "wiki/faiss.md"]
    assert all((project.root / p).is_file() for p in report["pages"])
    assert report["dropped_citations"] == ["Qdrant"]
    for key in ("answer", "prefix_tokens", "prefix_cached", "question_tokens"):
        assert key in report
    assert set(report["seconds"]) >= {"prefix", "first_token", "total"}
    assert report["question_tokens"] < report["prefix_tokens"]


def test_same_question_is_answered_from_the_store_unless_no_cache(tmp_path: Path) -> None:
    project = built(tmp_path)
    log = tmp_path / "calls.jsonl"
    env = subprocess_env(WIKIC_SCRIPTED_LOG=str(log))

    def run(*args: str) -> dict[str, object]:
        out = subprocess.run(
            [sys.executable, "-m", "wikic", "-C", str(project.root), "ask", "--json", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    first = run("What is HNSW?")
    again = run("What  is HNSW?")  # the same question, spaced differently
    fresh = run("--no-cache", "What is HNSW?")
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 2  # the first and the --no-cache ask; the second was answered from the store
    assert first["answer_cached"] is False and fresh["answer_cached"] is False
    assert again["answer_cached"] is True and again["answer"] == first["answer"]
    assert again["pages"] == first["pages"]


def test_an_answer_is_not_reused_once_the_source_lines_its_pages_cite_move(tmp_path: Path) -> None:
    project = built(tmp_path)
    first, _ = asking(project, "What is HNSW?")
    again, _ = asking(project, "What is HNSW?")
    assert first.answer_cached is False and again.answer_cached is True
    source = next(p for p in sorted(project.sources_dir.iterdir()) if "HNSW" in p.read_text())
    lines = source.read_text().split("\n")
    pages = {p.name: p.read_text() for p in project.wiki_dir.glob("*.md") if p.stem not in ("index", "log")}
    source.write_text("\n".join([lines[0], "", *lines[1:]]))  # every line after the title moves down one
    report, _ = run_build(project)
    assert report.ok, report.errors
    moved = [n for n, t in pages.items() if (project.wiki_dir / n).read_text() != t]
    assert moved  # the citations moved; the pages' text, all ask keyed on before, did not
    after, _ = asking(project, "What is HNSW?")
    assert after.answer_cached is False
    # a wiki older than its sources (--stale-ok) may cite other lines than the files hold: not cached
    source.write_text(source.read_text() + "\nHNSW has layers.\n")
    stale = [asking(project, "What is HNSW?", stale_ok=True)[0] for _ in range(2)]
    assert [r.answer_cached for r in stale] == [False, False]


def test_what_an_answers_key_reads_of_the_wiki_is_made_once_per_wiki_as_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fingerprints of index.md, of every page's key and of every source's hash, which every
    answer's key reads, are kept by the wiki's mark: a question over a wiki as a build left it
    reads no source's hash (100,000 of them a question), the same answer found again; a build
    that changes the wiki makes them anew, and an answer asked then is not the old one's."""
    from wikic.state import State

    project = built(tmp_path)
    first, _ = asking(project, "What is HNSW?")
    read: list[int] = []
    hashes = State.source_hashes
    monkeypatch.setattr(State, "source_hashes", lambda self: read.append(1) or hashes(self))
    other, _ = asking(project, "What is FAISS?")
    again, _ = asking(project, "What is HNSW?")
    assert read == [] and not other.answer_cached and again.answer_cached
    source = next(p for p in sorted(project.sources_dir.iterdir()) if "HNSW" in p.read_text())
    source.write_text(source.read_text() + "\nHNSW keeps several layers of links.\n")
    report, _ = run_build(project)
    assert report.ok, report.errors
    after, _ = asking(project, "What is HNSW?")
    assert read == [1] and not after.answer_cached
    stale, _ = asking(project, "What is HNSW?", stale_ok=True)
    assert read == [1] and stale.answer_cached  # current still: the kept ones read


def test_unbuilt_wiki_is_a_clear_error(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    result = cli_ask(project, "--json", "What is HNSW?")
    assert result.exit_code == 2
    assert "not been built" in result.stderr and "wikic build" in result.stderr
    assert json.loads(result.stdout)["exit_code"] == 2


def test_out_of_date_wiki_is_refused_unless_stale_ok(tmp_path: Path) -> None:
    project = built(tmp_path)
    (project.sources_dir / "new.md").write_text("# New\n\n## Annoy\n\nAnnoy is a tree index.\n")
    refused = cli_ask(project, "What is HNSW?")
    assert refused.exit_code == 2
    for words in ("out of date", "wikic build", "--stale-ok"):
        assert words in refused.stderr
    allowed = cli_ask(project, "--stale-ok", "What is HNSW?")
    assert allowed.exit_code == 0 and "Scripted answer" in allowed.stdout


def test_save_files_an_answer_that_build_keeps_lists_and_links(tmp_path: Path) -> None:
    project = built(tmp_path)
    result = cli_ask(project, "--json", "--save", "How does [[HNSW]] work?")
    assert result.exit_code == 0, result.output
    saved = json.loads(result.stdout)["saved"]
    path = project.root / saved
    page = split_page(path.read_text())
    assert page.meta["type"] == "answer" and page.meta["question"] == "How does [[HNSW]] work?"
    assert page.meta["title"] == "How does HNSW work?" and page.meta["cites"] == ["hnsw"]
    assert set(page.meta["cited_hashes"]) == {"hnsw"}
    assert "[[hnsw|HNSW]]" in page.body and "## Question" in page.body
    before = path.read_bytes()
    assert cli_ask(project, "What is FAISS?").exit_code == 0  # a saved answer does not make the wiki stale

    report, backend = run_build(project)
    assert report.ok and backend.requests == []  # a full pass, but every model answer is cached
    assert path.read_bytes() == before  # foreign page: never rewritten or removed
    index = (project.wiki_dir / "index.md").read_text()
    assert "## Answers" in index and f"[[{path.stem}|How does HNSW work?]]" in index
    assert f"[[{path.stem}|" in (project.wiki_dir / "hnsw.md").read_text()  # backlink from the cited page
    assert stale_answers(project) == {}  # the backlink the build added is not a change of content
    assert cli_ask(project, "What is FAISS?").exit_code == 0  # and the wiki counts as current
    report, _ = run_build(project)
    assert report.written == []

    # the cited page changes: the answer is stale, for ask and for lint
    src = project.sources_dir / "vectors.md"
    src.write_text(src.read_text().replace("fast approximate search", "fast approximate search on GPUs"))
    run_build(project)
    assert stale_answers(project) == {saved: ["hnsw"]}
    lint = pytest.importorskip("wikic.lint.runner")
    findings = [f for f in lint.lint(project).findings if f.rule == "stale-page" and f.path == saved]
    assert findings and "hnsw" in findings[0].message


def test_saving_the_same_question_replaces_its_page_not_others(tmp_path: Path) -> None:
    project = built(tmp_path)
    (project.wiki_dir / "what-is-hnsw.md").write_text("---\ntitle: Mine\ntype: concept\n---\n\n# Mine\n")
    run_build(project)  # a hand-made page: the build indexes it
    first = asking(project, "What is HNSW?", save=True)[0].saved
    second = asking(project, "What is HNSW?", save=True, use_cache=False)[0].saved
    assert first == second == "wiki/what-is-hnsw-2.md"
    assert "title: Mine" in (project.wiki_dir / "what-is-hnsw.md").read_text()


def test_save_takes_the_project_lock(tmp_path: Path) -> None:
    project = built(tmp_path)
    with ProjectLock(project.lock_path):
        plain = cli_ask(project, "What is HNSW?")
        assert plain.exit_code == 0  # reading needs no lock
        busy = cli_ask(project, "--save", "--no-wait", "What is HNSW?")
        assert busy.exit_code == 1 and "another wikic process" in busy.stderr
    assert not list(project.wiki_dir.glob("what-is-hnsw*.md"))


_ANIMALS = (
    "aardvark badger beaver bison camel cheetah coyote dingo donkey eland ferret gazelle gecko "
    "gerbil "
    "gibbon gopher hamster hyena ibex iguana jackal jaguar koala lemur leopard llama lynx marmot "
    "meerkat mink moose narwhal ocelot okapi otter panda puma quokka rabbit raccoon"
)
ANIMALS = _ANIMALS.split()


def large_notes() -> dict[str, str]:
    notes = {}
    for i, animal in enumerate(ANIMALS):
        name = animal.capitalize()
        notes[f"{animal}.md"] = (
            f"# Field notes {i}\n\nThese notes describe one animal of the survey.\n\n## {name}\n\n"
            f"The {animal} lives in region {i} and eats plants number {i * 7}.\n"
            f"Observers counted {i * 13} {animal} nests along the river in spring.\n"
            f"The {animal} population is stable according to the survey team.\n"
        )
    return notes


def test_over_budget_keeps_index_in_the_prefix_and_selects_relevant_pages(tmp_path: Path) -> None:
    project = built(tmp_path, large_notes())
    budget = 1500
    schema = project.schema_path.read_text() + f"ask:\n  budget: {budget}\n"
    project.schema_path.write_text(schema)
    run_build(project)  # schema.yaml changed: a no-call build makes the wiki current again
    whole = sum(estimate_tokens(p.read_text()) for p in project.wiki_dir.glob("*.md"))
    assert whole > 3 * budget

    first, backend = asking(project, "How many marmot nests did observers count?")
    second, _ = asking(project, "What does the okapi eat?", backend)
    a, b = backend.requests
    assert first.mode == "selected" and second.mode == "selected"
    assert a.messages[0] == b.messages[0] and a.cache_key == b.cache_key  # the index prefix stays cached
    system = a.messages[0]["content"]
    assert "<index>" in system and "<page " not in system and "[[marmot|Marmot]]" not in system
    assert "Marmot" in system  # the index lists every page (as plain text)
    assert "\n## Marmot\n" in a.messages[1]["content"]
    assert "\n## Okapi\n" in b.messages[1]["content"]
    assert "\n## Okapi\n" not in a.messages[1]["content"]
    for request in (a, b):
        used = sum(estimate_tokens(m["content"]) for m in request.messages)
        assert used <= budget
    assert 1 <= first.context_pages < len(ANIMALS)


def test_question_too_long_for_the_budget_is_a_usage_error(tmp_path: Path) -> None:
    project = built(tmp_path)
    project.schema_path.write_text(project.schema_path.read_text() + "ask:\n  budget: 256\n")
    run_build(project)
    result = cli_ask(project, "why " * 2000)
    assert result.exit_code in (1, 2) and "Traceback" not in result.output


def test_ask_from_a_subfolder_finds_the_project(tmp_path: Path) -> None:
    project = built(tmp_path)
    sub = project.root / "sources"
    out = subprocess.run(
        [sys.executable, "-m", "wikic", "ask", "What is FAISS?"],
        cwd=sub,
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Scripted answer")


def _sse(*events: dict[str, object]) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


def _chunk(text: str | None, finish: str | None = None, usage: object = None) -> dict[str, object]:
    choices = (
        []
        if text is None and finish is None
        else [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}]
    )
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": choices,
        "usage": usage,
    }


def test_api_backend_sends_the_prefix_with_a_cache_key_and_reads_cached_tokens(tmp_path: Path) -> None:
    """The real `openai` client over httpx.MockTransport; the server says how much prompt it had cached."""
    import httpx

    from wikic.backends.openai_compat import OpenAIBackend

    project = built(tmp_path)
    bodies: list[dict[str, object]] = []

    def server(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        cached = 0 if len(bodies) == 1 else 600
        usage = {
            "prompt_tokens": 700,
            "completion_tokens": 3,
            "total_tokens": 703,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        body = _sse(_chunk("See [[HNSW]]."), _chunk(None, "stop"), _chunk(None, usage=usage))
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    cfg = ModelConfig(backend="openai", name="m", base_url="http://test/v1", retries=0)
    backend = OpenAIBackend(cfg, http_client=httpx.Client(transport=httpx.MockTransport(server)))
    factory = lambda schema: backend  # noqa: E731
    first = ask(project, "What is HNSW?", AskOptions(stale_ok=True), backend_factory=factory)
    second = ask(project, "Who uses HNSW?", AskOptions(stale_ok=True), backend_factory=factory)
    a, b = bodies
    assert a["messages"][0] == b["messages"][0]  # type: ignore[index]
    assert a["prompt_cache_key"] == b["prompt_cache_key"]
    assert str(a["prompt_cache_key"]).startswith("wikic-ask-")
    assert first.prefix_cached is False and first.cached_tokens == 0
    assert second.prefix_cached is True and second.cached_tokens == 600
    assert second.pages == ["wiki/hnsw.md"]


def test_citations_outside_the_context_are_dropped_and_plain_mentions_count(tmp_path: Path) -> None:
    from wikic.ask.answers import check_citations
    from wikic.ask.context import load_pages

    project = built(tmp_path)
    pages = load_pages(project.wiki_dir)
    hnsw = [p for p in pages if p.slug == "hnsw"]
    linked = check_citations("See [[HNSW]], [[FAISS]] and [[hnsw|the graph index]].", hnsw, pages)
    assert [p.slug for p in linked.cited] == ["hnsw"] and linked.dropped == ["FAISS"]
    assert not linked.by_mention
    named = check_citations("HNSW is a graph index that FAISS uses.", pages, pages)
    assert named.by_mention and {p.slug for p in named.cited} == {"hnsw", "faiss"}
    assert check_citations("Nothing relevant here.", pages, pages).cited == []


def test_an_answers_names_resolve_as_the_linker_of_every_page_resolves_them() -> None:
    """check_citations and linked_answer make their names' table of the pages an answer may name
    (ask's every page: 100,000 names a question): random answers over pages sharing names and
    aliases, source and topic pages of one title, names whose case folds longer ("Straße",
    "İstanbul"), [[targets]] exact, by file stem, misspelt (the fuzzy match over every name) or
    of no page: the same citations and the same linked text as with the linker of every page."""
    import random
    import re

    from wikic.ask import answers
    from wikic.build.linker import Linker
    from wikic.wiki.page import WIKILINK, Page

    def page(slug: str, title: str, kind: str = "concept", aliases: tuple[str, ...] = ()) -> Page:
        return Page(f"wiki/{slug}.md", "", {"title": title, "type": kind, "aliases": list(aliases)})

    pages = [
        page("hnsw", "HNSW", aliases=("Hierarchical Navigable Small World", "graph index")),
        page("note-hnsw", "HNSW", kind="source"),
        page("faiss", "FAISS", aliases=("Facebook AI Similarity Search",)),
        page("graph", "Graph"),
        page("graph-index", "Graph Index"),
        page("strasse", "Straße", aliases=("Hauptstraße",)),
        page("istanbul", "İstanbul"),
        page("small-world", "Small World", aliases=("small worlds",)),
        page("vector-search", "Vector Search"),
        page("search", "Search", kind="source"),
    ]
    words = [
        "HNSW",
        "hnsw",
        "graph",
        "Graph index",
        "index",
        "FAISS",
        "faiss",
        "Facebook AI Similarity Search",
        "Hierarchical Navigable Small World",
        "small world",
        "Small Worlds",
        "STRASSE",
        "Straße",
        "hauptstraße",
        "İstanbul",
        "istanbul",
        "Vector",
        "vector search",
        "search",
        "is",
        "a",
        "the",
        "uses",
        "and",
        ".",
        ",",
        "[[HNSW]]",
        "[[hnsw|the graph]]",
        "[[Grpah Index]]",
        "[[FAISS]]",
        "[[Vectr Search]]",
        "[[nothing here]]",
        "[[graph-index]]",
        "[[Small World|worlds]]",
        "[s1.md:3](../sources/s1.md#L3)",
    ]

    def reference(text: str, shown: list[Page]) -> tuple[list[str], list[str], bool, str]:
        every = Linker.of_pages([(p.slug, p.title, p.type, p.aliases) for p in pages])
        visible = {p.slug: p for p in shown}
        if not WIKILINK.search(text):
            mentioned: set[str] = set()
            every.autolink(text, "", mentioned)
            cited = [p.slug for p in shown if p.slug in mentioned]
            linked = set(every.titles) - set(cited)
            return cited, [], bool(cited), every.autolink(text.strip(), "", linked) if cited else text.strip()
        cited, dropped = [], []
        for m in WIKILINK.finditer(text):
            name = m.group(1).strip()
            slug = every.resolve(name) if name else None
            if slug in visible:
                cited += [] if slug in cited else [slug]
            elif name and name not in dropped:
                dropped.append(name)

        def repl(m: re.Match[str]) -> str:
            slug = every.resolve(m.group(1).strip()) if m.group(1).strip() else None
            return (
                f"[[{slug}|{(m.group(3) or m.group(1)).strip()}]]"
                if slug in cited
                else (m.group(3) or m.group(1)).strip()
            )

        return cited, dropped, False, WIKILINK.sub(repl, text.strip())

    rng = random.Random(17)
    for _ in range(400):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 14)))
        shown = rng.sample(pages, rng.randint(1, len(pages)))
        got = answers.check_citations(text, shown, pages)
        cited, dropped, by_mention, linked = reference(text, shown)
        assert ([p.slug for p in got.cited], got.dropped, got.by_mention) == (cited, dropped, by_mention), (
            text
        )
        assert answers.linked_answer(text.strip(), got, pages) == linked, text
    exact = answers._Names("See [[HNSW]] and [[facebook ai similarity search|it]].", pages)
    assert [exact.resolve("HNSW"), exact.resolve("facebook ai similarity search")] == ["hnsw", "faiss"]
    assert exact._all is None  # a [[target]] that names a page: no table of every name made


def test_bm25_ranks_the_page_that_names_the_rare_term_first() -> None:
    from wikic.ask.rank import BM25

    docs = [
        "observers counted nests of the marmot",
        "observers counted nests of the okapi",
        "observers counted nests of the tapir",
    ]
    scores = BM25(docs).scores("How many marmot nests were counted?")
    assert scores[0] > scores[1] == scores[2] > 0


def test_a_small_budget_still_leaves_room_for_pages(tmp_path: Path) -> None:
    """The index is trimmed (descriptions first, then lines) to leave the question's pages room."""
    project = built(tmp_path, large_notes())
    project.schema_path.write_text(project.schema_path.read_text() + "ask:\n  budget: 600\n")
    run_build(project)
    first, backend = asking(project, "How many marmot nests did observers count?")
    second, _ = asking(project, "What does the okapi eat?", backend)
    a, b = backend.requests
    assert first.mode == "selected" and first.context_pages >= 1
    assert "\n## Marmot\n" in a.messages[1]["content"]
    assert a.messages[0] == b.messages[0]  # the trimmed index is the same prefix for every question
    for request in (a, b):
        assert sum(estimate_tokens(m["content"]) for m in request.messages) <= 600


OnText = Callable[[str], None]


class PrefixRecording(Recording):
    """The scripted model behind the prefix-caching interface, keeping what it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.prefix_calls: list[tuple[Request, Path | None, int]] = []

    def prompt_room(self, answer_tokens: int) -> tuple[Callable[[str], int], int]:
        return estimate_tokens, 100_000 - answer_tokens

    def template_tokens(self) -> int:
        return 0

    def answer_with_prefix(
        self,
        request: Request,
        cache_dir: Path | None,
        cache_bytes: int,
        on_text: Callable[[str], None] | None,
    ) -> PrefixAnswer:
        self.prefix_calls.append((request, cache_dir, cache_bytes))
        done = self.inner.complete(request)
        if on_text:
            on_text(done.text)
        return PrefixAnswer(
            done.text, prefix_tokens=11, question_tokens=3, prefix_cached=len(self.prefix_calls) > 1
        )


def test_a_prefix_caching_backend_gets_the_prefix_and_the_cache_folder(tmp_path: Path) -> None:
    project = built(tmp_path)
    backend = PrefixRecording()
    assert isinstance(backend, PrefixCaching) and not isinstance(Recording(), PrefixCaching)
    assert not isinstance(backend.inner, PrefixCaching)  # the scripted backend is one method
    first, _ = asking(project, "What is HNSW?", backend)
    second, _ = asking(project, "Who wrote FAISS?", backend)
    assert backend.requests == [] and len(backend.prefix_calls) == 2  # never the plain path
    (a, folder, size), (b, _, _) = backend.prefix_calls
    assert a.prefix_messages == 1 and a.messages[0] == b.messages[0] and a.messages[0]["role"] == "system"
    assert folder == project.state_dir / "prefix" and size > 0
    assert (first.prefix_tokens, first.prefix_cached, second.prefix_cached) == (11, False, True)
    assert not first.tokens_estimated and "What is HNSW?" in first.answer
