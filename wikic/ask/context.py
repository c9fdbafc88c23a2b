"""What `ask` shows the model: the wiki's pages read from disk (page.Page, their
plain text), the byte-stable prefix (instructions, index.md, then every page in a fixed
order), and, when the wiki is over the token budget, the sentences most relevant to the
question after it (select.py), with the source lines they cite where room is left."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wikic.ask.passages import Sentence
from wikic.ask.select import Corpus, group, pack, rank, relevance_floor
from wikic.errors import UsageError, WikicError
from wikic.privacy.redact import NONE, Redactor
from wikic.prompts.loader import Prompts
from wikic.sources.extract import store_dir
from wikic.sources.read import source_text
from wikic.wiki.page import COMMENT, Citation, Page, plain_links, split_page

BOOKKEEPING = {"index", "log"}
# The index (titles only, compact) goes in the prefix of an over-budget wiki only while it takes at
# most this share of the budget: every token of it is a token less for the question's evidence, and
# selection brings the opening sentence of each page it picks, which is what an index line says.
INDEX_SHARE = 0.25
TYPE_ORDER = {"source": 1, "answer": 2}  # topic pages first, then sources, then answers
MARGIN = 4  # tokens: sentences costed alone may tokenise a little differently beside others
SOURCE_LINES = 6  # at most this many lines of one citation are shown
CHARS_PER_TOKEN = 8  # more than any tokenizer's average on prose (about 4): a safe cut for the fit check

Counter = Callable[[str], int]
WORD = re.compile(r"\w+")
# A cited source line whose words are at least this share in the sentences shown repeats them
# (pages compiled from plain text often carry their source's sentence verbatim): not shown twice.
REPEAT = 0.9


def load_pages(wiki_dir: Path) -> list[Page]:
    """Every page in wiki/ (not index.md or log.md), in the prefix's fixed order."""
    pages = []
    for path in sorted(wiki_dir.glob("*.md")):
        if path.stem in BOOKKEEPING:
            continue
        try:
            pages.append(split_page(path.read_text(encoding="utf-8"), f"wiki/{path.name}"))
        except (OSError, UnicodeDecodeError):
            continue  # unreadable pages are lint's business, not a reason to refuse answering
    return sorted(pages, key=lambda p: (TYPE_ORDER.get(p.type, 0), p.slug))


def read_index(wiki_dir: Path, hidden: frozenset[str] = frozenset()) -> str:
    """index.md as the model reads it; without the lines of `hidden` pages (their slugs)."""
    text = COMMENT.sub("", (wiki_dir / "index.md").read_text(encoding="utf-8"))
    if hidden:
        text = "\n".join(line for line in text.split("\n") if not _links_to(line, hidden))
    return plain_links(text).strip()


def _links_to(line: str, slugs: frozenset[str]) -> bool:
    return any(f"[[{slug}|" in line or f"[[{slug}]]" in line for slug in slugs)


@dataclass
class Context:
    """The two messages of one question: `system` is the cached prefix."""

    system: str
    user: str
    in_prefix: list[Page]
    selected: list[Page]  # over budget: pages whose sentences were chosen for this question, in `user`
    mode: str = "whole"  # the whole wiki in the prefix, or "selected": index.md there, chosen pages after
    sentences: list[Sentence] = field(default_factory=list)  # "selected": the sentences shown, best first
    sources_shown: list[str] = field(default_factory=list)  # source lines shown, "sources/x.md:3-4"

    @property
    def pages(self) -> list[Page]:
        return self.in_prefix + self.selected


def template_page(page: Page) -> dict[str, str]:
    """A page as ask's templates (and a project's own prompts/ask.*.j2) see it: `page.title`
    and `page.text`, its plain text."""
    return {"title": page.title, "text": page.plain}


@dataclass
class AskWiki:
    """The built wiki as ask shows it: the templates, the wiki's title and scope, index.md, the pages."""

    prompts: Prompts
    title: str
    scope: str
    index: str
    pages: list[Page]
    root: Path | None = None  # the project, for the source lines pages cite; None: none shown
    redactor: Redactor = NONE  # privacy.redact, as the build applied it to the lines pages cite
    corpus: Corpus | None = None  # the pages' own, where already made (ask/index.py); else made here
    read: Callable[[list[Page]], None] = lambda pages: None  # their text read where not yet (ask/index.py)


def compact_index(index: str) -> str:
    """index.md as one line of titles per section: "Concepts: HNSW, FAISS"."""
    out: list[tuple[str, list[str]]] = []
    for line in index.splitlines():
        if line.startswith("## "):
            out.append((line[3:].strip(), []))
        elif line.startswith("- ") and out:
            out[-1][1].append(line[2:].split(" — ", 1)[0].strip())
    return "\n".join(f"{section}: {', '.join(titles)}" for section, titles in out if titles)


def opening_titles(index: str, chars: int) -> str:
    """compact_index of the index's first lines, more than `chars` characters of it where the
    whole gives as many: a beginning of compact_index(index) (a section's titles so far are a
    beginning of its line, a section with none yet comes after them), read from as few of a
    large index's lines as that takes (100,000 pages' index: 18 MB)."""
    size = 4 * chars + 1
    while True:
        cut = index.find("\n", size)
        if cut < 0:
            return compact_index(index)
        titles = compact_index(index[: cut + 1])
        if len(titles) > chars:
            return titles
        size *= 2


@dataclass(frozen=True)
class Shown:
    """Source lines shown to the model: `file` project-relative, `lines` as "3-4"."""

    file: str
    lines: str
    text: str

    @property
    def ref(self) -> str:
        return f"{self.file}:{self.lines}"


class ContextBuilder:
    """Renders ask's templates and fits them into a token budget."""

    def __init__(self, wiki: AskWiki, count: Counter, limit: int) -> None:
        self.prompts, self.title, self.scope = wiki.prompts, wiki.title, wiki.scope
        self.index, self.pages, self.count, self.limit = wiki.index, wiki.pages, count, limit
        self.root, self.redactor = wiki.root, wiki.redactor
        self._lines: dict[Path, list[str] | None] = {}
        self._fits: bool | None = None  # whether the whole wiki fits: the same for every question
        self._corpus = wiki.corpus if wiki.corpus is not None and wiki.corpus.pages is wiki.pages else None
        self._read_pages = wiki.read
        self._heads: dict[str, int] = {}

    def render(
        self,
        question: str,
        prefix_pages: list[Page],
        extra: list[dict[str, str]],
        index: str | None = None,
        sources: list[Shown] | None = None,
    ) -> tuple[str, str]:
        system, user = self.prompts.render(
            "ask",
            title=self.title,
            scope=self.scope,
            index=self.index if index is None else index,
            pages=[template_page(p) for p in prefix_pages],
            extra_pages=extra,
            sources=[{"file": s.file, "lines": s.lines, "text": s.text} for s in sources or []],
            question=question,
        )
        return system["content"], user["content"]

    def build(self, question: str) -> Context:
        """The whole wiki in the prefix when it fits; else the prefix without pages and the
        question's sentences after it, then the source lines they cite as room allows."""
        if self._whole_fits(question):
            self._read_pages(self.pages)
            system, user = self.render(question, self.pages, [])
            if self.count(system) + self.count(user) <= self.limit:
                return Context(system, user, list(self.pages), [])
        system, index = self.index_prefix(question)
        room = self.limit - self.count(system)
        empty = self.count(self.render(question, [], [], index)[1])
        self._corpus = self._corpus or Corpus(self.pages)
        ranking = rank(question, self.pages, self._corpus, relevance_floor(self.limit))
        chosen = pack(ranking, self.count, room - empty - MARGIN, self._header)
        extra = self._extra(chosen)
        used = self.count(self.render(question, [], extra, index)[1])
        sources = self._sources(chosen, room - used - MARGIN)
        user = self.render(question, [], extra, index, sources)[1]
        while (sources or chosen) and self.count(user) > room:
            if sources:
                sources.pop()
            else:
                chosen.pop()
                extra = self._extra(chosen)
            user = self.render(question, [], extra, index, sources)[1]
        self._check(self.count(system) + self.count(user))
        pages = list({s.page.slug: s.page for s in chosen}.values())
        return Context(system, user, [], pages, "selected", chosen, [s.ref for s in sources])

    def _whole_fits(self, question: str) -> bool:
        """Whether the prefix with every page can fit, decided once: no tokenizer needs the
        whole of a large wiki to see that its first CHARS_PER_TOKEN x limit characters
        already take more than the limit."""
        if self._fits is None:
            window = self.limit * CHARS_PER_TOKEN
            self._fits = self.count(self._opening(question, window)[:window]) <= self.limit
        return self._fits

    def _opening(self, question: str, chars: int) -> str:
        """The system message with every page, or, where the shipped template makes it (the
        pages last, in order), its first pages' part that holds `chars` characters: that
        begins as the whole does, and needs no other page's text read."""
        if not self.prompts.shipped("ask.system.j2"):
            self._read_pages(self.pages)
            return self.render(question, self.pages, [])[0]
        shown = 0
        while True:
            self._read_pages(self.pages[:shown])
            system = self.render(question, self.pages[:shown], [])[0]
            if len(system) >= chars or shown == len(self.pages):
                return system
            shown = min(len(self.pages), max(1, 2 * shown))

    def _check(self, need: int) -> None:
        if need > self.limit:
            raise UsageError(
                f"the question with the wiki's instructions and index takes {need} tokens, more than the "
                f"{self.limit} that ask.budget and the model's context allow; shorten the question "
                "or raise ask.budget (and model.context) in schema.yaml"
            )

    def _header(self, page: Page) -> int:
        """The tokens a page's title markup adds to the user message, measured on the template
        itself (a project's own prompts/ask.user.j2 included), once per title."""
        if page.title not in self._heads:
            other = {"title": "", "text": ""}
            one = self.render("", [], [other], "")[1]
            two = self.render("", [], [other, {"title": page.title, "text": ""}], "")[1]
            self._heads[page.title] = max(0, self.count(two) - self.count(one))
        return self._heads[page.title]

    def _extra(self, chosen: list[Sentence]) -> list[dict[str, str]]:
        return [{"title": page.title, "text": text} for page, text in group(chosen)]

    def index_prefix(self, question: str) -> tuple[str, str]:
        """The instructions, and the index as titles only while it takes at most INDEX_SHARE of
        the budget. This does not depend on the question, so the prefix stays byte-stable
        (and cached) across questions. A long index is seen not to fit from its first
        CHARS_PER_TOKEN characters a token of its share (opening_titles), as _whole_fits sees
        the wiki's: the embedded model's tokenizer took 0.5 s a question over 10,000 pages'
        titles."""
        share = self.limit * INDEX_SHARE
        window = int(share * CHARS_PER_TOKEN)
        opening = opening_titles(self.index, window)
        index = ""
        if len(opening) <= window or self.count(opening[:window]) <= share:
            titles = compact_index(self.index)
            index = titles if self.count(titles) <= share else ""
        return self.render(question, [], [], index)[0], index

    def _sources(self, chosen: list[Sentence], room: int) -> list[Shown]:
        """The lines the chosen sentences cite, best sentence first, while they fit the room;
        not those that only repeat the sentences shown."""
        out: list[Shown] = []
        seen: set[Citation] = set()
        known = {w for s in chosen for w in WORD.findall(s.text.casefold())}
        used = self.count(self.render("", [], [], "", [])[1]) if room > 0 else 0
        base = used
        for s in chosen:
            for cite in s.cites:
                shown = None if cite in seen else self._read(cite)
                seen.add(cite)
                if shown is None or _repeats(shown.text, known):
                    continue
                cost = self.count(self.render("", [], [], "", [shown])[1]) - base + 1
                if used - base + cost <= room:
                    out.append(shown)
                    used += cost
        return out

    def _read(self, cite: Citation) -> Shown | None:
        """A citation's lines (at most SOURCE_LINES) from sources/, or None when unreadable."""
        if self.root is None:
            return None
        sources = (self.root / "sources").resolve()
        path = (self.root / cite.source).resolve()
        if not path.is_relative_to(sources):
            return None  # a page cannot make ask read outside sources/
        lines = self._source_lines(self.root, cite.source, path)
        if lines is None:
            return None
        end = min(cite.end, cite.start + SOURCE_LINES - 1, len(lines))
        if cite.start < 1 or end < cite.start:
            return None
        text = "\n".join(lines[cite.start - 1 : end]).strip()
        span = f"{cite.start}" if end == cite.start else f"{cite.start}-{end}"
        return Shown(cite.source, span, text) if text else None

    def _source_lines(self, root: Path, rel: str, path: Path) -> list[str] | None:
        """A source's lines, redacted as the build redacted them; read once per question."""
        if path not in self._lines:
            try:  # a PDF, DOCX, ... as its extracted text, whose lines the citations count
                lines = source_text(rel, path.read_bytes(), store_dir(root)).text.splitlines()
            except (OSError, WikicError):
                lines = None
            self._lines[path] = None if lines is None else self.redactor.lines(lines)
        return self._lines[path]


def _repeats(text: str, known: set[str]) -> bool:
    """Whether at least REPEAT of the words of `text` are among `known`."""
    words = WORD.findall(text.casefold())
    return sum(w in known for w in words) >= REPEAT * len(words)
