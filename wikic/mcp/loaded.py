"""The wiki as `wikic mcp` serves it: read once per server process (its pages, link
graph and ask's page ranking, indexed), and read again when a stat check sees wiki/
change. Searching and resolving a page name run against what is loaded."""

from __future__ import annotations

import heapq
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rapidfuzz import process

from wikic import snapshot
from wikic.ask.context import TYPE_ORDER
from wikic.ask.passages import sentences
from wikic.ask.rank import BM25
from wikic.ask.select import PageRanker
from wikic.errors import PageError, ProjectError
from wikic.project import Project
from wikic.wiki.blocks import LinkRef
from wikic.wiki.page import Page, parse_links
from wikic.wiki.read import INDEX, Wiki, read_wiki

# A full stat walk of wiki/ takes ~0.2 s at 10,000 pages, more than a search may take. Every call
# stats wiki/ and index.md (what a build's atomic renames, a new page or a deleted one change); an
# edit written in place into an existing page, which neither shows, is seen by the full walk that
# runs when the last one is older than this.
RECHECK_SECONDS = 5.0
SNIPPET_CHARS = 240
BACKLINKS = "linked from"  # the section assemble writes, casefolded as Block.section is
NOT_BUILT = "the wiki has not been built yet (no wiki/index.md); run `wikic build` first"


@dataclass
class Hit:
    page: Page
    score: float
    snippet: str


@dataclass
class Loaded:
    """One reading of wiki/: the pages ask ranks (in ask's order), the link graph, the ranking."""

    wiki: Wiki
    pages: list[Page]
    ranker: PageRanker
    linkers: dict[str, set[str]]  # slug -> backlink candidates (link_graph)

    @classmethod
    def read(cls, project: Project) -> Loaded:
        wiki = read_wiki(project.root, project.wiki_dir)
        readable = [p for p in wiki.pages.values() if p.read_error is None]
        pages = sorted(readable, key=lambda p: (TYPE_ORDER.get(p.type, 0), p.slug))
        return cls(wiki, pages, PageRanker(pages), link_graph(wiki))

    def search(self, query: str, limit: int) -> list[Hit]:
        """The pages as `wikic ask` ranks them for `query` (ask.select.page_scores), best first,
        each with its sentence that best matches the query."""
        scores = self.ranker.scores(query)
        hits = [i for i, s in enumerate(scores) if s > 0]
        best = heapq.nsmallest(limit, hits, key=lambda i: (-scores[i], i))
        return [Hit(self.pages[i], scores[i], snippet(self.pages[i], query)) for i in best]

    def page(self, name: str) -> Page:
        """A page by file name, slug, title or alias, as a [[link]] resolves."""
        slug = self.wiki.resolve(name) if name.strip() else None
        if slug is None:
            raise PageError(f"no page {name!r} in the wiki{self._near(name)}; `search` finds pages by topic")
        return self.wiki.pages[slug]

    def _near(self, name: str) -> str:
        names = [p.title for p in self.pages] + list(self.wiki.pages)
        near = process.extractOne(name, names, score_cutoff=70) if names else None
        return f" (did you mean {near[0]!r}?)" if near else ""

    def backlinks(self, page: Page) -> list[Page]:
        """The other pages whose links (outside their "Linked from" list) resolve to `page`:
        link_graph's candidates, each parsed to confirm (parsing all 10,000 takes seconds)."""
        out = []
        for slug in sorted(self.linkers.get(page.slug, set()) - {page.slug}):
            other = self.wiki.pages[slug]
            if page.slug in (self.wiki.resolve(link.target) for link in own_links(other)):
                out.append(other)
        return sorted(out, key=lambda p: (TYPE_ORDER.get(p.type, 0), p.slug))


def link_graph(wiki: Wiki) -> dict[str, set[str]]:
    """slug -> the pages whose text holds a [[link]] resolving to it, by one regex pass (links in
    code and in "Linked from" lists included): a superset of the links own_links reads."""
    linkers: dict[str, set[str]] = {}
    for slug, page in wiki.pages.items():
        for link in parse_links(page.body):
            target = wiki.resolve(link.target) if link.target else None
            if target is not None:
                linkers.setdefault(target, set()).add(slug)
    return linkers


def own_links(page: Page) -> list[LinkRef]:
    """The page's links outside its "Linked from" list (which names the pages linking to it)."""
    return [link for b in page.blocks if b.section != BACKLINKS for link in b.links if link.target]


def snippet(page: Page, query: str) -> str:
    """The page's sentence that best matches the query (its first when none does), cut short."""
    units = sentences(page)
    if not units:
        text = " ".join(page.plain.split())
    else:
        scores = BM25([s.text for s in units]).scores(query)
        best = max(range(len(units)), key=lambda i: (scores[i], -i))
        text = units[best].text
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


Mark = tuple[int, int, int]


class WikiCache:
    """The loaded wiki of one project, shared by the server's calls (which run in threads)."""

    def __init__(self, project: Project, clock: Callable[[], float] = time.monotonic) -> None:
        self.project = project
        self.clock = clock
        self._lock = threading.Lock()
        self._loaded: Loaded | None = None
        self._quick: Mark | None = None
        self._full: str | None = None
        self._walked = 0.0
        self.loads = 0  # how many times wiki/ was read: once, then once per change

    def get(self) -> Loaded:
        with self._lock:
            quick = self._quick_mark()
            fresh = self.clock() - self._walked < RECHECK_SECONDS
            if self._loaded is not None and quick == self._quick and fresh:
                return self._loaded
            full = snapshot.wiki(self.project).digest()  # before reading: an edit meanwhile shows next time
            self._quick, self._walked = quick, self.clock()
            if self._loaded is None or full != self._full:
                self._loaded, self._full = Loaded.read(self.project), full
                self.loads += 1
            return self._loaded

    def _quick_mark(self) -> Mark:
        try:
            folder = os.stat(self.project.wiki_dir)
            index = os.stat(self.project.wiki_dir / INDEX)
        except OSError:
            raise ProjectError(NOT_BUILT) from None
        return (folder.st_mtime_ns, index.st_mtime_ns, index.st_size)
