"""What the viewer and the static site show, read once: the wiki and its link graph, the
sources a citation may open, the lint findings per page; and where each view lives (the
one URL layout that `wikic serve` and `wikic site` share, so links are relative in both)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from wikic.project import Project
from wikic.wiki.page import Page, parse_citations
from wikic.wiki.read import PageStats, Wiki, read_wiki

if TYPE_CHECKING:
    from wikic.config import Schema
    from wikic.lint.context import Finding
    from wikic.lint.runner import LintResult
    from wikic.sources.scan import SourceFile

HOME = "index.html"
SAFE_URL = re.compile(r"[A-Za-z0-9._/-]*")  # nothing to quote: most slugs and source names
VIEWS = ("search.html", "graph.html", "health.html")


def page_path(slug: str) -> str:
    return f"p/{slug}.html"


def source_path(source: str) -> str:
    """sources/a/b.md -> s/a/b.md.html"""
    return f"s/{source.removeprefix('sources/')}.html"


def href(from_path: str, to_path: str) -> str:
    """A relative, URL-quoted link from one view to another (works from file:// and any host)."""
    here, there = from_path.rpartition("/")[0], to_path.rpartition("/")[0]
    rel = to_path.rpartition("/")[2] if here == there else root_of(from_path) + to_path
    fragment = ""
    if "#" in rel:
        rel, fragment = rel.split("#", 1)
        fragment = "#" + fragment
    return (rel if SAFE_URL.fullmatch(rel) else quote(rel)) + fragment


def root_of(path: str) -> str:
    """The prefix that leads from a view back to the site's root: "", "../", ..."""
    return "../" * path.count("/")


# Backlinks asked of more pages than this are made for every page at once: one page's take a
# pass over every page's links, a tenth to a fifth of the pass that makes them all.
MANY = 4


class Links(Mapping[str, set[str]]):
    """slug -> the pages it links to (forward) or that link to it (backward), from what each
    page's link targets resolve to, none to itself. A page's are made when first asked: a
    re-export asks for a few pages', not 10,000 (one pass over the links per page asked);
    backlinks asked of many pages are made for every page in one pass."""

    def __init__(self, resolved: dict[str, list[str | None]], backward: bool) -> None:
        self._resolved, self._backward = resolved, backward
        self._found: dict[str, set[str]] = {}
        self._complete = False

    def __getitem__(self, slug: str) -> set[str]:
        found = self._found.get(slug)
        if found is not None:
            return found
        if slug not in self._resolved:
            raise KeyError(slug)
        if not self._backward:
            found = {s for s in self._resolved[slug] if s is not None and s != slug}
        elif len(self._found) < MANY:
            found = {s for s, res in self._resolved.items() if slug in res and s != slug}
        else:
            return self._every()[slug]
        self._found[slug] = found
        return found

    def _every(self) -> dict[str, set[str]]:
        if not self._complete:
            back: dict[str, set[str]] = {slug: set() for slug in self._resolved}
            for slug, res in self._resolved.items():
                for target in res:
                    if target is not None and target != slug and target in back:
                        back[target].add(slug)
            self._found, self._complete = back, True
        return self._found

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved)

    def __len__(self) -> int:
        return len(self._resolved)


@dataclass
class Model:
    project: Project
    wiki: Wiki
    title: str
    sources: dict[str, SourceFile]  # sources/x.md -> the file; only these are ever served
    findings: dict[str, list[Finding]] | None  # wiki/x.md -> lint findings; None: lint not run
    linting: bool = False  # lint is running for this model (the server lints in the background)
    targets: dict[str, list[str]] = field(default_factory=dict)  # slug -> its [[link]] targets
    resolved: dict[str, list[str | None]] = field(
        default_factory=dict
    )  # slug -> what each target resolves to
    cites: dict[str, list[str]] = field(default_factory=dict)  # slug -> the source of each citation
    schema: Schema | None = None  # schema.yaml as the model was loaded with it
    counted: tuple[int, int] | None = None  # (citations, those whose source exists), once counted
    outbound: Links = field(init=False)  # slug -> the pages it links to
    inbound: Links = field(init=False)  # slug -> the pages that link to it

    def __post_init__(self) -> None:
        # A page's targets come from the wikilink pattern over its text where that gives lint's
        # answer (Page.link_targets): many times faster than lint's block-by-block reading, and what
        # a 10,000-page wiki needs to open in seconds.
        # `targets`, `cites` and `resolved` may come filled (the site's manifest, for pages it did
        # not read; `resolved` only while no page's names changed, so each target still resolves
        # to the page it did).
        resolve = self.wiki.resolve
        pages, targets, resolved = self.wiki.pages, self.targets, self.resolved
        for slug in pages.keys() - targets.keys():
            targets[slug] = pages[slug].link_targets()
        for slug in pages.keys() - resolved.keys():
            resolved[slug] = [resolve(t) for t in targets[slug]]
        self.outbound, self.inbound = Links(resolved, False), Links(resolved, True)

    @cached_property
    def fed(self) -> dict[str, list[str]]:
        """source path -> the slugs of the pages it feeds (made when first asked: a re-export
        that changed no page's sources does not)."""
        fed = defaultdict[str, list[str]](list)
        for slug, page in self.wiki.pages.items():
            for source in page.sources:
                fed[source].append(slug)
        return dict(fed)

    @classmethod
    def load(
        cls,
        project: Project,
        lint: bool = True,
        wiki: Wiki | None = None,
        targets: dict[str, list[str]] | None = None,
        cites: dict[str, list[str]] | None = None,
        resolved: dict[str, list[str | None]] | None = None,
    ) -> Model:
        """`wiki`, `targets`, `cites`, `resolved`: what the caller already knows (the site's
        manifest)."""
        from wikic.config import load_schema
        from wikic.sources.scan import list_sources

        schema = load_schema(project.schema_path)
        files, _ = list_sources(project.root, schema.sources)
        wiki = wiki or read_wiki(project.root, project.wiki_dir)
        findings = lint_findings(project) if lint else None
        sources = {f.path: f for f in files}
        return cls(
            project,
            wiki,
            schema.title,
            sources,
            findings,
            targets=targets or {},
            cites=cites or {},
            resolved=resolved or {},
            schema=schema,
        )

    def cited(self, page: Page) -> list[str]:
        """The source path of each of the page's citations (the regex: no block parse)."""
        if page.slug not in self.cites:
            self.cites[page.slug] = self.cites_of(page)
        return self.cites[page.slug]

    def citations(self) -> tuple[int, int]:
        """How many citations the pages hold, and how many of them name a source there is:
        counted once per model (the site's health key and its view both ask)."""
        if self.counted is None:
            pages, cites = self.wiki.pages, self.cites
            for slug in pages.keys() - cites.keys():  # the pages read: their citations, once
                self.cited(pages[slug])
            by_source = Counter(chain.from_iterable(cites[slug] for slug in pages))
            resolving = sum(n for source, n in by_source.items() if source in self.sources)
            self.counted = (by_source.total(), resolving)
        return self.counted

    @staticmethod
    def cites_of(page: Page) -> list[str]:
        return [citation.source for citation, _ in parse_citations(page.body)]

    def page(self, slug: str) -> Page | None:
        return self.wiki.pages.get(slug)

    def resolve(self, target: str) -> Page | None:
        slug = self.wiki.resolve(target)
        return self.wiki.pages.get(slug) if slug else None

    def page_findings(self, rel: str) -> list[Finding]:
        return (self.findings or {}).get(rel, [])

    def ordered_pages(self) -> list[Page]:
        return sorted(
            self.wiki.pages.values(), key=lambda p: (p.type == "source", p.type, p.title.casefold())
        )


def lint_findings(
    project: Project,
    store: bool = False,
    wiki_stats: PageStats | None = None,
    schema: Schema | None = None,
) -> dict[str, list[Finding]]:
    """`wikic lint`'s findings (the deterministic rules), by page: from the findings that the
    build's closing lint keeps per page in the state, with only what changed since checked
    again (lint/cache.py); all of the wiki linted where there is no state. `store` (`wikic
    site`): keep what was checked, under the project lock; when a build holds it, or for
    `wikic serve`, which never writes the project, the cache is only read. `wiki_stats`:
    wiki/ by stat, and `schema`, when the caller has just read them."""
    by_path: dict[str, list[Finding]] = {}
    for finding in _lint(project, store, wiki_stats, schema).findings:
        by_path.setdefault(finding.path, []).append(finding)
    return by_path


def _lint(project: Project, store: bool, wiki_stats: PageStats | None, schema: Schema | None) -> LintResult:
    from wikic.errors import LockError
    from wikic.lint.runner import lint, lint_cached
    from wikic.lock import ProjectLock
    from wikic.state import State

    if not project.state_path.is_file():
        return lint(project, schema=schema)  # never built: no cache, and none is made here
    if store:
        try:
            with ProjectLock(project.lock_path, wait=False), State.open(project.state_path) as state:
                return lint_cached(project, state, schema, wiki_stats=wiki_stats, keep_counts=True)
        except LockError:
            pass  # a build is running: read what it stored so far, store nothing
    peeked = State.peek(project.state_path)
    if peeked is None:  # another wikic's state format: lint reads around it
        return lint(project, schema=schema)
    with peeked as state:
        return lint_cached(project, state, schema, store=False, wiki_stats=wiki_stats)


def read_source_lines(file: SourceFile) -> list[str]:
    """A source's lines as citations number them (the build's own normalisation)."""
    from wikic.errors import SourceError
    from wikic.sources.extract import store_dir
    from wikic.sources.read import read_source

    root = file.abspath.parents[len(file.path.split("/")) - 1]  # file.path: sources/...
    try:  # a PDF, DOCX, ... as its extracted text (from the build's store)
        return read_source(file, max_bytes=64 * 1024 * 1024, store=store_dir(root)).lines
    except SourceError as exc:
        return [f"(wikic cannot show this source: {exc})"]


def is_within(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True
