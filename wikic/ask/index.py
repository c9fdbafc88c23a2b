"""What ask reads of every page, kept in state.db (`ask_pages`) by the page's stat: over a
large wiki a question reads again only the pages changed since the last one. Each page's
record is what ranking needs of it (select.Corpus): its title, type, aliases, plain text,
sentences and the pages they link to, and their words counted; the pages come back as Pages
without their text, the plain text set (what the prompt shows), with the Corpus made from the
records (a sentence made only where ranking asks for it), the same as one made from the pages
read (tests/test_ask_index.py). A page whose mtime is too recent to tell a later write in the
same tick is kept unmatched, and read again next time; a record of another version, or
damaged, is read again.

A record holds a page's text: when a source is forgotten, every record goes with the rest of
what may hold its text (privacy/forget.purge), and the next question makes them again."""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from wikic.ask.context import BOOKKEEPING, TYPE_ORDER
from wikic.ask.passages import Sentence, sentences
from wikic.ask.rank import terms
from wikic.ask.select import Corpus
from wikic.hashing import text_hash
from wikic.state import State
from wikic.wiki.page import Citation, Page, split_page

VERSION = 1  # bump whenever a record's shape, or what makes it, changes
MARK = f"ask{VERSION}\n".encode()  # each record starts with it: one of another version is read again
RACY_NS = 100_000_000  # an mtime this close to the listing may hide a later write in the same tick
FIELDS = 11  # in a record (record())
READ_NOTE = 1000  # pages to read from which a question says so first (indexed's on_read)


@dataclass
class Indexed:
    """The pages as ask reads them (in load_pages' order), and what ranking needs of each."""

    pages: list[Page]
    parts: dict[str, _Part]  # rel -> what the page's record holds besides the Page
    read: int  # pages read (not from their records)

    def corpus(self, pages: list[Page]) -> Corpus:
        """The corpus of these pages (a list of `pages`, or some of them in that order): as
        select.Corpus makes it from the pages read."""
        parts = [self.parts[p.rel] for p in pages]
        rows = [row for part in parts for row in part.unit_rows]
        units = _Units([p for p, part in zip(pages, parts, strict=True) for _ in part.unit_rows], rows)
        orders = [row[3] for row in rows]
        counts = [len(part.unit_rows) for part in parts]
        targets = [part.targets for part in parts]
        page_terms = [part.page_terms for part in parts]
        unit_terms = [t for part in parts for t in part.unit_terms]
        return Corpus.of(pages, units, orders, counts, targets, page_terms, unit_terms)

    def digests(self, pages: list[Page]) -> list[str]:
        """Of each page's plain text: what an answer depends on of it."""
        return [self.parts[p.rel].digest for p in pages]


Row = tuple[str, str, int, int, list[tuple[str, int, int]], list[str]]  # a sentence as kept


@dataclass
class _Part:
    digest: str
    unit_rows: list[Row]  # its sentences: section, text, block, place, citations, links
    targets: list[str]  # the pages it links to from its sentences (select.Corpus.page_links)
    page_terms: dict[str, int]
    unit_terms: list[dict[str, int]]


class _Units(Sequence[Sentence]):
    """The sentences of the corpus, each made when first asked for: ranking asks for those it
    shows (a few thousand of 700,000 at 100,000 pages)."""

    def __init__(self, pages: list[Page], rows: list[Row]) -> None:
        self.pages, self.rows = pages, rows
        self.made: dict[int, Sentence] = {}

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> Sentence: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Sentence]: ...

    def __getitem__(self, i: int | slice) -> Sentence | Sequence[Sentence]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self.rows))[i]]
        made = self.made.get(i)
        if made is None:
            section, text, block, at, cited, links = self.rows[i]
            cites = [Citation(*c) for c in cited]
            made = self.made[i] = Sentence(self.pages[i], section, text, block, at, cites, links)
        return made


def indexed(wiki_dir: Path, state: State, on_read: Callable[[int], None] | None = None) -> Indexed:
    """Every page in wiki/ (not index.md or log.md) from its record where its stat is as when
    it was kept, else read (and its record kept). `on_read`: told how many pages are to be
    read, where they are READ_NOTE or more (a first question over a large wiki)."""
    started = time.time_ns()
    listed = {f"wiki/{name}": st for name, st in _listing(wiki_dir)}
    kept: dict[str, list[Any]] = {}
    gone: list[str] = []
    for rel, size, mtime, raw in state.ask_rows():  # each decoded as it comes: not all held as bytes
        st = listed.get(rel)
        if st is None:
            gone.append(rel)
        elif (size, mtime) == st and (data := _decoded(raw)) is not None:
            kept[rel] = data
    stale = [(rel[5:], st) for rel, st in sorted(listed.items()) if rel not in kept]
    if on_read is not None and len(stale) >= READ_NOTE:
        on_read(len(stale))
    fresh: dict[str, tuple[int, int, bytes]] = {}
    for name, st in stale:
        rel = f"wiki/{name}"
        page = _read(wiki_dir / name, rel)
        if page is None:
            continue  # unreadable pages are lint's business, not a reason to refuse answering
        trusted = st[1] if st[1] < started - RACY_NS else -1
        made = record(page)
        fresh[rel] = (st[0], trusted, made)
        kept[rel] = marshal.loads(memoryview(made)[len(MARK) :])
    if fresh or gone:
        state.save_ask_rows(fresh, gone)
    return _loaded(kept, len(fresh))


def record(page: Page) -> bytes:
    """What ask keeps of a page read: see the module."""
    title, aliases = page.title, page.aliases
    units = sentences(page)
    unit_rows = [(s.section, s.text, s.block, s.order, [tuple(c) for c in s.cites], s.links) for s in units]
    targets = list(dict.fromkeys(t for s in units for t in s.links if t))
    return MARK + marshal.dumps(
        [
            text_hash(page.plain),
            title,
            page.type,
            aliases,
            _strings_or(page.meta.get("sources")),
            _strings_or(page.meta.get("cites"), keep_str=False),
            page.plain,
            terms(" ".join([title, *aliases, title, page.plain])),
            unit_rows,
            targets,
            [terms(" ".join([title, *aliases, s.text])) for s in units],
        ]
    )


def _decoded(raw: bytes) -> list[Any] | None:
    """A record's fields; None where it is of another version or not as record() makes them."""
    if not raw.startswith(MARK):
        return None
    try:
        data = marshal.loads(memoryview(raw)[len(MARK) :])
    except (EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, list) and len(data) == FIELDS else None


def _strings_or(value: Any, keep_str: bool = True) -> Any:
    """A front-matter list as ask reads it (its strings), a string as it is; else None."""
    if isinstance(value, list):
        return [str(v) for v in value] if not keep_str else [v for v in value if isinstance(v, str)]
    return value if keep_str and isinstance(value, str) else None


def _loaded(records: dict[str, list[Any]], read: int) -> Indexed:
    pages: list[Page] = []
    parts: dict[str, _Part] = {}
    for rel, data in records.items():
        digest, title, kind, aliases, sources, cites, plain, page_terms, unit_rows, targets, unit_terms = data
        meta = {"title": title, "type": kind, "aliases": aliases, "sources": sources, "cites": cites}
        page = Page(rel, "", meta)
        page.__dict__["plain"] = plain  # Page.plain, as the page read made it
        pages.append(page)
        parts[rel] = _Part(digest, unit_rows, targets, page_terms, unit_terms)
    pages.sort(key=lambda p: (TYPE_ORDER.get(p.type, 0), p.slug))
    return Indexed(pages, parts, read)


def _listing(wiki_dir: Path) -> list[tuple[str, tuple[int, int]]]:
    """The pages' file names (as load_pages finds them: *.md, not index.md or log.md) and stats."""
    found = []
    try:
        entries = list(os.scandir(wiki_dir))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not name.endswith(".md") or name[:-3] in BOOKKEEPING:
            continue
        try:
            st = os.stat(entry.path)  # a link's target, as reading it does
        except OSError:
            continue
        found.append((name, (st.st_size, st.st_mtime_ns)))
    return sorted(found)


def _read(path: Path, rel: str) -> Page | None:
    try:
        return split_page(path.read_text(encoding="utf-8"), rel)  # as load_pages reads it
    except (OSError, UnicodeDecodeError):
        return None
