"""The lint summary's patch (totals.py) where pages the build wrote changed what the rules
across pages read of them (their links, bold terms, the names they mention) but not their
names: the findings of those rules that the change can touch (the pages' broken links, the
orphans among the pages they link to or no longer do, the missing pages), before and after,
brought up to date as patch.py brings the cached lint's (across.Patch), and what the cached
lint patches from next (Meta.LINT_ACROSS, the pages' mentions) kept in step with them."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from wikic.lint import rules, topics
from wikic.lint.across import Across, Patch
from wikic.lint.context import Finding
from wikic.lint.entries import ORPHANABLE, load
from wikic.lint.facts import Facts, page_of
from wikic.lint.names import KeptNames, names_key
from wikic.lint.patch import names_read
from wikic.state import Meta, State


@dataclass
class Moved:
    """What the change did to the findings across pages, and what to store."""

    before: list[Finding]  # the findings it could touch, as they were
    after: list[Finding]  # and as they are
    mentions: dict[str, topics.Mentions]  # the pages' mentions now
    across: str  # Meta.LINT_ACROSS, patched


def moved(
    state: State, levels: Mapping[str, str], threshold: int, kept: KeptNames, now: dict[str, Facts]
) -> Moved | None:
    """The findings across pages before and after these pages' facts changed to `now`; None
    where the stored lint is not at hand or one changed its names (a page's names are what
    every other page's links resolve against: the rules then run over every page)."""
    data = load(state.get_meta(Meta.LINT_ACROSS))
    if not data or kept.raw is None or names_key(kept.raw) != data["names"]:
        return None
    was = state.lint_facts(now)
    edits = []
    for rel, facts in now.items():
        if rel not in was:
            return None
        old = json.loads(was[rel])
        if names_read(old) != names_read(facts):
            return None
        edits.append((page_of(rel, old), page_of(rel, facts)))
    decoded = kept.decoded()
    assert decoded is not None
    names, have = decoded
    across = Across.from_json(data["across"])
    slugs = sorted(
        {s for old, new in edits for s in names.outlinks(old) | names.outlinks(new)} & names.pages.keys()
    )
    paths = {slug: names.pages[slug].rel for slug in slugs}
    records = state.lint_records_of(paths.values())
    if len(records) != len(paths):
        return None

    def touched() -> list[Finding]:
        found = [f for rel in now for f in across.broken.get(rel, [])]
        found += across.missing.values()
        if "orphan-page" in levels:
            found += rules.orphans(
                ((s, paths[s], records[paths[s]][ORPHANABLE]) for s in slugs), across.inbound
            )
        return found

    before = touched()
    patch = Patch(names, have, levels, threshold, state.lint_mentions)
    mentions = patch.apply(across, edits)
    data["across"], data["stored"] = across.to_json(), secrets.token_hex(8)
    return Moved(before, touched(), mentions, json.dumps(data, ensure_ascii=False))
