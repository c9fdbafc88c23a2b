"""What a plan keeps for the next to patch (replan.py): what it went by (Kept: a base blob and,
beside it, what changed since), with every page's slug (its head), and its pages, each as a row
that starts with its slug, so that a patched plan reads the slug of every page and the rows of
only those it asks for (Pages).
"""

from __future__ import annotations

import marshal
import operator
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, ValuesView
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from wikic.build.keptlines import Lines, as_lines
from wikic.build.plan import PagePlan
from wikic.build.sourceplan import Claim, SourceInfo
from wikic.errors import StateError

T = TypeVar("T")

VERSION = 15  # bump whenever Kept or a kept page changes shape
SINCE = 8  # more than one source in this many changed since the base (and more than replan.FEW): a new base

Meta = tuple[str, int, bool, str]  # a source's title, line count, fallback flag, title's key
Entry = tuple[str, Meta, list[str], list[str], list[str]]  # a source's key, meta, names, gives, kinds
Note = tuple[str, str, int, int, str]  # a note (sourceplan.Claim) as a tuple
SEP = "\x1f"  # between a source's names, or its topics, in the base's columns (never in a name)


class Cols:
    """The base blob's columns, each marshalled on its own and decoded when first asked for:
    an edit reads five of the eight."""

    def __init__(self, packed: list[bytes]) -> None:
        self.packed = packed
        self.decoded: dict[int, list[Any]] = {}

    def __getitem__(self, i: int) -> list[Any]:
        col = self.decoded.get(i)
        if col is None:
            col = self.decoded[i] = marshal.loads(self.packed[i])
        return col


class Columns:
    """Every source's entry as the base blob keeps them: a list per field, in one order, each
    name list joined into one string. At 100,000 sources that decodes in a fifth of the time
    the same entries take as dicts of tuples and lists (0.09 s against 0.36 s)."""

    def __init__(
        self, paths: list[str], cols: list[list[Any]] | Cols, givers: dict[str, bytes] | None = None
    ) -> None:
        self.paths, self.cols = paths, cols
        self._at: dict[str, int] | None = None
        # topic -> the rows of the sources giving to it (a marshalled list, read where asked for)
        self.givers = givers if givers is not None else _givers(cols[6])

    @classmethod
    def of(
        cls,
        keys: Mapping[str, str],
        meta: Mapping[str, Meta],
        names: Mapping[str, list[str]],
        gives: Mapping[str, list[str]],
        kinds: Mapping[str, list[str]],
    ) -> Columns:
        paths = list(keys)
        cols: list[list[Any]] = [[keys[p] for p in paths]]
        metas = [meta[p] for p in paths]
        cols += [[m[i] for m in metas] for i in range(4)]
        cols += [[_join(names[p]) for p in paths], [_join(gives[p]) for p in paths]]
        same: dict[str | tuple[str, ...], Any] = {}  # a few kinds lists, repeated: marshalled once each
        cols += [[same.setdefault(_key(joined), joined) for joined in (_join(kinds[p]) for p in paths)]]
        return cls(paths, cols)

    def patched(self, keys: Mapping[str, str], fields: list[Field]) -> Columns:
        """These columns with what changed since laid over them (`fields`: meta, names, gives
        and kinds read from them, each changed where Kept.update changed all four), as
        Columns.of makes them from every entry: the rows nothing changed kept as they are,
        undecoded (every entry read and joined again took 1 s at 100,000 sources)."""
        paths, at, meta = list(keys), self.index(), fields[0]
        rows = [-1 if p in meta.over else at.get(p, -1) for p in paths]
        changed = [(k, paths[k]) for k, i in enumerate(rows) if i < 0]
        out: list[list[Any]] = [[keys[p] for p in paths]]
        for c in range(1, 8):
            out.append(_gathered(self.cols[c], rows))  # a changed row's (-1) is put below
            for k, path in changed:
                out[c][k] = meta[path][c - 1] if c < 5 else _join(fields[c - 4][path])
        return Columns(paths, out, self._givers_after(rows, changed, out[6]))

    def _givers_after(
        self, rows: list[int], changed: list[tuple[int, str]], gives: list[Any]
    ) -> dict[str, bytes]:
        """The givers (topic -> rows) of the columns patched: each topic's rows moved to where
        `rows` puts them (a row changed or gone dropped), the changed rows' topics added; as
        _givers finds them from every row (its 100,000 rows' topics split anew: 0.2 s), but in
        another order where a changed row gives to the topic (Kept.givers takes them as a set)."""
        moved = [-1] * len(self.paths)
        for k, i in enumerate(rows):
            if i >= 0:
                moved[i] = k
        more: dict[str, list[int]] = {}
        for k, _ in changed:
            for topic in _split(gives[k]):
                more.setdefault(topic, []).append(k)
        givers = {}
        for topic, packed in self.givers.items():
            at = list(map(moved.__getitem__, marshal.loads(packed)))  # in C: 400,000 rows
            if -1 in at:  # a row changed or gone
                at = [k for k in at if k >= 0]
            at += more.pop(topic, [])
            if at:
                givers[topic] = marshal.dumps(at)
        return givers | {topic: marshal.dumps(at) for topic, at in more.items()}

    def packed(self) -> list[bytes]:
        """The columns as the base blob keeps them (Cols)."""
        cols = self.cols
        return cols.packed if isinstance(cols, Cols) else [marshal.dumps(col) for col in cols]

    def index(self) -> dict[str, int]:
        """Each source's row."""
        if self._at is None:
            self._at = dict(zip(self.paths, range(len(self.paths)), strict=True))
        return self._at

    def at(self, path: str) -> int | None:
        return self.index().get(path)


def _gathered(col: list[Any], rows: list[int]) -> list[Any]:
    """col[i] for each of `rows`, gathered in C (a list comprehension over 100,000 rows, for
    each of seven columns, took 0.1 s); a row -1 has a placeholder there."""
    if len(rows) < 2 or not col:  # itemgetter of one index gives the item, not a tuple
        return [col[i] if i >= 0 else None for i in rows]
    return list(operator.itemgetter(*rows)(col))


class Field(Mapping[str, Any]):
    """One field of every source's entry, read from the base's columns (`make`: the value at a
    row), with what changed since laid over them (None: gone)."""

    def __init__(self, columns: Columns, make: Callable[[Columns, int], Any]) -> None:
        self.columns, self.make = columns, make
        self.over: dict[str, Any] = {}

    def __getitem__(self, path: str) -> Any:
        if path in self.over:
            value = self.over[path]
            if value is None:
                raise KeyError(path)
            return value
        i = self.columns.at(path)
        if i is None:
            raise KeyError(path)
        return self.make(self.columns, i)

    def __iter__(self) -> Iterator[str]:
        over = self.over
        yield from (p for p in self.columns.paths if p not in over or over[p] is not None)
        yield from (p for p, v in over.items() if v is not None and self.columns.at(p) is None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def put(self, path: str, value: Any) -> None:
        self.over[path] = value


def _givers(gives: list[str | list[str]]) -> dict[str, bytes]:
    rows: dict[str, list[int]] = {}
    for i, joined in enumerate(gives):
        for topic in _split(joined):
            rows.setdefault(topic, []).append(i)
    return {topic: marshal.dumps(at) for topic, at in rows.items()}


def _meta(c: Columns, i: int) -> Meta:
    return (c.cols[1][i], c.cols[2][i], c.cols[3][i], c.cols[4][i])


def _join(items: list[str]) -> str | list[str]:
    """A list of names as one string, where that splits back into the same list; else as it is
    (a name the model wrote with the separator in it)."""
    return items if items == [""] or any(SEP in item for item in items) else SEP.join(items)


def _key(joined: str | list[str]) -> str | tuple[str, ...]:
    return joined if isinstance(joined, str) else tuple(joined)


def _split(joined: str | list[str]) -> list[str]:
    if isinstance(joined, list):
        return joined
    return joined.split(SEP) if joined else []


@dataclass
class Kept:
    """A plan and what it went by (replan.py). Kept as a base blob and, beside it,
    the sources' entries changed since (`since`): an edit writes those, not 10,000 sources'.
    A kept plan read back holds its sources' entries as the base's columns (Field), a plan
    made now as dicts."""

    keys: dict[str, str]  # source path -> its facts' key
    meta: Mapping[str, Meta]  # source path -> title, line count, fallback, title's key
    names: Mapping[str, list[str]]  # source path -> its digest's topic names, in order
    gives: Mapping[str, list[str]]  # source path -> the topics it gives names or notes to
    kinds: Mapping[str, list[str]]  # source path -> the page type its digest gave each of its names
    by_key: list[tuple[str, str]]  # the clusters' keys, in the order they were made, and their ids
    structural: list[tuple[str, str, Mapping[str, list[int]]]]  # names from structure: name, kind, lines
    title_keys: dict[str, str]  # topic page id -> the key of the name it is titled by
    firsts: dict[str, str]  # a digest name's key -> the first source (by path) to give it
    sourced: int  # how many of by_key the digests gave (after the pinned, before those from structure)
    token: str = ""  # this plan's own: what was assembled from it says so (Keep.same)
    since: dict[str, Entry | None] = field(default_factory=dict)  # changed since the base (None: gone)
    base: str = ""  # the token of the base blob
    moved: bool = False  # the names from structure are not the base's: kept beside it too
    columns: Columns | None = None  # the base's, where read back from it
    heads: dict[str, str] = field(default_factory=dict)  # page id -> its slug (its row's head), by id
    heads_since: dict[str, str | None] = field(default_factory=dict)  # changed since the base (None: gone)
    # topic page id -> the notes its givers gave that the page left out (keptsums.py); none: not
    # to be patched (pinned, or notes whose order decides)
    sums: dict[str, list[Note]] = field(default_factory=dict)
    sums_since: dict[str, list[Note] | None] = field(default_factory=dict)  # changed since the base

    def _shared(self, structural: list[tuple[str, str, Mapping[str, list[int]]]] | None) -> list[Any]:
        # the lines as the merge marshalled them (Lines): read back undecoded, equal to its by their bytes
        packed = None if structural is None else [(n, k, as_lines(at).packed) for n, k, at in structural]
        return [self.by_key, packed, self.title_keys, self.firsts, self.sourced, self.token]

    def dumps(self, settings: str) -> bytes:
        """The base blob: every source's entry."""
        fields = (self.meta, self.names, self.gives, self.kinds)
        laid = [f for f in fields if isinstance(f, Field) and f.columns is self.columns]
        if self.columns is not None and len(laid) == len(fields):  # read back from a base
            cols = self.columns.patched(self.keys, laid)
        else:
            cols = Columns.of(self.keys, *fields)
        heads = sorted(self.heads.items())  # as two lists: 100,000 pairs decode in a tenth of a dict's time
        ids, slugs = [pid for pid, _ in heads], [slug for _, slug in heads]
        shared = self._shared(self.structural)
        return marshal.dumps(
            [VERSION, settings, cols.paths, cols.packed(), *shared, ids, slugs, cols.givers, self.sums]
        )

    def dumps_since(self, settings: str) -> bytes:
        """The blob beside the base: the entries changed since it, and what every source shares
        (the names from structure, 4 MB at 100,000 sources, only where they moved since)."""
        shared = self._shared(self.structural if self.moved else None)
        return marshal.dumps(
            [VERSION, settings, self.base, self.since, *shared, self.heads_since, self.sums_since]
        )

    @classmethod
    def loads(cls, blob: bytes, settings: str, since: bytes | None = None) -> Kept | None:
        """The base blob, patched by the one beside it (None where either is not as kept)."""
        parts = _parts(blob, settings, 14)
        if parts is None:
            return None
        cols = Columns(parts[2], Cols(parts[3]), parts[12])
        keys = dict(zip(cols.paths, cols.cols[0], strict=True))
        names = Field(cols, lambda c, i: _split(c.cols[5][i]))
        gives = Field(cols, lambda c, i: _split(c.cols[6][i]))
        kinds = Field(cols, lambda c, i: _split(c.cols[7][i]))
        by_key, structural, title_keys, firsts, sourced, token = parts[4:10]
        shared = (by_key, _structural(structural), title_keys, firsts, sourced, token)
        kept = cls(keys, Field(cols, _meta), names, gives, kinds, *shared)
        kept.columns, kept.heads = cols, dict(zip(parts[10], parts[11], strict=True))
        kept.sums = parts[13]
        kept.base = kept.token
        if since:
            more = _parts(since, settings, 12)
            if more is None or more[2] != kept.base:
                return None
            kept.update(more[3])
            kept.by_key, structural, kept.title_keys, kept.firsts, kept.sourced, kept.token = more[4:10]
            if structural is not None:
                kept.structural, kept.moved = _structural(structural), True
            kept.update_heads(more[10])
            kept.update_sums(more[11])
        return kept

    def entry(self, path: str) -> Entry | None:
        if path not in self.keys:
            return None
        return (self.keys[path], self.meta[path], self.names[path], self.gives[path], self.kinds[path])

    def update(self, entries: dict[str, Entry | None]) -> None:
        """These sources' entries changed (None: gone), and remembered as changed since the base."""
        for path, entry in entries.items():
            if entry is None:
                self.keys.pop(path, None)
            else:
                self.keys[path] = entry[0]
            values = entry[1:] if entry is not None else (None, None, None, None)
            for table, value in zip((self.meta, self.names, self.gives, self.kinds), values, strict=True):
                _put(table, path, value)
        self.since |= entries

    def update_heads(self, heads: dict[str, str | None]) -> None:
        """These pages' slugs are new or changed (None: the page gone), and remembered as changed
        since the base."""
        _patch(self.heads, heads)
        self.heads_since |= heads

    def update_sums(self, sums: dict[str, list[Note] | None]) -> None:
        """These topics' notes left out are new or changed (None: not to be patched, or no page)."""
        _patch(self.sums, sums)
        self.sums_since |= sums

    def meta_columns(self) -> tuple[dict[str, int], list[str], list[int], list[bool], Mapping[str, Any]]:
        """The sources' rows in the base's columns, and their titles, line counts and fallback
        flags there; and the entries changed since, which `meta` has (all of them where the
        entries are dicts: no rows)."""
        if self.columns is None or not isinstance(self.meta, Field):
            return {}, [], [], [], self.meta
        c = self.columns
        return c.index(), c.cols[1], c.cols[2], c.cols[3], self.meta.over

    def titled(self, key: str, skip: set[str]) -> list[tuple[str, str]]:
        """The sources titled by this title key, with their titles (but those in `skip`)."""
        if self.columns is not None and isinstance(self.meta, Field):
            c, over = self.columns, self.meta.over
            hits = [(c.paths[i], c.cols[1][i]) for i in _at(c.cols[4], key) if c.paths[i] not in over]
            hits += [(p, m[0]) for p, m in over.items() if m is not None and m[3] == key]
        else:
            hits = [(p, m[0]) for p, m in self.meta.items() if m[3] == key]
        return [hit for hit in hits if hit[0] not in skip]

    def givers(self, topics: set[str]) -> set[str]:
        """The sources that give names or notes to any of these topics."""
        if not topics:
            return set()
        if self.columns is None or not isinstance(self.gives, Field):
            return {path for path, gives in self.gives.items() if not topics.isdisjoint(gives)}
        c, over = self.columns, self.gives.over
        rows = {i for topic in topics if topic in c.givers for i in marshal.loads(c.givers[topic])}
        found = {c.paths[i] for i in rows} - over.keys()
        return found | {p for p, gives in over.items() if gives is not None and not topics.isdisjoint(gives)}


def _at(keys: list[str], key: str) -> Iterator[int]:
    """Where `key` is in `keys`: list.index scans 100,000 titles' keys in C, a few hits each
    (a loop comparing each in Python took 47 ms a topic asked, three a one-source edit)."""
    i = -1
    while True:
        try:
            i = keys.index(key, i + 1)
        except ValueError:
            return
        yield i


def _structural(packed: list[tuple[str, str, bytes]]) -> list[tuple[str, str, Mapping[str, list[int]]]]:
    return [(name, kind, Lines(lines)) for name, kind, lines in packed]


def _put(table: Mapping[str, Any], path: str, value: Any) -> None:
    if isinstance(table, Field):
        table.put(path, value)
    elif value is None:
        table.pop(path, None)  # type: ignore[attr-defined]
    else:
        table[path] = value  # type: ignore[index]


def _parts(blob: bytes, settings: str, length: int) -> list[Any] | None:
    try:
        parts: list[Any] = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(parts, list) or parts[:2] != [VERSION, settings] or len(parts) != length:
        return None
    return parts


class Unreadable(Exception):
    """A kept page's row that does not read as one (the plan is made in full instead)."""


class Rows(Protocol):
    """The kept plan's pages as state.db has them: the rows of those asked for, and whether the
    heads of the plan kept (its `token`) are the sticky slugs."""

    def kept_rows(self, ids: Iterable[str]) -> dict[str, bytes]: ...

    def heads_are_slugs(self, token: str) -> bool: ...


class RowsOf:
    """Rows from the rows themselves: a plan kept in memory (tests/test_replan.py)."""

    def __init__(self, rows: dict[str, bytes]) -> None:
        self.rows = rows

    def kept_rows(self, ids: Iterable[str]) -> dict[str, bytes]:
        return {pid: self.rows[pid] for pid in ids if pid in self.rows}

    def heads_are_slugs(self, token: str) -> bool:
        return False  # the sticky slugs given


def pages_of(
    before: dict[str, str],
    rows: Rows,
    gone: list[str],
    replanned: set[str],
    topics: set[str],
    own: dict[str, PagePlan],
    new: dict[str, PagePlan],
) -> tuple[Pages, dict[str, str], dict[str, bytes]]:
    """Every page, in the full plan's order (source pages, then topic pages, each by id): those
    the edit leaves as the last plan made them (read and decoded when asked for), and those
    planned again; the slug of every page the last plan kept; and its rows of those planned
    again (build/quick.py compares). `before`: the kept heads (Kept.heads); `gone`: the sources
    deleted since. A row read that does not start with its page's head does not read (Unreadable)."""
    heads = before.values()
    joined = "\t".join(heads)  # as many tabs as heads between them, where none holds one
    if "" in heads or not joined.isascii() or joined.count("\t") != max(len(before) - 1, 0):
        raise Unreadable(next(p for p, h in before.items() if not h or not h.isascii() or "\t" in h))
    again = {f"source:{path}" for path in [*replanned, *gone]} | {f"topic:{cid}" for cid in topics}
    redone = [pid for pid in again if pid in before]
    rows_before = rows.kept_rows(redone)
    if len(rows_before) != len(redone):
        raise Unreadable(next(pid for pid in redone if pid not in rows_before))
    for pid, row in rows_before.items():
        if not row.startswith(f"{before[pid]}\n".encode()):
            raise Unreadable(pid)
    ids = [pid for pid in before if pid not in again]
    unread = set(ids)
    ids += [pid for pid in [*own, *new] if pid not in unread]
    ids.sort()  # nearly sorted already: the few pages planned again put in place
    return Pages(ids, own | new, unread, rows), before, rows_before


class Pages(Mapping[str, PagePlan]):
    """A patched plan's pages: those planned again as made, each other one read and decoded
    from the row the last plan kept when first asked for (an edit among 10,000 pages asks for
    few). `slugs`: every page's slug (a decoded page takes its own)."""

    def __init__(self, ids: list[str], made: dict[str, PagePlan], unread: set[str], rows: Rows) -> None:
        self.ids, self.decoded, self.unread, self.rows = ids, made, unread, rows
        self.slugs: dict[str, str] = {}
        self.sticky = False  # `slugs` are the sticky slugs it went by, page for page (Rows.heads_are_slugs)
        # else the slugs (new or moved) and the pages gone that make the sticky slugs `slugs`
        self.slugs_patch: tuple[dict[str, str], list[str]] | None = None
        self.sources: list[SourceInfo] = []  # the plan's: their titles are their pages' (title())
        self._titles: dict[str, str] = {}

    def __getitem__(self, pid: str) -> PagePlan:
        page = self.decoded.get(pid)
        if page is None:
            if pid not in self.unread:
                raise KeyError(pid)
            self.load([pid])
            page = self.decoded[pid]
        return page

    def load(self, ids: Iterable[str]) -> None:
        """These pages read at once (those not read yet)."""
        wanted = [pid for pid in ids if pid not in self.decoded and pid in self.unread]
        rows = self.rows.kept_rows(wanted) if wanted else {}
        for pid in wanted:
            try:
                row = rows[pid]
                page = _page(marshal.loads(row[row.index(b"\n") + 1 :]))
            except (KeyError, EOFError, ValueError, TypeError, IndexError) as exc:
                raise StateError(
                    f"a page kept in state.db does not read ({pid}); run `wikic build --force`"
                ) from exc
            page.slug = self.slugs.get(pid, page.slug)
            self.decoded[pid] = page

    def title(self, path: str) -> str | None:
        """The title of a source's page, as pages linking to it show it, without decoding the
        page (None: no such source, or no sources given)."""
        if not self._titles and self.sources:
            self._titles = {src.path: src.title for src in self.sources}
        return self._titles.get(path)

    def __contains__(self, pid: object) -> bool:
        return pid in self.decoded or pid in self.unread

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def values(self) -> ValuesView[PagePlan]:
        self.load(self.ids)  # every page: read at once, not one query each
        return super().values()

    def items(self) -> ItemsView[str, PagePlan]:
        self.load(self.ids)
        return super().items()


def row_of(page: PagePlan) -> bytes:
    """A page as a plan keeps it: its slug (the row's head, read without decoding the page), a
    newline, and the page."""
    return f"{page.slug}\n".encode() + marshal.dumps(_flat(page))


class EveryRow(Mapping[str, bytes]):
    """Every page's row (row_of), made as it is read: a full plan's rows go into state.db one
    at a time (state.keep_plan), never all held beside the plan (120 MB at 100,000 sources)."""

    def __init__(self, pages: Mapping[str, PagePlan]) -> None:
        self.pages = pages

    def __getitem__(self, pid: str) -> bytes:
        return row_of(self.pages[pid])

    def __iter__(self) -> Iterator[str]:
        return iter(self.pages)

    def __len__(self) -> int:
        return len(self.pages)


def claims_of(row: bytes) -> list[tuple[str, str, int, int, str]]:
    """The notes of a page as a plan kept it (row_of)."""
    claims: list[tuple[str, str, int, int, str]] = marshal.loads(row[row.index(b"\n") + 1 :])[6]
    return claims


def _flat(page: PagePlan) -> tuple[Any, ...]:
    claims = [tuple(c) for c in page.claims]
    head = (page.id, page.title, page.type, page.slug, page.aliases, page.sources, claims)
    return (*head, page.summary, page.topics, page.in_text, page.summary_lines)


def _page(flat: tuple[Any, ...]) -> PagePlan:
    pid, title, kind, slug, aliases, sources, claims, summary, topics, in_text, said = flat
    notes = list(map(Claim._make, claims))  # a third of Claim(*c)'s time: 60,000 at 10,000 sources
    page = PagePlan(pid, title, kind, slug, aliases, sources, notes, summary, topics)
    page.in_text = in_text
    page.summary_lines = said
    return page


def _patch(table: dict[str, T], changes: Mapping[str, T | None]) -> None:
    """`table` with these keys set to their values, or dropped where None."""
    for key, value in changes.items():
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
