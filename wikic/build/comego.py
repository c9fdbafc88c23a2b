"""An edit whose pages come or go (a source added, a topic that now has enough sources, one
that no longer has): the names the linker reads change by theirs alone, and only the pages
whose text can name them are assembled again (quick.py), not every page.

What a page's body reads of the names is what its text (the text the linker reads: a source
page's summary, a topic page's composed sentences) holds: autolink looks up the phrases it
writes, resolve the [[targets]] it writes, each casefolded, so a name (or a slug, which a
[[target]] may name) that no page's text holds as a casefolded substring changes no body.
The one look-up that reads more is resolve's match by likeness: a page with a [[target]]
like a name now had (rapidfuzz ratio of 90 or more) is assembled again, as is a page linking
to a page that a name no longer goes to with a [[target]] like that name, and every page
linking to a page gone. A page renamed under its slug (a topic page that took an alias, a
source retitled) is not gone: a link to it still finds it, and only a title it changed is
shown anew by the pages linking to it (a topic page's sources, a source page's topics, listed
by title). The last assembly keeps each
page's text for this (state: assembled_text), and the names' fingerprint is a sum
(linker.names_sum), brought up to date from the names that changed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from rapidfuzz import fuzz

from wikic.build.linker import LIKE, moved_sum
from wikic.state import State
from wikic.wiki.page import WIKILINK

Entry = tuple[str, str, list[str], str]  # a page's title, type, aliases and id ("": not the build's)
V = TypeVar("V")


def names_of(entry: Entry) -> set[str]:
    """The names a page's entry gives the linker (Linker: casefolded, stripped)."""
    return {name.casefold().strip() for name in [entry[0], *entry[2]]}


@dataclass
class Came:
    """The pages new and gone (slug -> entry), and what that did to the names: each name of
    theirs with its slug before and now (None: no page's), the fingerprint and heads now."""

    added: dict[str, Entry]
    gone: dict[str, Entry]
    was: dict[str, str | None]
    now: dict[str, str | None]
    fingerprint: str
    heads: set[str]

    def changed(self) -> dict[str, str | None]:
        """name -> its slug now, of the names whose slug changed."""
        return {k: s for k, s in self.now.items() if s != self.was[k]}

    def strings(self) -> list[str]:
        """What a page's text holds (casefolded) where these names can change its body: the
        names whose slug changed, and the slugs new or gone (a [[target]] may be a slug; a
        page renamed, among both, keeps its own)."""
        slugs = {slug.casefold() for slug in self.added.keys() ^ self.gone.keys()}
        return sorted({*self.changed(), *slugs} - {""})

    def left(self) -> set[str]:
        """The pages gone, and those renamed with another title (a page listing its sources
        or topics shows their titles)."""
        return {
            slug
            for slug, then in self.gone.items()
            if slug not in self.added or self.added[slug][0] != then[0]
        }

    def went_from(self) -> dict[str, str]:
        """name -> the slug it went to and no longer does."""
        return {k: s for k, s in self.was.items() if s is not None and self.now[k] != s}


def came(
    fingerprint: str,
    heads: set[str],
    names: Mapping[str, str],
    entries: Mapping[str, Entry],
    added: dict[str, Entry],
    gone: dict[str, Entry],
    having: Callable[[set[str]], dict[str, Entry]],
) -> Came:
    """What the pages `added` and `gone` do to the names (`names`, `entries`: as the last
    assembly kept them; `having`: its entries that have any of these names, read where a
    name's page goes and another may have it). A name goes to the first of its pages by (type
    is "source", slug), as the linker's table has it."""
    keys = {k for entry in [*added.values(), *gone.values()] for k in names_of(entry)}
    load = getattr(names, "load", None)
    if load is not None:
        load(keys)
    was = {k: names.get(k) for k in keys}
    holders: dict[str, list[tuple[bool, str]]] = {k: [] for k in keys}
    if any(slug in gone for slug in was.values()):  # who else has the names of a page gone
        for slug, entry in having(keys).items():
            if slug not in gone:
                for k in names_of(entry) & keys:
                    holders[k].append((entry[1] == "source", slug))
    else:
        for k, had in was.items():
            if had is not None:
                holders[k].append((entries[had][1] == "source", had))
    for slug, entry in added.items():
        for k in names_of(entry):
            holders[k].append((entry[1] == "source", slug))
    now = {k: min(found)[1] if found else None for k, found in holders.items()}
    out = [(b"n", k, s) for k, s in was.items() if s is not None and now[k] != s]
    out += [(b"t", slug, e[0]) for slug, e in gone.items()]
    into = [(b"n", k, s) for k, s in now.items() if s is not None and was[k] != s]
    into += [(b"t", slug, e[0]) for slug, e in added.items()]
    grown = heads | {k[:3] for k, s in now.items() if s is not None and len(k) >= 3}
    return Came(added, gone, was, now, moved_sum(fingerprint, out, into), grown)


def touched(state: State, change: Came) -> set[str]:
    """The slugs of the pages whose body the change can touch (see the module), the pages
    gone among them: the text they keep names one of the names or slugs, a [[target]] of theirs
    is like a name now had, or like a name that no longer goes to the page it links to, or
    they link to a page gone or retitled."""
    found = state.assembled_naming(change.strings())
    named = [k for k, s in change.changed().items() if s is not None]
    if named:
        for slug, text in state.assembled_texts_with("[["):
            if slug not in found and _targets_like(text, named):
                found.add(slug)
    found.update(s for linking in state.linked_from(change.left()).values() for s in linking)
    went = change.went_from()  # a [[target]] resolved by likeness to one may go elsewhere now
    if went:
        linking = {s for slugs in state.linked_from(set(went.values())).values() for s in slugs} - found
        names = list(went)
        found.update(slug for slug, text in state.assembled_texts_of(linking) if _targets_like(text, names))
    return found


def _targets_like(text: str, names: list[str]) -> bool:
    return "[[" in text and any(_like(m.group(1).strip(), names) for m in WIKILINK.finditer(text))


def _like(target: str, names: list[str]) -> bool:
    return any(fuzz.ratio(target, name) >= LIKE for name in names)


class Patched(Mapping[str, V]):
    """A mapping as `base` has it, with `changes` over it (a value None: not there)."""

    def __init__(self, base: Mapping[str, V], changes: Mapping[str, V | None]) -> None:
        self.base, self.changes = base, changes

    def __getitem__(self, key: str) -> V:
        if key in self.changes:
            value = self.changes[key]
            if value is None:
                raise KeyError(key)
            return value
        return self.base[key]

    def load(self, keys: Iterable[str]) -> None:
        load = getattr(self.base, "load", None)
        if load is not None:
            load(k for k in keys if k not in self.changes)

    def __iter__(self) -> Iterator[str]:
        yield from (k for k in self.base if k not in self.changes)
        yield from (k for k, v in self.changes.items() if v is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def patched_entries(entries: Mapping[str, Entry], change: Came) -> Patched[Entry]:
    gone: dict[str, Any] = dict.fromkeys(change.gone)
    return Patched(entries, {**gone, **change.added})
