"""What the rules across pages read of the wiki's names: how a link target resolves to a page
(slugs, titles, aliases, attachments) and each page's path and titles, apart from the pages
themselves, so that the lint cache can keep it and check a few changed pages against it."""

from __future__ import annotations

import json
import marshal
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress
from typing import Any, NamedTuple

from wikic.hashing import FINGERPRINT, digest
from wikic.state import Meta, State
from wikic.wiki.page import Page, link_label
from wikic.wiki.read import Resolver, Wiki, name_table


class Named(NamedTuple):
    """A page as the names read it."""

    rel: str
    title: str  # Page.title: what broken-link suggests
    shown: str  # the title index.md shows for it (rules.index_title)


class Head(NamedTuple):
    """What the rules across pages read of a page besides its links, bold terms and Topics
    items: its names, its type and whether it could be read (a full lint keeps every page's)."""

    slug: str
    rel: str
    type: str
    title: str
    shown: str  # index_title
    aliases: tuple[str, ...]
    unread: bool  # the page could not be read (Page.read_error)


def head_of(page: Page) -> Head:
    title = page.title
    shown = index_title(page)
    return Head(
        page.slug,
        page.rel,
        sys.intern(page.type),
        title,
        title if shown == title else shown,  # one string held where they are the same
        tuple(page.aliases),
        bool(page.read_error),
    )


def topic_heads(heads: Iterable[Head]) -> list[Head]:
    """The heads duplicate-page reads (topics.duplicates): pages other than sources', read."""
    return [h for h in heads if h.type != "source" and not h.unread]


def names_blob(data: dict[str, Any]) -> bytes:
    """The names as Meta.LINT_NAMES keeps them: marshalled, after their key (names_key), so
    that a lint that only compares keys does not hash 15 MB (100,000 pages) to have it."""
    packed = marshal.dumps(data)
    return digest(packed, FINGERPRINT).encode() + b"\n" + packed


def names_key(raw: bytes) -> str:
    """The key of the names (Meta.LINT_NAMES, names_blob's) that the findings across pages
    were made with: their hash, as written before them."""
    return raw[:FINGERPRINT].decode("ascii", "replace")


def names_data(raw: bytes) -> dict[str, Any] | None:
    """What names_blob kept (None: not names_blob's: the lint counts every page again)."""
    if raw[FINGERPRINT : FINGERPRINT + 1] != b"\n":
        return None
    try:
        data = marshal.loads(memoryview(raw)[FINGERPRINT + 1 :])
    except (EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) and "names" in data and "have" in data else None


def index_title(page: Page) -> str:
    """The title index.md shows for a page (as assemble's foreign_entry reads it)."""
    return link_label(str(page.meta.get("title") or page.slug), page.slug)


@dataclass
class Names(Resolver):
    """Every page's names as a Wiki resolves them, without the pages."""

    pages: Mapping[str, Named]  # slug -> its path and titles (a full lint's: in the wiki's order)
    names: dict[str, str]  # casefolded title or alias -> slug (Wiki.names)
    files: set[str]  # casefolded names of the attachments
    _slugs: Mapping[str, str] = field(default_factory=dict)
    _resolved: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        pages = self.pages
        if isinstance(pages, (Rows, Laid)):  # the kept names: casefolded once a build, not once a change
            self._slugs = pages.folded()
        else:
            self._slugs = {slug.casefold(): slug for slug in pages}

    @classmethod
    def of_heads(cls, heads: Iterable[Head], files: set[str]) -> Names:
        """The names of the pages of these heads (in the wiki's order), as Names.of their Wiki."""
        heads = list(heads)
        pages = {h.slug: Named(h.rel, h.title, h.shown) for h in heads}
        return cls(pages, name_table((h.slug, h.type, h.title, h.aliases) for h in heads), files)

    @classmethod
    def of(cls, wiki: Wiki) -> Names:
        pages = {slug: Named(p.rel, p.title, index_title(p)) for slug, p in wiki.pages.items()}
        return cls(pages, wiki.names, wiki.files)

    def inbound(self, pages: Iterable[Page]) -> dict[str, int]:
        """slug -> how many other pages link to it (index.md does not count)."""
        counts = dict.fromkeys(self.pages, 0)
        for page in pages:
            for target in self.outlinks(page):
                if target != page.slug:
                    counts[target] += 1
        return counts

    def columns(self) -> dict[str, Any]:
        """The pages' names and the name table as the kept names have them (Rows)."""
        pages = self.pages
        cols = pages.columns() if isinstance(pages, (Rows, Laid)) else None
        if cols is None:
            named = list(pages.values())
            cols = [list(pages), [n.rel for n in named], [n.title for n in named], [_shown(n) for n in named]]
        return {"pages": cols, "names": [list(self.names), list(self.names.values())]}


def _shown(named: Named) -> str | None:
    """A page's index title as the kept names have it: None where it is the title."""
    return None if named.shown == named.title else named.shown


class Rows(Mapping[str, Named]):
    """The pages' names as the kept names have them: columns of slugs, paths, titles and index
    titles (None: the title), each page made a Named where first asked for, since a patch reads
    a few of them (making all 100,000 took 0.2 s, decoding them as JSON 0.3 s)."""

    def __init__(self, columns: list[list[Any]]) -> None:
        self.slugs, self._rels, self._titles, self._shown = columns
        self._at: dict[str, int] | None = None
        self._folded: dict[str, str] | None = None

    def folded(self) -> dict[str, str]:
        """Casefolded slug -> slug (the last of those that fold the same, as a dict makes it)."""
        if self._folded is None:
            self._folded = {slug.casefold(): slug for slug in self.slugs}
        return self._folded

    def _row(self, slug: str) -> int:
        if self._at is None:
            self._at = dict(zip(self.slugs, range(len(self.slugs)), strict=True))
        return self._at[slug]

    def __getitem__(self, slug: str) -> Named:
        i = self._row(slug)
        title, shown = self._titles[i], self._shown[i]
        return Named(self._rels[i], title, title if shown is None else shown)

    def __contains__(self, slug: object) -> bool:
        try:
            self._row(slug)  # type: ignore[arg-type]
        except (KeyError, TypeError):
            return False
        return True

    def columns(self) -> list[list[Any]]:
        return [self.slugs, self._rels, self._titles, self._shown]

    def __iter__(self) -> Iterator[str]:
        return iter(self.slugs)

    def __len__(self) -> int:
        return len(self.slugs)


class Laid(Mapping[str, Named]):
    """Pages' names (`base`) with pages taken out (`out`) and added (`over`, each of them among
    those taken out) laid over them: the kept names changed by the pages a build added or
    removed, the rest not copied."""

    def __init__(
        self,
        base: Mapping[str, Named],
        over: dict[str, Named] | None = None,
        out: frozenset[str] = frozenset(),
    ) -> None:
        self.base, self.over, self.out = base, over or {}, out

    @classmethod
    def of(cls, pages: Mapping[str, Named], add: Mapping[str, Named], drop: Iterable[str] = ()) -> Laid:
        """`pages` with those `drop` names taken out, then those `add` has put in."""
        laid = pages if isinstance(pages, Laid) else cls(pages)
        drop = frozenset(drop)
        over = {slug: named for slug, named in laid.over.items() if slug not in drop} | dict(add)
        return cls(laid.base, over, laid.out.union(drop, over))

    def __getitem__(self, slug: str) -> Named:
        if slug in self.out:
            return self.over[slug]
        return self.base[slug]

    def columns(self) -> list[list[Any]] | None:
        """These pages' names as Rows has them: the base's rows but those taken out, then those
        added, not each made a Named (None: the base is not Rows)."""
        if not isinstance(self.base, Rows):
            return None
        kept = [slug not in self.out for slug in self.base.slugs]
        cols = [list(compress(col, kept)) for col in self.base.columns()]
        for slug, named in self.over.items():
            for col, value in zip(cols, (slug, named.rel, named.title, _shown(named)), strict=True):
                col.append(value)
        return cols

    def folded(self) -> Mapping[str, str]:
        """Casefolded slug -> slug, as a dict makes it from these pages in their order."""
        if isinstance(self.base, Rows) and len(base := self.base.folded()) == len(self.base):
            return _Folded(base, self.out, {slug.casefold(): slug for slug in self.over})
        return {slug.casefold(): slug for slug in self}  # two slugs that fold the same: in order

    def __contains__(self, slug: object) -> bool:
        return slug in self.over if slug in self.out else slug in self.base

    def __iter__(self) -> Iterator[str]:
        yield from (slug for slug in self.base if slug not in self.out)
        yield from self.over

    def __len__(self) -> int:
        return len(self.base) - sum(1 for slug in self.out if slug in self.base) + len(self.over)


class _Folded(Mapping[str, str]):
    """Casefolded slug -> slug of pages laid over others (Laid), where no two of those fold the
    same: theirs (`base`) but those taken out, then those added (`over`)."""

    def __init__(self, base: dict[str, str], out: frozenset[str], over: dict[str, str]) -> None:
        self.base, self.out, self.over = base, out, over

    def __getitem__(self, key: str) -> str:
        if key in self.over:
            return self.over[key]
        slug = self.base[key]
        if slug in self.out:
            raise KeyError(key)
        return slug

    def __iter__(self) -> Iterator[str]:
        yield from (key for key, slug in self.base.items() if slug not in self.out and key not in self.over)
        yield from self.over

    def __len__(self) -> int:
        return sum(1 for _ in self)


FOLD = 256  # changes of names kept apart at most (KeptNames.changed)
Shared = dict[str, list[str]]  # a name more than one page has -> those pages, the one it resolves to first
Keyed = dict[str, int]  # a topic key more than one page's names have -> how many pages


def shared_names(names: dict[str, str], heads: Iterable[Head]) -> Shared:
    """The names more than one of these pages has (`names`: name_table's, which gives each to
    one): each with every page that has it, in name_table's order (the first is the one it
    gives the name to), so that where that one goes the next takes it (lint/came.py)."""
    shared: Shared = {}
    for head in sorted(heads, key=lambda h: (h.type == "source", h.slug)):
        for name in dict.fromkeys(n.casefold().strip() for n in [head.title, *head.aliases]):
            first = names[name]
            if first != head.slug:
                shared.setdefault(name, [first]).append(head.slug)
    return shared


class KeptNames:
    """The names the last stored lint kept (Meta.LINT_NAMES: names_blob's, 15 MB at 100,000
    pages), with the changes builds made to them since by adding or removing pages
    (Meta.LINT_NAMES_MORE: lint/came.py, a JSON list of changes, so that a change stores its
    own names, not every page's again); read (`read`, `read_more`) and decoded once, where first
    asked for: a patch of the lint summary checks index.md and the pages whose links changed
    against them."""

    def __init__(
        self,
        read: Callable[[], bytes | None],
        files: set[str],
        read_more: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._read, self._read_more, self.files = read, read_more, files
        self._raw: bytes | None = None
        self._more: str | None = None
        self._decoded: tuple[Names, set[str]] | None = None
        self.topics: list[Head] | None = None  # the heads duplicate-page reads (topic_heads), once decoded
        # the names and topic keys more than one page has, once decoded (None: names a wikic
        # before them kept, which no removal of pages can patch)
        self.shared: Shared | None = None
        self.keyed: Keyed | None = None
        self.unread: list[str] | None = None  # the pages no source's that could not be read
        self.folded = False  # the changes written into the names whole (changed)

    @classmethod
    def stored(cls, state: State, files: set[str]) -> KeptNames:
        """The names state.db keeps (with the changes since), read once, if at all."""
        return cls(
            lambda: state.get_meta_blob(Meta.LINT_NAMES), files, lambda: state.get_meta(Meta.LINT_NAMES_MORE)
        )

    @property
    def raw(self) -> bytes | None:
        if self._raw is None:
            self._raw = self._read()
        return self._raw

    @property
    def more(self) -> str:
        """The changes' JSON ("[]": none)."""
        if self._more is None:
            self._more = self._read_more() or "[]"
        return self._more

    def key(self) -> str | None:
        """What the findings across pages were made with (Saved.names): names_key of the names
        as a full lint stored them, with the changes since."""
        raw = self.raw
        if raw is None:
            return None
        more = self.more
        return names_key(raw) if more == "[]" else digest(f"{names_key(raw)}\n{more}", FINGERPRINT)

    def decoded(self) -> tuple[Names, set[str]] | None:
        """The names, and the topic keys of every page's names (None: none kept)."""
        if self._decoded is None and self.raw is not None:
            data = names_data(self.raw)
            if data is None:
                return None
            keys, slugs = data["names"]["names"]
            kept = _Decoding(
                Rows(data["names"]["pages"]),
                dict(zip(keys, slugs, strict=True)),
                set(data["have"]),
                None if (topics := data.get("topics")) is None else [Head(*h) for h in topics],
                data.get("shared"),
                data.get("keyed"),
                data.get("unread"),
            )
            for change in json.loads(self.more):
                kept.apply(change)
            self._decoded = Names(kept.pages, kept.names, self.files), kept.have
            self.topics = kept.topics
            self.shared, self.keyed, self.unread = kept.shared, kept.keyed, kept.unread
        return self._decoded

    def changed(
        self,
        names: Names,
        have: set[str],
        topics: list[Head],
        shared: Shared | None,
        keyed: Keyed | None,
        change: dict[str, Any],
        whole: bool = False,
    ) -> KeptNames:
        """These names, which are the kept ones with the `change` made (pages added or removed,
        as lint/came.py makes it): not decoded again, and stored as one more change; every FOLD
        changes, all of them written into the names whole instead (`folded`: then
        Meta.LINT_NAMES is to be stored too), so that the changes read by each lint stay few;
        and so where `whole` (a page gone for good: no byte of a deleted source stays in
        state.db, its names in the changes or in the names whole neither, as the plan's base)."""
        kept = KeptNames(self._read, self.files)
        more = [*json.loads(self.more), change]
        kept._decoded, kept.topics, kept.shared, kept.keyed = (names, have), topics, shared, keyed
        gone = set(change.get("gone", ()))
        kept.unread = None if self.unread is None else [s for s in self.unread if s not in gone]
        kept.folded = self.folded  # written into the whole by a change before this one
        if len(more) < FOLD and not whole:
            kept._raw = self._raw
            kept._more = json.dumps(more, ensure_ascii=False)
        else:
            data: dict[str, Any] = {"names": names.columns(), "have": sorted(have), "topics": _rows(topics)}
            if shared is not None and keyed is not None and kept.unread is not None:
                data |= {"shared": shared, "keyed": keyed, "unread": kept.unread}
            kept._raw, kept._more, kept.folded = names_blob(data), "[]", True
        return kept


def _rows(heads: Iterable[Head]) -> list[tuple[Any, ...]]:
    """Heads as the kept names have them (marshal takes tuples, not named ones)."""
    return [tuple(h) for h in heads]


@dataclass
class _Decoding:
    """The kept names as they are decoded, a change at a time."""

    pages: Mapping[str, Named]
    names: dict[str, str]
    have: set[str]
    topics: list[Head] | None
    shared: Shared | None
    keyed: Keyed | None
    unread: list[str] | None

    def apply(self, change: dict[str, Any]) -> None:
        """One change (lint/came.py): pages gone, then the names, keys and heads they leave or
        hand on; pages added, with theirs."""
        gone = set(change.get("gone", ()))
        added = {slug: Named(*named) for slug, named in change.get("pages", {}).items()}
        self.pages = Laid.of(self.pages, added, gone)
        for name in change.get("unnamed", ()):
            self.names.pop(name, None)
        self.names.update(change.get("names", {}))
        self.have.difference_update(change.get("unhave", ()))
        self.have.update(change.get("have", ()))
        if self.topics is not None:
            kept = [h for h in self.topics if h[0] not in gone] if gone else self.topics
            self.topics = kept + [_head(h) for h in change.get("topics", [])]
        if self.unread is not None and gone:
            self.unread = [slug for slug in self.unread if slug not in gone]
        if self.shared is not None and self.keyed is not None:
            shared_and_keyed(self.shared, self.keyed, change)


def shared_and_keyed(shared: Shared, keyed: Keyed, change: dict[str, Any]) -> None:
    """The names and topic keys more than one page has, with a change made (in place): those
    it says one page or none has now are no longer among them."""
    for name, pages in change.get("shared", {}).items():
        if len(pages) > 1:
            shared[name] = pages
        else:
            shared.pop(name, None)
    for key, count in change.get("keyed", {}).items():
        if count > 1:
            keyed[key] = count
        else:
            keyed.pop(key, None)


def _head(h: list[Any]) -> Head:
    """A head as a change keeps it (JSON: its aliases a list)."""
    return Head(h[0], h[1], h[2], h[3], h[4], tuple(h[5]), h[6])
