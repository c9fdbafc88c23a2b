"""The deterministic lint at the cost of what changed: each page's own findings (front
matter, empty page, uncited claims, citations, staleness) are cached by what they read (the
page's bytes by stat, the stats of the sources it cites and lists, the rules' settings), and
the rules across pages (links, orphans, missing and duplicate pages, the index, hand edits)
are kept with what lets an edit patch them. After an edit that keeps the pages and their
names, only the pages it touched are read (patch.py); after any other, every page's cached
facts are read and the rules across pages run again (full.py). Same findings as
runner.lint, by test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wikic.lint.entries import Linted, load, see
from wikic.lint.full import checked
from wikic.lint.patch import patched
from wikic.project import Project
from wikic.state import Meta, State
from wikic.wiki.read import PageStats

if TYPE_CHECKING:
    from wikic.config import Schema

__all__ = ["Linted", "cached_findings"]


def cached_findings(
    project: Project,
    schema: Schema,
    levels: dict[str, str],
    state: State,
    fresh: bool = False,
    store: bool = True,
    wiki_stats: PageStats | None = None,
) -> Linted:
    """Every finding of the rules in `levels` (unsuppressed, without levels). `fresh` (--force):
    every page read and checked; `store`: keep what was checked for the next lint (the caller
    holds the project lock), else only read the cache (`wikic serve`); `wiki_stats`: wiki/ by
    stat, when the caller has just taken it."""
    seen = see(project, schema, levels, state, wiki_stats)
    raw = None if fresh else state.get_meta(Meta.LINT_ACROSS)
    saved = load(raw)
    if saved:
        done = patched(seen, state, saved, store)
        if done is not None and not store and state.get_meta(Meta.LINT_ACROSS) != raw:
            done = None  # a build stored a lint meanwhile: the rows read may be of another
        if done is not None:
            return done
    rows = {} if fresh else state.lint_pages()
    return checked(seen, rows, state if store else None)
