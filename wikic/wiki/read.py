"""Reading a built wiki/ into pages (page.Page) and the link graph between them:
how names resolve to pages, and which pages link to which. Read-only; lint reads
the wiki through it."""

from __future__ import annotations

import gc
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from wikic.errors import OUT_OF_FILES
from wikic.fsutil import TMP_MARK
from wikic.hashing import bytes_hash
from wikic.snapshot import KIND, Tree
from wikic.wiki.page import Page, split_page, unreadable_page

INDEX = "index.md"
LOG = "log.md"
ATTACHMENT = re.compile(
    r"\.(png|jpe?g|gif|svg|webp|bmp|pdf|mp3|mp4|webm|ogg|wav|m4a|mov|canvas|excalidraw|csv|json|txt)$", re.I
)


def resolve_target(target: str, slugs: Mapping[str, str], names: Mapping[str, str]) -> str | None:
    """A link target to a page slug: file stem first (as Obsidian does), then title or alias;
    `slugs` and `names` casefolded -> slug (Wiki's, or assemble's for the build's backlinks)."""
    key = target.strip().removesuffix(".md").rsplit("/", 1)[-1].casefold()
    return slugs[key] if key in slugs else names.get(target.strip().casefold())


def name_table(named: Iterable[tuple[str, str, str, Iterable[str]]]) -> dict[str, str]:
    """Casefolded title or alias -> slug, from each page's (slug, type, title, aliases): topic
    pages win a shared name over source pages, as in assemble."""
    names: dict[str, str] = {}
    for slug, _, title, aliases in sorted(named, key=lambda n: (n[1] == "source", n[0])):
        for name in [title, *aliases]:
            names.setdefault(name.casefold().strip(), slug)
    return names


class Resolver:
    """How a wiki's link targets resolve (Wiki's, and lint.names.Names' without the pages):
    `_slugs` (casefolded slug -> slug), `names` (casefolded title or alias -> slug), `files`
    (the attachments' casefolded names); targets resolved once each (`_resolved`)."""

    names: dict[str, str]
    files: set[str]
    _slugs: Mapping[str, str]
    _resolved: dict[str, str | None]

    def resolve(self, target: str) -> str | None:
        """A link target to a page slug: file stem first (as Obsidian does), then title or alias."""
        if target not in self._resolved:
            self._resolved[target] = resolve_target(target, self._slugs, self.names)
        return self._resolved[target]

    def is_file(self, target: str) -> bool:
        """A link to an attachment that exists, like ![[diagram.png]] (not a page)."""
        name = target.strip().rsplit("/", 1)[-1].casefold()
        return not name.endswith(".md") and name in self.files

    def outlinks(self, page: Page) -> set[str]:
        """The slugs the page links to."""
        found = {self.resolve(link.target) for link in page.links if link.target}
        return {slug for slug in found if slug is not None}


@dataclass
class Wiki(Resolver):
    """Every page of wiki/ (index.md and log.md apart) and how names resolve to pages."""

    root: Path
    pages: dict[str, Page]  # slug -> page
    index: Page | None = None
    files: set[str] = field(default_factory=set)  # casefolded names of the other files (attachments)
    names: dict[str, str] = field(default_factory=dict)  # casefolded title or alias -> slug
    _slugs: dict[str, str] = field(default_factory=dict)  # casefolded slug -> slug
    _resolved: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._slugs = {slug.casefold(): slug for slug in self.pages}
        named = ((p.slug, p.type, p.title, p.aliases) for p in self.pages.values())
        for name, slug in name_table(named).items():
            self.names.setdefault(name, slug)

    def inbound(self) -> dict[str, set[str]]:
        """slug -> the slugs of the other pages that link to it (index.md does not count)."""
        back: dict[str, set[str]] = {slug: set() for slug in self.pages}
        for page in self.pages.values():
            for target in self.outlinks(page):
                if target != page.slug:
                    back[target].add(page.slug)
        return back


def page_files(wiki_dir: Path) -> list[Path]:
    """The .md files directly in wiki/, by name (no hidden or temporary files)."""
    try:
        entries = list(os.scandir(wiki_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = sorted(
        e.name
        for e in entries
        if e.name.endswith(".md") and not e.name.startswith((".", TMP_MARK)) and e.is_file()
    )
    return [wiki_dir / name for name in names]


# the lines of a walk's entries other than folders and plain files (snapshot.walk)
NOT_PLAIN = ("\t-> ", f"\t{KIND} ", "\tmissing\n", "\tunreadable\n")


@dataclass
class PageStats:
    """The .md files directly in wiki/ (as page_files lists them) with their (size, mtime_ns),
    and the attachments (as `attachments` finds them), from one scan, and when it began: the
    site export and lint's cache share one."""

    taken_ns: int
    stats: list[tuple[str, tuple[int, int]]]  # name -> (size, mtime_ns); (-1, -1): gone meanwhile
    attachments: set[str]

    @classmethod
    def take(cls, wiki_dir: Path) -> PageStats:
        taken = time.time_ns()
        try:
            entries = list(os.scandir(wiki_dir))
        except (FileNotFoundError, NotADirectoryError):
            return cls(taken, [], set())
        found, others = [], set()
        for e in entries:
            if e.is_dir():
                if not e.name.startswith(".") and not e.is_symlink():  # as os.walk: not followed
                    others |= attachments(Path(e.path))
                continue
            if not e.name.endswith(".md"):
                if not e.name.startswith("."):
                    others.add(e.name.casefold())
                continue
            if e.name.startswith((".", TMP_MARK)) or not e.is_file():
                continue
            try:
                st = e.stat()
            except OSError:
                found.append((e.name, (-1, -1)))
                continue
            found.append((e.name, (st.st_size, st.st_mtime_ns)))
        return cls(taken, sorted(found), others)

    @classmethod
    def of_walk(cls, walked: Tree, taken_ns: int) -> PageStats | None:
        """What `take` would find, from a stat walk of wiki/ begun at `taken_ns` (snapshot.wiki),
        so that wiki/ is not listed twice; None where the walk met anything but folders and
        plain files (a link, a pipe, an entry unreadable or gone meanwhile, no wiki/): `take`
        reads those as it does."""
        text = "\n".join(walked.lines) + "\n"
        if walked.lazy or not walked.complete or any(mark in text for mark in NOT_PLAIN):
            return None
        found: list[tuple[str, tuple[int, int]]] = []
        others: set[str] = set()
        for path, stat in walked.stats.items():  # 100,000 of them: the plain case first
            name = path[5:]  # after "wiki/"
            if "/" in name:
                *folders, name = name.split("/")
                if any(f.startswith(".") for f in folders):
                    continue  # in a hidden folder: not listed (take), not walked (attachments)
                if not name.endswith(".md") and not name.startswith("."):
                    others.add(name.casefold())
            elif name.endswith(".md"):
                if not name.startswith((".", TMP_MARK)):
                    found.append((name, stat))
            elif not name.startswith("."):
                others.add(name.casefold())
        return cls(taken_ns, sorted(found), others)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: reading a wiki makes many objects and no cycles,
    and the collector's passes over the growing heap cost a fifth of the time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def gc_frozen() -> Iterator[None]:
    """What exists when it starts is left out of the collector's passes inside (gc.freeze),
    and taken back after (a long-lived `wikic watch` must still free its cycles): a build's
    plan lives to its end, and every full collection after it scanned all of it again."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def read_wiki(root: Path, wiki_dir: Path | None = None) -> Wiki:
    """Read every page under wiki/ (not recursive: the build writes a flat folder)."""
    with gc_paused():
        return _read_wiki(root, wiki_dir or root / "wiki")


def _read_wiki(root: Path, wiki_dir: Path) -> Wiki:
    pages: dict[str, Page] = {}
    index: Page | None = None
    prefix = wiki_dir.relative_to(root).as_posix() if wiki_dir.is_relative_to(root) else "wiki"
    for path in page_files(wiki_dir):
        rel = f"{prefix}/{path.name}"
        if path.name == LOG:
            continue
        page = read_page(path, rel)
        if path.name == INDEX:
            index = page
        else:
            pages[page.slug] = page
    return Wiki(root, pages, index, attachments(wiki_dir))


def read_page(path: Path, rel: str) -> Page:
    """One page file as the wiki's reader sees it: unreadable or undecodable ones as such."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        if exc.errno in OUT_OF_FILES:
            raise
        return unreadable_page(rel, f"cannot be read: {exc.strerror or exc}")
    try:
        page = split_page(raw.decode("utf-8"), rel)
    except UnicodeDecodeError as exc:
        page = unreadable_page(rel, f"is not valid UTF-8 (byte offset {exc.start})")
    page.hash = bytes_hash(raw)
    return page


def attachments(wiki_dir: Path) -> set[str]:
    """Names of the files other than pages anywhere under wiki/ (images, PDFs, ...)."""
    found: set[str] = set()
    for _, dirnames, filenames in os.walk(wiki_dir):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found.update(n.casefold() for n in filenames if not n.endswith(".md") and not n.startswith("."))
    return found


def trim_heap() -> None:
    """Hand the C heap's free pages back to the system (glibc's malloc_trim): what a build
    freed stays in the process's memory otherwise, under the closing lint summary's peak."""
    try:
        import ctypes  # here: a build with nothing to do never gets this far

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to hand back this way
        pass
