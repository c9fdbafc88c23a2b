"""The lint summary's patch (totals.py) where the build added pages (a source new: its page):
the wiki's names grow by theirs alone, and the findings across pages they can change are
those of the pages the build wrote and of the pages whose links, bold terms or Topics items
name them (lint_text: what the rules across pages resolve of each page, casefolded; a link
resolves by its target's casefolded text or file stem, which hold a name or a slug as a
substring), each read before with the names as they were and now with the names grown
(moved.py). What keys a page new takes for the topics (missing-page) are no page's missing
ones now.

It holds where the pages new are source pages (duplicate-page passes them over) whose names
no page has (a name of a page goes to one page: one new takes no name from another), and no
page went; else the cached lint counts every page (cache.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from wikic.lint import topics
from wikic.lint.names import Named, Names, head_of, index_title
from wikic.wiki.page import Page
from wikic.wiki.read import name_table


def strings(pages: Iterable[Page]) -> list[str]:
    """What a page's lint_text holds where its findings across pages can change by these
    pages new: their names and slugs, casefolded."""
    found = {slug.casefold() for slug in (p.slug for p in pages)}
    found |= {name.casefold().strip() for p in pages for name in [p.title, *p.aliases]}
    return sorted(found - {""})


@dataclass
class Added:
    """The pages new, by path."""

    pages: dict[str, Page]

    def grow(self, names: Names, have: set[str]) -> tuple[Names, set[str]] | None:
        """The names and the topic keys of the pages' names with the pages new among them;
        None where one is not a source page, or takes a name another page has."""
        heads = [head_of(page) for page in self.pages.values()]
        if any(h.type != "source" or h.slug in names.pages or h.unread for h in heads):
            return None
        named = name_table((h.slug, h.type, h.title, h.aliases) for h in heads)
        if named.keys() & names.names.keys():
            return None
        pages = {
            **names.pages,
            **{p.slug: Named(p.rel, p.title, index_title(p)) for p in self.pages.values()},
        }
        grown = Names(pages, {**names.names, **named}, names.files)  # in no order a rule reads
        return grown, have | set(topics.keys_of(heads))


def names_json(names: Names, have: set[str]) -> str:
    """Meta.LINT_NAMES, as full.py writes it."""
    return json.dumps({"names": names.to_json(), "have": sorted(have)}, ensure_ascii=False)
