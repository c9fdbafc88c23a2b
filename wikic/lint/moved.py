"""The lint summary's patch (totals.py) where pages the build wrote changed what the rules
across pages read of them (their links, bold terms, the names they mention) but not their
names: the findings of those rules that the change can touch (the pages' broken links, the
orphans among the pages they link to or no longer do, the missing pages), before and after,
brought up to date as patch.py brings the cached lint's (across.Patch), and what the cached
lint patches from next (Meta.LINT_ACROSS, the pages' mentions) kept in step with them."""

from __future__ import annotations

import json
import secrets
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field

from wikic.lint import rules, topics
from wikic.lint.across import Across, Edit, Patch, edited
from wikic.lint.came import Added, Change, Gone
from wikic.lint.context import Finding
from wikic.lint.entries import ORPHANABLE, load
from wikic.lint.facts import Facts, page_of
from wikic.lint.names import KeptNames, Names
from wikic.lint.patch import names_read
from wikic.state import Meta, State
from wikic.wiki.page import Page


@dataclass
class Moved:
    """What the change did to the findings across pages, and what to store."""

    before: list[Finding]  # the findings it could touch, as they were
    after: list[Finding]  # and as they are
    mentions: dict[str, topics.Mentions]  # the pages' mentions now
    across: str  # Meta.LINT_ACROSS, patched
    names: KeptNames | None = None  # the names changed (Meta.LINT_NAMES), where pages came or went
    unmentioned: list[str] = field(default_factory=list)  # topic keys no page mentions as missing now


def _edits(
    was: Mapping[str, Facts], now: dict[str, Facts], new: Mapping[str, Page], renamed: Container[str]
) -> list[Edit] | None:
    """(before, after) of each page whose facts changed from `was` (as stored) to `now` (before
    None: a page new); None where one has no stored facts or changed its names (but those
    `renamed`)."""
    edits: list[Edit] = [(None, page_of(rel, now[rel])) for rel in new]
    for rel, facts in now.items():
        if rel in new:
            continue
        if rel not in was:
            return None
        old = was[rel]
        if rel not in renamed and names_read(old) != names_read(facts):
            return None
        edits.append((page_of(rel, old), page_of(rel, facts)))
    return edits


def _relinked(
    state: State, across: Across, now: Mapping[str, Facts], relinked: Mapping[str, Facts], gone: Iterable[str]
) -> list[Edit] | None:
    """The pages whose findings across pages names added or gone can change though their facts
    did not, as (page, page): those that name them or treat a topic key gone as one
    (`relinked`), and those with broken links (what each suggests is of every page's names);
    None where one has no stored facts."""
    again = dict(relinked)
    suggest = sorted(across.broken.keys() - again.keys() - now.keys() - set(gone))
    found = state.lint_facts(suggest)
    if len(found) != len(suggest):
        return None
    again.update((rel, json.loads(found[rel])) for rel in suggest)
    return [(page, page) for rel, facts in sorted(again.items()) for page in [page_of(rel, facts)]]


def _orphanable(
    state: State, edits: list[Edit], old_names: Names, names: Names, new: Mapping[str, Page]
) -> dict[str, bool] | None:
    """The pages whose orphan finding the edits can change (those an edited page links to
    before and not after, or after and not before: a page it links to both times has a link
    either way; the pages gone and the pages new), each with whether it can be an orphan; None
    where one's record is not stored. (A topic page of 1,300 sources edited: a few, not the
    records of 1,300 pages read.)"""
    olds, pages = old_names.pages.keys(), names.pages.keys()
    slugs = {old.slug for old, page in edits if page is None and old is not None}
    for old, page in edits:
        before = old_names.outlinks(old) & olds if old is not None else set()
        slugs |= before ^ (names.outlinks(page) & pages if page is not None else set())
    mine = {p.slug for p in new.values()}
    paths = {slug: (names.pages.get(slug) or old_names.pages[slug]).rel for slug in slugs - mine}
    records = state.lint_records_of(paths.values())
    if len(records) != len(paths):
        return None
    orphanable = {s: records[rel][ORPHANABLE] for s, rel in paths.items()}
    return orphanable | {p.slug: rules.can_be_orphan(p) for p in new.values()}


def moved(
    state: State,
    levels: Mapping[str, str],
    thresholds: tuple[int, int],
    kept: KeptNames,
    now: dict[str, Facts],
    was: Mapping[str, Facts],
    change: Change | None = None,
) -> Moved | None:
    """The findings across pages before and after these pages' facts changed from `was` (as
    stored) to `now`; None where the stored lint is not at hand or one changed its names (a
    page's names are what every other page's links resolve against: the rules then run over
    every page), but those `change` takes as renamed. With `change` (came.py), the pages gone
    and added (those among `now`; a page renamed is among both, as it was and as it is), and
    the pages whose links, bold terms or Topics items name them or a topic key gone.
    `thresholds`: the schema's lint.missing_page_threshold and lint.duplicate_threshold."""
    threshold, duplicate_threshold = thresholds
    data = load(state.get_meta(Meta.LINT_ACROSS))
    if not data or kept.key() != data["names"]:
        return None
    across = Across.from_json(data["across"])
    got = _all_edits(state, levels, kept, across, now, was, change or Change())
    if got is None:
        return None
    edits, new, now_names, twins = got
    decoded, changed = kept.decoded(), now_names.decoded()
    assert decoded is not None and changed is not None
    (old_names, old_have), (names, have) = decoded, changed
    for page in new.values() if "orphan-page" in levels else ():
        across.inbound[page.slug] = 0
    orphanable = _orphanable(state, edits, old_names, names, new)
    if orphanable is None:
        return None
    twins = twins and "duplicate-page" in levels
    touched = _Touched(across, edits, levels, twins, orphanable)
    before = touched(old_names)
    patch = Patch(
        names, have, levels, threshold, state.lint_mentions, decoded if now_names is not kept else None
    )
    mentions = patch.apply(across, edits)
    if twins:  # a topic page new or gone: the twins among every topic page's names
        assert now_names.topics is not None
        across.duplicate = list(topics.duplicates(now_names.topics, duplicate_threshold))
    if now_names is not kept:
        data["names"] = now_names.key()
    data["across"], data["stored"] = across.to_json(), secrets.token_hex(8)
    dropped = sorted(have - old_have)  # the keys the pages new take
    out = now_names if now_names is not kept else None
    return Moved(before, touched(names), mentions, json.dumps(data, ensure_ascii=False), out, dropped)


def _all_edits(
    state: State,
    levels: Mapping[str, str],
    kept: KeptNames,
    across: Across,
    now: dict[str, Facts],
    was: Mapping[str, Facts],
    change: Change,
) -> tuple[list[Edit], dict[str, Page], KeptNames, bool] | None:
    """moved()'s edits (the pages whose facts changed, those gone, those `change` relinks),
    the pages new (a page renamed is none), the names with the change made, and whether a
    topic page came or went; None where that cannot be patched."""
    gone, added, renamed = change.gone, change.added, change.renamed
    new = {rel: page for rel, page in (added.pages if added else {}).items() if rel not in renamed}
    went = {rel: page for rel, page in (gone.pages if gone else {}).items() if rel not in renamed}
    edits = _edits(was, now, new, renamed)
    if edits is None:
        return None
    if gone is None and added is None:  # the pages that name an attachment come or gone
        more = _relinked(state, across, now, change.relinked, ()) if change.relinked else []
        return None if more is None else ([*edits, *more], new, kept, False)
    got = _changed(kept, gone, added, "missing-page" in levels)
    if got is None:
        return None
    more = _relinked(state, across, now, change.relinked, went)
    if more is None:
        return None
    return [*edits, *((page, None) for page in went.values()), *more], new, *got


def _changed(
    kept: KeptNames, gone: Gone | None, added: Added | None, seek: bool
) -> tuple[KeptNames, bool] | None:
    """The names with the pages gone taken out, then those added put in (a page renamed goes
    as it was and comes as it is), and whether a topic page is among them (its twins change);
    None where that cannot be patched (came.py)."""
    twins = False
    back = {page.slug for page in added.pages.values()} if added is not None else set()
    for step in (gone, added):
        if step is None:
            continue
        made = step.shrink(kept, seek) if isinstance(step, Gone) else step.grow(kept, seek)
        if made is None:
            return None
        # a page gone for good (not renamed): the names written whole, none of its kept
        whole = isinstance(step, Gone) and any(page.slug not in back for page in step.pages.values())
        kept = kept.changed(made.names, made.have, made.topics, made.shared, made.keyed, made.change, whole)
        twins = twins or made.twins
    return kept, twins


@dataclass
class _Touched:
    """The findings across pages an edit can touch, taken before and after it: the edited
    pages' broken links, every missing page, the twins where a topic page came (`twins`), and
    the orphans among the pages it links to or did (`orphanable`: those, and whether each can
    be one)."""

    across: Across
    edits: list[Edit]
    levels: Mapping[str, str]
    twins: bool
    orphanable: dict[str, bool]

    def __call__(self, names: Names) -> list[Finding]:
        """As they are now, with these names (those before or after the edit)."""
        across = self.across
        found = [f for old, page in self.edits for f in across.broken.get(edited(old, page).rel, [])]
        found += across.missing.values()
        if self.twins:
            found += across.duplicate
        if "orphan-page" in self.levels:
            inside = sorted(slug for slug in self.orphanable if slug in names.pages)
            pages = ((s, names.pages[s].rel, self.orphanable[s]) for s in inside)
            found += rules.orphans(pages, across.inbound)
        return found
