"""What ask reads of every page, kept in state.db (`ask_pages`) by the page's stat: over a
large wiki a question reads again only the pages changed since the last one. A page's record
is in two parts, with a third beside it: its head (its plain text's digest, title, type,
aliases, the front matter's sources and cites as ask reads them, and how many sentences and
words it has: what the answer key, the pages a remote model may see and ranking's totals
need), its body (its plain text and its sentences: what a page or sentence shown needs) and
its terms (`ask_terms`, ask/terms.py: the words of the page and of each sentence counted, and
the pages it links to: what ranking needs). A question answered before reads the heads alone;
one that ranks finds its words in every page's terms (ask/scan.py) and reads the bodies of
the pages it shows. The pages come back as Pages without their text, the plain text set once
the bodies are read; the corpus made from the records (a sentence made only where ranking
asks for it) ranks as one made from the pages read (tests/test_ask_index.py). A page whose
mtime is too recent to tell a later write in the same tick is kept unmatched, and read again
next time; a record of another version, or damaged, is read again.

A record holds a page's text: when a source is forgotten, the build that forgets it rewrites
or removes every page holding its text, and then the records of the pages not as they were read
go with the rest of what may hold it (privacy/forget.purge): what is kept is only what wiki/
holds. The next question reads those pages again."""

from __future__ import annotations

import bisect
import functools
import marshal
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, overload

from wikic import forked
from wikic.ask.context import BOOKKEEPING, TYPE_ORDER
from wikic.ask.passages import Sentence, sentences
from wikic.ask.rank import terms
from wikic.ask.scan import Scanned
from wikic.ask.select import Corpus, page_text, unit_text
from wikic.ask.terms import Counted, counted, links_of, terms_text
from wikic.errors import PageError
from wikic.hashing import text_hash
from wikic.snapshot import Tree
from wikic.state import State
from wikic.wiki.page import Citation, Page, split_page

VERSION = 2  # bump whenever a record's shape, or what makes it, changes
MARK = f"ask{VERSION}\n".encode()  # each part starts with it: one of another version is read again
RACY_NS = 100_000_000  # an mtime this close to the listing may hide a later write in the same tick
HEAD, BODY = 9, 2  # fields of each part (record())
READ_NOTE = 1000  # pages to read from which a question says so first (indexed's on_read)
ROUND = 5000  # pages read and recorded together (by every CPU: forked.py)

Row = tuple[str, str, int, int, list[tuple[str, int, int]], list[str]]  # a sentence as kept
Listing = tuple[int, dict[str, tuple[int, int]]]  # when wiki/ was listed (ns), each page's size and mtime


class Sizes(NamedTuple):
    """How much of a page ranking counts (its record's head): its sentences, the words of its
    page_text and of its sentences' unit_text."""

    units: int
    words: int
    unit_words: int


@dataclass
class Indexed:
    """The pages as ask reads them (in load_pages' order), from their heads; their bodies read
    where asked for (plain(), corpus()), their terms where a question is ranked."""

    wiki_dir: Path
    state: State
    pages: list[Page]
    digests: dict[str, str]  # rel -> the page's plain text's digest
    sizes: dict[str, Sizes] = field(default_factory=dict)
    keys: dict[str, list[Any]] = field(default_factory=dict)  # rel -> what the answer key reads of it
    rows: dict[str, list[Row]] = field(default_factory=dict)  # the bodies read so far: their sentences
    texts: dict[str, str] = field(default_factory=dict)  # the terms of the pages read this time
    read: int = 0  # pages read (not from their records)

    def corpus(self, pages: list[Page], question: str | None = None) -> Corpus:
        """The corpus of these pages (a list of `pages`, or some of them in that order): as
        select.Corpus makes it from the pages read. For `question`, one that ranks it alone
        (ask/scan.py), of the terms of every page and the bodies of those it shows."""
        if question is not None:
            return Scanned(self, pages, question)
        self.plain(pages)
        parts = {rel: part for rel, text, _ in self.terms_of(pages) if (part := parsed(text)) is not None}
        missing = [p for p in pages if p.rel not in parts]
        self.read_again(missing)
        parts.update((p.rel, counted(self.texts[p.rel])) for p in missing)
        counts = [self.sizes[p.rel].units for p in pages]
        orders = [at for n in counts for at in range(n)]
        mine = [parts[p.rel] for p in pages]
        targets = [part.targets for part in mine]
        page_terms = [part.page_terms for part in mine]
        unit_terms = [t for part in mine for t in part.unit_terms]
        return Corpus.of(pages, self.units(pages), orders, counts, targets, page_terms, unit_terms)

    def units(self, pages: list[Page]) -> _Units:
        """The sentences of these pages, in page order, each made when first asked for."""
        return _Units(pages, [self.sizes[p.rel].units for p in pages], self._rows_of)

    def keyed(self, pages: list[Page]) -> list[list[Any]]:
        """What an answer depends on of each page (runner.answer_key): its slug, title, type,
        aliases and its plain text's digest, from its head (as the Page's own properties give
        them: a million property calls at 100,000 pages spared)."""
        return [self.keys[p.rel] for p in pages]

    def terms_of(self, pages: Iterable[Page] | None = None) -> Iterator[tuple[str, str, str]]:
        """The terms (ask/terms.py) of these pages, or of every page kept (the caller picks
        those it ranks), with their links' line: as read this time, else as kept where they
        are of the page's record."""
        wanted = None if pages is None else {p.rel for p in pages}
        texts, digests = self.texts, self.digests
        for rel, text in self.state.ask_terms(wanted):
            digest = digests.get(rel)
            if digest is not None and rel not in texts and (links := links_of(text, digest)) is not None:
                yield rel, text, links
        for rel, text in texts.items():  # those the database could not take, or read again
            if (wanted is None or rel in wanted) and (links := links_of(text, digests[rel])) is not None:
                yield rel, text, links

    def plain(self, pages: list[Page]) -> None:
        """These pages' plain text and sentences, from their records' bodies."""
        self._bodies([p for p in pages if p.rel not in self.rows])

    def _rows_of(self, page: Page) -> list[Row]:
        if page.rel not in self.rows:
            self._bodies([page])
        return self.rows[page.rel]

    def _bodies(self, pages: list[Page]) -> None:
        """These pages' bodies, from their records; a page whose body is not as record() makes
        it (damaged since its head was read) read again."""
        wanted = {p.rel: p for p in pages}
        if not wanted:
            return
        for rel, raw in self.state.ask_bodies(wanted):  # each decoded as it comes
            page = wanted.get(rel)
            if page is not None and (data := _decoded(raw, BODY)) is not None:
                self._take(page, data)
                del wanted[rel]
        self.read_again(list(wanted.values()))

    def read_again(self, pages: list[Page]) -> None:
        """These pages read from wiki/ and their records kept anew: their bodies or terms were
        not as record() makes them. One changed since its head was read (in the ask under way)
        cannot be told from its head: the question is asked again."""
        fresh = {}
        started = time.time_ns()
        for page in pages:
            rel = page.rel
            path = self.wiki_dir / rel[5:]
            try:
                st = os.stat(path)
                size, mtime = st.st_size, (st.st_mtime_ns if st.st_mtime_ns < started - RACY_NS else -1)
            except OSError:
                size = mtime = -1  # matched by no stat: read again next time
            read = _read(path, rel)
            head, body, text = record(read or Page(rel, ""))  # gone: a page without sentences
            if head[0] != self.digests[rel] or Sizes._make(head[6:9]) != self.sizes[rel]:
                raise PageError(f"{rel} changed while ask read it (a build under way?): ask again")
            self._take(page, body)
            self.texts[rel] = text
            fresh[rel] = (size, mtime, _packed(head), _packed(body), text)
            self.read += 1
        if fresh:
            self.state.save_ask_rows(fresh, [])

    def _take(self, page: Page, data: list[Any]) -> None:
        plain, unit_rows = data
        assert isinstance(page, _Headed)
        page.body_plain = plain  # Page.plain, as the page read made it
        self.rows[page.rel] = unit_rows


class _Headed(Page):
    """A page as its record's head has it: its plain text there once its body is read (asked
    for before, it is a mistake in wikic, not an empty page)."""

    body_plain: str | None = None
    known_slug = ""  # Page.slug, made once: ranking asks for it 500,000 times at 100,000 pages

    @property
    def slug(self) -> str:
        return self.known_slug or super().slug

    # its title and aliases as the head keeps them, which is as Page's properties read them
    # (record()): found for each of 100,000 pages where ask resolves an answer's names
    @property
    def title(self) -> str:
        title = self.meta.get("title")
        return title if type(title) is str and title else super().title

    @property
    def aliases(self) -> list[str]:
        aliases = self.meta.get("aliases")
        return list(aliases) if type(aliases) is list else super().aliases

    @property
    def plain(self) -> str:
        if self.body_plain is None:
            raise RuntimeError(f"{self.rel}: its plain text asked for before its body was read")
        return self.body_plain


class _Units(Sequence[Sentence]):
    """The sentences of some pages, in page order, each made when first asked for, its page's
    body read then: ranking asks for those it shows (a few thousand of 700,000 at 100,000
    pages)."""

    def __init__(self, pages: list[Page], counts: list[int], rows_of: Callable[[Page], list[Row]]) -> None:
        self.pages, self.rows_of = pages, rows_of
        self.starts = [0]
        for n in counts:
            self.starts.append(self.starts[-1] + n)
        self.made: dict[int, Sentence] = {}

    def __len__(self) -> int:
        return self.starts[-1]

    @overload
    def __getitem__(self, i: int) -> Sentence: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Sentence]: ...

    def __getitem__(self, i: int | slice) -> Sentence | Sequence[Sentence]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        made = self.made.get(i)
        if made is None:
            if not 0 <= i < len(self):
                raise IndexError(i)
            at = bisect.bisect_right(self.starts, i) - 1
            page = self.pages[at]
            section, text, block, order, cited, links = self.rows_of(page)[i - self.starts[at]]
            cites = [Citation(*c) for c in cited]
            made = self.made[i] = Sentence(page, section, text, block, order, cites, links)
        return made


def indexed(
    wiki_dir: Path, state: State, on_read: Callable[[int], None] | None = None, listed: Listing | None = None
) -> Indexed:
    """Every page in wiki/ (not index.md or log.md) from its record's head where its stat is as
    when it was kept, else read (and its record kept). `on_read`: told how many pages are to be
    read, where they are READ_NOTE or more (a first question over a large wiki); `listed`: the
    pages as a walk of wiki/ just found them (listing()), else listed here. `state` stays open
    while the result is used: its corpus reads the bodies and terms from it."""
    if listed is None:
        listed = time.time_ns(), {f"wiki/{name}": st for name, st in _listing(wiki_dir)}
    started, stats = listed
    heads: dict[str, list[Any]] = {}
    gone: list[str] = []
    for rel, size, mtime, raw in state.ask_heads():
        st = stats.get(rel)
        if st is None:
            gone.append(rel)
        elif (size, mtime) == st and (data := _decoded(raw, HEAD)) is not None:
            heads[rel] = data
    stale = sorted((rel, st) for rel, st in stats.items() if rel not in heads)  # most often none
    if on_read is not None and len(stale) >= READ_NOTE:
        on_read(len(stale))
    fresh: dict[str, tuple[int, int, bytes, bytes, str]] = {}
    bodies: dict[str, list[Any]] = {}
    texts: dict[str, str] = {}
    # a first question over a large wiki: the pages read and recorded by every CPU (forked.py),
    # a round at a time (what a child sends back is held whole until it is decoded)
    record_of = functools.partial(_recorded, wiki_dir)
    rels = [rel for rel, _ in stale]
    rounds = (forked.mapped(record_of, rels[at : at + ROUND]) for at in range(0, len(rels), ROUND))
    made = [got for done in rounds for got in done]
    for (rel, st), got in zip(stale, made, strict=True):
        if got is None:
            continue  # unreadable pages are lint's business, not a reason to refuse answering
        trusted = st[1] if st[1] < started - RACY_NS else -1
        heads[rel], bodies[rel], texts[rel] = got
        fresh[rel] = (st[0], trusted, _packed(heads[rel]), _packed(bodies[rel]), texts[rel])
    if (fresh or gone) and state.save_ask_rows(fresh, gone):
        texts = {}  # kept: read from the database with the others
    got = Indexed(wiki_dir, state, [], {}, texts=texts, read=len(fresh))
    # in load_pages' order: by type, then slug (the page's file name; head[2] is Page.type); a
    # slug is one page's, so the path after it is never compared
    order = TYPE_ORDER.get
    for _, _, rel, head in sorted([(order(h[2], 0), rel[5:-3], rel, h) for rel, h in heads.items()]):
        page = _Headed(rel, "", _meta(head))
        page.known_slug = rel[5:-3]  # wiki/<slug>.md
        got.pages.append(page)
        got.digests[rel] = head[0]
        got.sizes[rel] = Sizes._make(head[6:9])
        got.keys[rel] = [rel[5:-3], head[1], head[2], head[3], head[0]]  # rel: wiki/<slug>.md
        if rel in bodies:
            got._take(page, bodies[rel])
    return got


def record(page: Page) -> tuple[list[Any], list[Any], str]:
    """What ask keeps of a page read, its head, its body (see the module) and its terms (ask/
    terms.py), as they are read back (_packed, _decoded)."""
    units = sentences(page)
    unit_rows = [(s.section, s.text, s.block, s.order, [tuple(c) for c in s.cites], s.links) for s in units]
    targets = list(dict.fromkeys(t for s in units for t in s.links if t))
    page_terms = terms(page_text(page))  # what ranking counts of the page and of each sentence (select.py)
    unit_terms = [terms(unit_text(s)) for s in units]
    sources = _strings_or(page.meta.get("sources"))
    cites = _strings_or(page.meta.get("cites"), keep_str=False)
    digest = text_hash(page.plain)
    unit_words = sum(n for counted in unit_terms for n in counted.values())
    sizes = [len(units), sum(page_terms.values()), unit_words]
    head = [digest, page.title, page.type, page.aliases, sources, cites, *sizes]
    return head, [page.plain, unit_rows], terms_text(digest, page_terms, unit_terms, targets)


def parsed(text: str) -> Counted | None:
    """A page's terms as the corpus takes them; None where they are not as terms_text makes them."""
    try:
        return counted(text)
    except (ValueError, IndexError):  # json's errors are ValueErrors
        return None


def _packed(fields: list[Any]) -> bytes:
    return MARK + marshal.dumps(fields)


def _meta(head: list[Any]) -> dict[str, Any]:
    """A page's front matter as ask reads it, from its record's head."""
    _, title, kind, aliases, sources, cites = head[:6]
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


def listing(walked: Tree, taken_ns: int) -> Listing:
    """The pages of a walk of wiki/ (snapshot.wiki) begun at `taken_ns`, as _listing finds them:
    the files wiki/*.md (a link's as the file it points at), not index.md or log.md."""
    pages = {}
    for name, st in walked.stats.items():
        if name.endswith(".md") and name.count("/") == 1 and name[5:-3] not in BOOKKEEPING:
            pages[name] = st
    return taken_ns, pages


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


def _recorded(wiki_dir: Path, rel: str) -> tuple[list[Any], list[Any], str] | None:
    """The page's record (record()), None where it cannot be read."""
    page = _read(wiki_dir / rel[5:], rel)
    return None if page is None else record(page)


def _read(path: Path, rel: str) -> Page | None:
    try:
        return split_page(path.read_text(encoding="utf-8"), rel)  # as load_pages reads it
    except (OSError, UnicodeDecodeError):
        return None
