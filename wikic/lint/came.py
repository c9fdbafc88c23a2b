"""The lint summary's patch (totals.py) where the build added pages (a source new: its page)
or removed them (a source deleted): the wiki's names grow or shrink by theirs alone, and the
findings across pages they can change are those of the pages the build wrote, of the pages
whose links, bold terms or Topics items name them (lint_text: what the rules across pages
resolve of each page, casefolded; a link resolves by its target's casefolded text or file
stem, which hold a name or a slug as a substring), and of the pages with broken links (what
one suggests is of every page's names), each read before with the names as they were and now
with the names changed (moved.py). What keys a page new takes for the topics (missing-page)
are no page's missing ones now; a key no page has once pages went is treated as a topic by the
pages whose names text holds each of its words, which are read again too. The change of names
is stored beside those a full lint stored (names.KeptNames), not every page's again.

A name goes to the first of the pages that have it by (type is "source", slug), as
name_table gives it: a page new takes a name some page has where it comes first, and pages
gone hand each name they had to the next page that has it, which the names kept say
(`shared`: the names more than one page has; `keyed`: the topic keys, with how many pages
have each; `unread`: the pages no source's that could not be read, which with the topic
pages' heads say which pages are no source's). Names kept by a wikic before those: the
cached lint counts every page (cache.py), once. A topic page new or gone (not a source's)
may be or have been another's twin: duplicate-page runs again over the heads of the topic
pages, which the last lint kept (kept_names)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from wikic.lint import topics
from wikic.lint.facts import Facts
from wikic.lint.names import (
    Head,
    KeptNames,
    Keyed,
    Laid,
    Named,
    Names,
    Shared,
    head_of,
    index_title,
    names_blob,
    shared_and_keyed,
    shared_names,
    topic_heads,
)
from wikic.wiki.page import PLAIN, Page
from wikic.wiki.read import name_table


def strings(pages: Iterable[Page]) -> list[str]:
    """What a page's lint_text holds where its findings across pages can change by these
    pages new: their names and slugs, casefolded."""
    pages = list(pages)
    found = {p.slug.casefold() for p in pages}
    found |= {name.casefold().strip() for p in pages for name in [p.title, *p.aliases]}
    return sorted(found - {""})


def looked_for(
    went: Mapping[str, Page], came: Mapping[str, Page], keys: Mapping[str, int]
) -> tuple[list[str], list[list[str]]]:
    """What a page's names text holds where its findings across pages can change by the pages
    gone and new (by path; a page renamed is among both): their names and slugs (strings()),
    but of a page renamed under one path, of one type, only the names it lost or took (a link
    by a name it kept, or by its slug, resolves as it did: wiki.read.name_table orders pages
    by type and slug alone); and the words of each topic key no page has now (`keys`:
    Gone.keys(), a key with 0), but those the pages new or renamed have. A topic page that
    took an alias is not every page that names it by its title."""
    found = set(strings([page for rel, page in went.items() if rel not in came]))
    found |= set(strings([page for rel, page in came.items() if rel not in went]))
    for rel in went.keys() & came.keys():
        old, new = went[rel], came[rel]
        if old.type == new.type:
            found |= set(strings([old])) ^ set(strings([new]))
        else:
            found |= {*strings([old]), *strings([new])}
    kept = {key for page in came.values() for key in topics.head_keys(head_of(page))}
    words = [key.split() for key, n in keys.items() if n == 0 and key and key not in kept]
    return sorted(found), words


@dataclass
class Added:
    """The pages new, by path."""

    pages: dict[str, Page]

    def grow(self, kept: KeptNames, seek: bool = True) -> Changed | None:
        """The kept names (decoded), the topic keys of the pages' names (`seek`: missing-page is
        on, so that the lint keeps them) and the heads duplicate-page reads with the pages new
        among them; a name some page has already goes to the first of its pages by (type is
        "source", slug), as name_table gives it. None where one is unread, or the names kept do
        not say the rest (a wikic before them)."""
        decoded = kept.decoded()
        assert decoded is not None
        names, have = decoded
        heads = [head_of(page) for page in self.pages.values()]
        if any(h.slug in names.pages or h.unread for h in heads):
            return None
        new = topic_heads(heads)
        if new and kept.topics is None:
            return None
        named = name_table((h.slug, h.type, h.title, h.aliases) for h in heads)
        held = _held(kept, heads, named.keys() & names.names.keys(), new)
        if held is None:
            return None
        mine = {p.slug: Named(p.rel, p.title, index_title(p)) for p in self.pages.values()}
        table = {**named, **{name: holders[0] for name, holders in held.items()}}
        grown = Names(Laid.of(names.pages, mine), {**names.names, **table}, names.files)
        counts = topics.key_counts(heads) if seek else {}
        change: dict[str, Any] = {
            "pages": {s: list(n) for s, n in mine.items()},
            "names": table,
            "have": sorted(counts),
            "topics": [list(h) for h in new],
        }
        shared, keyed = kept.shared, kept.keyed
        if shared is not None and keyed is not None:  # the names and keys the pages new share
            change["shared"] = shared_names(named, heads) | held
            change["keyed"] = {
                key: total for key, n in counts.items() if (total := n + keyed.get(key, key in have)) > 1
            }
            shared, keyed = dict(shared), dict(keyed)
            shared_and_keyed(shared, keyed, change)
        return Changed(
            grown, have | counts.keys(), [*(kept.topics or []), *new], bool(new), change, shared, keyed
        )


def _held(kept: KeptNames, heads: list[Head], taken: Iterable[str], new: list[Head]) -> Shared | None:
    """Each name `taken` (one the pages `heads` new have that some page has already) with every
    page that has it now, in name_table's order (the pages no source's first, then by slug): the
    kept names say those that had it (KeptNames.shared) and which pages are no source's (the topic
    pages' heads, the unread pages); None where they do not (a wikic before them kept them)."""
    taken = sorted(taken)
    if not taken:
        return {}
    decoded = kept.decoded()
    if decoded is None or kept.shared is None or kept.topics is None or kept.unread is None:
        return None
    names, shared = decoded[0].names, kept.shared
    others = {h.slug for h in [*kept.topics, *new]} | set(kept.unread)
    claims: dict[str, list[str]] = {}
    for h in heads:
        for name in dict.fromkeys(n.casefold().strip() for n in [h.title, *h.aliases]):
            claims.setdefault(name, []).append(h.slug)
    return {
        name: sorted(
            [*(shared.get(name) or [names[name]]), *claims[name]], key=lambda s: (s not in others, s)
        )
        for name in taken
    }


@dataclass
class Gone:
    """The pages gone, by path, as the last lint kept their facts (facts.page_of)."""

    pages: dict[str, Page]

    def shrink(self, kept: KeptNames, seek: bool) -> Changed | None:
        """The kept names (decoded) without these pages: each name they had given to the next
        page that has it (KeptNames.shared), if any; the topic keys no other page has taken out
        of them (`seek`: missing-page is on, so that the lint kept them), the pages' heads out
        of those duplicate-page reads. None where the names kept do not say who else has their
        names (a wikic before that kept them), or the pages are not among them as they are."""
        decoded = kept.decoded()
        assert decoded is not None
        names, have = decoded
        shared, keyed = kept.shared, kept.keyed
        heads = [head_of(page) for page in self.pages.values()]
        slugs = {h.slug for h in heads}
        if shared is None or keyed is None or kept.topics is None:
            return None
        if len(slugs) < len(heads) or any(
            h.slug not in names.pages or names.pages[h.slug].rel != h.rel for h in heads
        ):
            return None
        change: dict[str, Any] = {"gone": sorted(slugs), "names": {}, "unnamed": [], "shared": {}}
        having: dict[str, set[str]] = {}  # each name of the pages gone -> those of them that have it
        for h in heads:
            for name in [h.title, *h.aliases]:
                having.setdefault(name.casefold().strip(), set()).add(h.slug)
        table = dict(names.names)
        for name, mine in sorted(having.items()):
            holders = shared.get(name) or [table.get(name, "")]
            if table.get(name) != holders[0] or not mine <= set(holders):
                return None  # not as these pages' names were kept
            rest = [slug for slug in holders if slug not in slugs]
            if rest:
                table[name] = change["names"][name] = rest[0]
            else:
                del table[name]
                change["unnamed"].append(name)
            if name in shared:
                change["shared"][name] = rest
        pages = Laid.of(names.pages, {}, slugs)
        left = set(have)
        if seek:
            counts = self.keys(kept)
            if counts is None:
                return None
            left -= {key for key, total in counts.items() if total == 0}
            change["keyed"], change["unhave"] = counts, sorted(have - left)
        shared, keyed = dict(shared), dict(keyed)
        shared_and_keyed(shared, keyed, change)
        twins = bool(topic_heads(heads))
        heads_left = [h for h in kept.topics if h.slug not in slugs]
        return Changed(Names(pages, table, names.files), left, heads_left, twins, change, shared, keyed)

    def keys(self, kept: KeptNames) -> dict[str, int] | None:
        """The topic keys of these pages' names, each with how many pages have it once they
        are gone (0: no page, so that pages that treat it as a topic now say it has none);
        None where the keys kept do not say, or are not as these pages' were kept."""
        decoded = kept.decoded()
        if decoded is None or kept.keyed is None:
            return None
        have, keyed = decoded[1], kept.keyed
        counts: dict[str, int] = {}
        for page in self.pages.values():
            for key in topics.head_keys(head_of(page)):
                counts[key] = counts.get(key, keyed.get(key, key in have)) - 1
        return None if any(n < 0 for n in counts.values()) else dict(sorted(counts.items()))


@dataclass
class Change:
    """What a build changed of the pages' names: the pages `gone` (as the last lint kept their
    facts) and `added` (as they are), a page whose names changed (`renamed`) among both; and
    the pages whose findings across pages that can change though their facts did not
    (`relinked`: their facts)."""

    gone: Gone | None = None
    added: Added | None = None
    renamed: set[str] = field(default_factory=set)
    relinked: dict[str, Facts] = field(default_factory=dict)


@dataclass
class Changed:
    """The names with pages added (Added.grow) or gone (Gone.shrink); `twins`: a topic page
    (not a source's) among them, so that duplicate-page runs again; `change`: what changed of
    the names alone, as KeptNames keeps a change; `shared`, `keyed`: as KeptNames has them."""

    names: Names
    have: set[str]
    topics: list[Head]
    twins: bool
    change: dict[str, Any]
    shared: Shared | None
    keyed: Keyed | None


def listed_alone(text: str, pages: Mapping[str, Named], new: Iterable[str], gone: Iterable[str] = ()) -> bool:
    """Whether index.md (`text`, as the build patched it: build/indexpatch.py, every changed
    description plain) has no finding, where it had none before: each page new listed once, by
    its slug and its index title, its description plain, and no page gone linked; the count of
    `pages` right and first; and a link for each page, no more (one listed once each, as
    before, and each new one)."""
    if text.count("[[") != len(pages) or any(f"[[{slug}|" in text for slug in gone):
        return False
    for slug in new:
        head = f"\n- [[{slug}|"
        if text.count(head) != 1:
            return False
        at = text.index(head) + len(head)
        label, _, rest = text[at : text.find("\n", at)].partition("]]")
        if label != pages[slug].shown or (
            rest and not (rest.startswith(" — ") and PLAIN.fullmatch(rest[3:]))
        ):
            return False
    m = COUNT.search(text)
    return m is not None and int(m.group(1)) == len(pages) and not SAID.search(text, 0, m.start())


COUNT = re.compile(r"^(\d+) pages?\.$", re.MULTILINE)  # as rules.COUNT_LINE reads a block
SAID = re.compile(r"\d+ pages?\.")  # anything before it a block of which could be read so


def kept_names(names: Names, keyed: Mapping[str, int], heads: Sequence[Head]) -> bytes:
    """Meta.LINT_NAMES: the names (Names.columns), the topic keys of every page's names
    (`keyed`: each with how many pages have it), and the heads duplicate-page reads
    (topic_heads: a build that adds a topic page finds its twins); the names and keys more than
    one page has, so that a build that removes a page knows who else has them (Gone.shrink).
    Marshalled (names.names_blob): decoded in a tenth of the time its JSON takes."""
    data = {
        "names": names.columns(),
        "have": sorted(keyed),
        "topics": [tuple(h) for h in topic_heads(heads)],
        "shared": shared_names(names.names, heads),
        "keyed": {key: n for key, n in sorted(keyed.items()) if n > 1},
        "unread": sorted(h.slug for h in heads if h.unread and h.type != "source"),
    }
    return names_blob(data)
