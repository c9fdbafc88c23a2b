"""The lint summary's patch (totals.py) where the build added pages (a source new: its page):
the wiki's names grow by theirs alone, and the findings across pages they can change are
those of the pages the build wrote, of the pages whose links, bold terms or Topics items name
them (lint_text: what the rules across pages resolve of each page, casefolded; a link resolves
by its target's casefolded text or file stem, which hold a name or a slug as a substring), and
of the pages with broken links (what one suggests is of every page's names), each read before
with the names as they were and now with the names grown (moved.py). What keys a page new
takes for the topics (missing-page) are no page's missing ones now. The names added are stored
as an addition beside those a full lint stored (names.KeptNames), not every page's again.

It holds where the pages new have names no page has (a name goes to one page: one new takes
no name from another), and no page went; else the cached lint counts every page (cache.py).
A topic page new (not a source's) may be another's twin: duplicate-page runs again over the
heads of the pages it reads, which the last lint kept (names_json)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from wikic.lint import topics
from wikic.lint.names import Head, Named, Names, head_of, index_title, topic_heads
from wikic.wiki.page import PLAIN, Page
from wikic.wiki.read import name_table


def strings(pages: Iterable[Page]) -> list[str]:
    """What a page's lint_text holds where its findings across pages can change by these
    pages new: their names and slugs, casefolded."""
    pages = list(pages)
    found = {p.slug.casefold() for p in pages}
    found |= {name.casefold().strip() for p in pages for name in [p.title, *p.aliases]}
    return sorted(found - {""})


@dataclass
class Added:
    """The pages new, by path."""

    pages: dict[str, Page]

    def grow(self, names: Names, have: set[str], kept: list[Head] | None) -> Grown | None:
        """The names, the topic keys of the pages' names and the heads duplicate-page reads
        (`kept`: as the last lint kept them) with the pages new among them; None where one
        takes a name another page has, or is unread."""
        heads = [head_of(page) for page in self.pages.values()]
        if any(h.slug in names.pages or h.unread for h in heads):
            return None
        named = name_table((h.slug, h.type, h.title, h.aliases) for h in heads)
        if named.keys() & names.names.keys():
            return None
        new = topic_heads(heads)
        if new and kept is None:
            return None
        mine = {p.slug: Named(p.rel, p.title, index_title(p)) for p in self.pages.values()}
        grown = Names(
            {**names.pages, **mine}, {**names.names, **named}, names.files
        )  # in no order a rule reads
        keys = set(topics.keys_of(heads))
        added = {"pages": {s: list(n) for s, n in mine.items()}, "names": named, "have": sorted(keys)}
        added["topics"] = [list(h) for h in new]
        return Grown(grown, have | keys, [*(kept or []), *new], bool(new), added)


@dataclass
class Grown:
    """The names with the pages new (Added.grow); `new_topics`: one of them is not a source's;
    `added`: their names alone, as KeptNames keeps an addition."""

    names: Names
    have: set[str]
    topics: list[Head]
    new_topics: bool
    added: dict[str, Any]


def listed_alone(text: str, pages: Mapping[str, Named], new: Iterable[str]) -> bool:
    """Whether index.md (`text`, as the build patched it: build/indexpatch.py, every changed
    description plain) has no finding, where it had none before: each page new listed once, by
    its slug and its index title, its description plain; the count of `pages` right and first;
    and a link for each page, no more (one listed once each, as before, and each new one)."""
    if text.count("[[") != len(pages):
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


def names_json(names: Names, have: Iterable[str], heads: Iterable[Head]) -> str:
    """Meta.LINT_NAMES: the names, the topic keys of every page's names, and the heads
    duplicate-page reads (topic_heads: a build that adds a topic page finds its twins)."""
    data = {"names": names.to_json(), "have": sorted(have), "topics": [list(h) for h in topic_heads(heads)]}
    return json.dumps(data, ensure_ascii=False)
