"""What ask reads of every page, kept in state.db (`ask_pages`) by the page's stat: over a
large wiki a question reads again only the pages changed since the last one. A page's record
is in two parts: its head (its plain text's digest, title, type, aliases, and the front
matter's sources and cites as ask reads them: what the answer key and the pages a remote
model may see need) and its body (its plain text, its sentences and the pages they link to,
the words of the page and of each sentence counted: what ranking needs, select.Corpus). A
question answered before reads the heads alone; one that ranks reads the bodies too. The
pages come back as Pages without their text, the plain text set once the bodies are read,
with the Corpus made from the records (a sentence made only where ranking asks for it), the
same as one made from the pages read (tests/test_ask_index.py). A page whose mtime is too
recent to tell a later write in the same tick is kept unmatched, and read again next time; a
record of another version, or damaged, is read again.

A record holds a page's text: when a source is forgotten, the build that forgets it rewrites
or removes every page holding its text, and then the records of the pages not as they were read
go with the rest of what may hold it (privacy/forget.purge): what is kept is only what wiki/
holds. The next question reads those pages again."""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from wikic.ask.context import BOOKKEEPING, TYPE_ORDER
from wikic.ask.passages import Sentence, sentences
from wikic.ask.rank import terms
from wikic.ask.select import Corpus, page_text, unit_text
from wikic.hashing import text_hash
from wikic.state import State
from wikic.wiki.page import Citation, Page, split_page

VERSION = 1  # bump whenever a record's shape, or what makes it, changes
MARK = f"ask{VERSION}\n".encode()  # each part starts with it: one of another version is read again
RACY_NS = 100_000_000  # an mtime this close to the listing may hide a later write in the same tick
HEAD, BODY = 6, 5  # fields of each part (record())
READ_NOTE = 1000  # pages to read from which a question says so first (indexed's on_read)

Row = tuple[str, str, int, int, list[tuple[str, int, int]], list[str]]  # a sentence as kept


@dataclass
class _Body:
    unit_rows: list[Row]  # its sentences: section, text, block, place, citations, links
    targets: list[str]  # the pages it links to from its sentences (select.Corpus.page_links)
    page_terms: dict[str, int]
    unit_terms: list[dict[str, int]]


@dataclass
class Indexed:
    """The pages as ask reads them (in load_pages' order), from their heads; their bodies read
    where a corpus is asked for (corpus())."""

    wiki_dir: Path
    state: State
    pages: list[Page]
    digests: dict[str, str]  # rel -> the page's plain text's digest
    bodies: dict[str, _Body] = field(default_factory=dict)  # those read so far
    read: int = 0  # pages read (not from their records)

    def corpus(self, pages: list[Page]) -> Corpus:
        """The corpus of these pages (a list of `pages`, or some of them in that order): as
        select.Corpus makes it from the pages read."""
        self._bodies([p for p in pages if p.rel not in self.bodies])
        parts = [self.bodies[p.rel] for p in pages]
        rows = [row for part in parts for row in part.unit_rows]
        units = _Units([p for p, part in zip(pages, parts, strict=True) for _ in part.unit_rows], rows)
        orders = [row[3] for row in rows]
        counts = [len(part.unit_rows) for part in parts]
        targets = [part.targets for part in parts]
        page_terms = [part.page_terms for part in parts]
        unit_terms = [t for part in parts for t in part.unit_terms]
        return Corpus.of(pages, units, orders, counts, targets, page_terms, unit_terms)

    def digests_of(self, pages: list[Page]) -> list[str]:
        """Of each page's plain text: what an answer depends on of it."""
        return [self.digests[p.rel] for p in pages]

    def _bodies(self, pages: list[Page]) -> None:
        """These pages' bodies, from their records; a page whose body is not as record() makes
        it (damaged since its head was read) read again, its head taken anew."""
        wanted = {p.rel: p for p in pages}
        if not wanted:
            return
        for rel, raw in self.state.ask_bodies():  # each decoded as it comes
            page = wanted.get(rel)
            if page is not None and (data := _decoded(raw, BODY)) is not None:
                self._take(page, data)
                del wanted[rel]
        fresh = {}
        for rel, page in wanted.items():
            read = _read(self.wiki_dir / rel[5:], rel)
            if read is None:
                read = Page(rel, "")  # gone since its head was read: a page without sentences
            head, body = record(read)
            self.digests[rel], page.meta = head[0], _meta(head)
            self._take(page, body)
            fresh[rel] = (-1, -1, _packed(head), _packed(body))  # matched by no stat: read again next time
            self.read += 1
        if fresh:
            self.state.save_ask_rows(fresh, [])

    def _take(self, page: Page, data: list[Any]) -> None:
        plain, page_terms, unit_rows, targets, unit_terms = data
        assert isinstance(page, _Headed)
        page.body_plain = plain  # Page.plain, as the page read made it
        self.bodies[page.rel] = _Body(unit_rows, targets, page_terms, unit_terms)


class _Headed(Page):
    """A page as its record's head has it: its plain text there once its body is read (asked
    for before, it is a mistake in wikic, not an empty page)."""

    body_plain: str | None = None

    @property
    def plain(self) -> str:
        if self.body_plain is None:
            raise RuntimeError(f"{self.rel}: its plain text asked for before its body was read")
        return self.body_plain


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
    """Every page in wiki/ (not index.md or log.md) from its record's head where its stat is as
    when it was kept, else read (and its record kept). `on_read`: told how many pages are to be
    read, where they are READ_NOTE or more (a first question over a large wiki). `state` stays
    open while the result is used: its corpus reads the bodies from it."""
    started = time.time_ns()
    listed = {f"wiki/{name}": st for name, st in _listing(wiki_dir)}
    heads: dict[str, list[Any]] = {}
    gone: list[str] = []
    for rel, size, mtime, raw in state.ask_heads():
        st = listed.get(rel)
        if st is None:
            gone.append(rel)
        elif (size, mtime) == st and (data := _decoded(raw, HEAD)) is not None:
            heads[rel] = data
    stale = [(rel, st) for rel, st in sorted(listed.items()) if rel not in heads]
    if on_read is not None and len(stale) >= READ_NOTE:
        on_read(len(stale))
    fresh: dict[str, tuple[int, int, bytes, bytes]] = {}
    bodies: dict[str, list[Any]] = {}
    for rel, st in stale:
        page = _read(wiki_dir / rel[5:], rel)
        if page is None:
            continue  # unreadable pages are lint's business, not a reason to refuse answering
        trusted = st[1] if st[1] < started - RACY_NS else -1
        heads[rel], bodies[rel] = record(page)
        fresh[rel] = (st[0], trusted, _packed(heads[rel]), _packed(bodies[rel]))
    if fresh or gone:
        state.save_ask_rows(fresh, gone)
    got = Indexed(wiki_dir, state, [], {}, read=len(fresh))
    for rel, head in heads.items():
        page = _Headed(rel, "", _meta(head))
        got.pages.append(page)
        got.digests[rel] = head[0]
        if rel in bodies:
            got._take(page, bodies[rel])
    got.pages.sort(key=lambda p: (TYPE_ORDER.get(p.type, 0), p.slug))
    return got


def record(page: Page) -> tuple[list[Any], list[Any]]:
    """What ask keeps of a page read, its head and its body (see the module), as they are
    read back (_packed, _decoded)."""
    title, aliases = page.title, page.aliases
    units = sentences(page)
    unit_rows = [(s.section, s.text, s.block, s.order, [tuple(c) for c in s.cites], s.links) for s in units]
    targets = list(dict.fromkeys(t for s in units for t in s.links if t))
    sources = _strings_or(page.meta.get("sources"))
    cites = _strings_or(page.meta.get("cites"), keep_str=False)
    head = [text_hash(page.plain), title, page.type, aliases, sources, cites]
    body = [
        page.plain,
        terms(page_text(page)),  # what ranking counts of the page and of each sentence (select.py)
        unit_rows,
        targets,
        [terms(unit_text(s)) for s in units],
    ]
    return head, body


def _packed(fields: list[Any]) -> bytes:
    return MARK + marshal.dumps(fields)


def _meta(head: list[Any]) -> dict[str, Any]:
    """A page's front matter as ask reads it, from its record's head."""
    _, title, kind, aliases, sources, cites = head
    return {"title": title, "type": kind, "aliases": aliases, "sources": sources, "cites": cites}


def _decoded(raw: bytes, fields: int) -> list[Any] | None:
    """A part's fields; None where it is of another version or not as record() makes it."""
    if not raw.startswith(MARK):
        return None
    try:
        data = marshal.loads(memoryview(raw)[len(MARK) :])
    except (EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, list) and len(data) == fields else None


def _strings_or(value: Any, keep_str: bool = True) -> Any:
    """A front-matter list as ask reads it (its strings), a string as it is; else None."""
    if isinstance(value, list):
        return [str(v) for v in value] if not keep_str else [v for v in value if isinstance(v, str)]
    return value if keep_str and isinstance(value, str) else None


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
    return found


def _read(path: Path, rel: str) -> Page | None:
    try:
        return split_page(path.read_text(encoding="utf-8"), rel)  # as load_pages reads it
    except (OSError, UnicodeDecodeError):
        return None
