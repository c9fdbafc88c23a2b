"""The cached lint at the cost of what changed, when the pages are those the last stored lint
saw and keep their names (titles, aliases, types): only the pages whose bytes changed (by
stat) or whose cited or listed sources changed are read and checked, the findings across pages
are patched from what the changed pages said before and say now (across.py), the rest comes
from the cache. None where that cannot be exact: the lint over every page (full.py) runs."""

from __future__ import annotations

import json
from typing import Any

from wikic.lint import rules, topics
from wikic.lint.across import Patch
from wikic.lint.entries import (
    CACHED,
    FACTS,
    HASH,
    MTIME,
    SIZE,
    Entry,
    Linted,
    Saved,
    Seen,
    check_own,
    own_rows,
    read,
)
from wikic.lint.facts import Facts, json_finding, page_of
from wikic.lint.names import KeptNames
from wikic.state import Meta, State
from wikic.wiki.page import Page
from wikic.wiki.read import INDEX


def patched(seen: Seen, state: State, data: dict[str, Any], store: bool) -> Linted | None:
    """The findings after an edit that kept the pages and their names (see the module)."""
    if data.get("base") != seen.base:
        return None
    saved = Saved.from_json(data, state)
    if (saved.index is None) != (seen.index_stat is None):
        return None
    again = _to_read(seen, state, saved)
    if again is None:
        return None
    sources, read_again = again
    entries = {e.page.slug: e for e in (read(seen, rel, st) for rel, st in seen.listing if rel in read_again)}
    edits = _edits(state, saved, entries)
    if edits is None:
        return None
    index, restated = _index(seen, saved)
    patch = _patch(seen, state, saved) if edits or index is not None else None
    if patch is None and (edits or index is not None):
        return None
    mentions = patch.apply(saved.across, edits) if patch is not None else {}
    if patch is not None and index is not None and "index-drift" in seen.levels:
        saved.across.index = list(rules.index_findings(patch.names, index))
    check_own(seen, entries)
    store = store and bool(entries or restated or sources)
    return _result(seen, state, saved, entries, index, sources, mentions, store)


def _to_read(seen: Seen, state: State, saved: Saved) -> tuple[list[str], set[str]] | None:
    """The sources changed since the last lint, and the pages to read again: those whose stat
    changed, those always read again, those citing or listing a changed source. None when a
    page came or went."""
    records = saved.records
    if len(records) != len(seen.listing):
        return None
    again: set[str] = set()
    for rel, st in seen.listing:
        r = records.get(rel)
        if r is None:
            return None
        if not r[CACHED] or r[SIZE] != st[0] or r[MTIME] != st[1]:
            again.add(rel)
    changed = [rel for rel, was in saved.sources.items() if seen.source(rel) != was]
    if changed:
        again |= state.lint_dependents(changed)
    return changed, again


def names_read(facts: Facts) -> list[Any]:
    """What the names of the wiki read of a page."""
    meta = facts["meta"]
    return [meta.get("title"), meta.get("type"), meta.get("aliases"), facts["h1"]]


def _edits(state: State, saved: Saved, entries: dict[str, Entry]) -> list[tuple[Page, Page]] | None:
    """(before, after) of the pages read whose facts changed; None when one changed its names
    or cannot say what it was (a page always read again)."""
    changed = [e for e in entries.values() if e.across != saved.records[e.page.rel][FACTS]]
    if not changed:
        return []
    before = state.lint_facts(e.page.rel for e in changed)
    edits = []
    for e in changed:
        rel, was = e.page.rel, before.get(e.page.rel)
        if was is None or e.facts is None or not saved.records[rel][CACHED]:
            return None
        old = json.loads(was)
        if names_read(old) != names_read(e.facts):
            return None
        edits.append((page_of(rel, old), page_of(rel, e.facts)))
    return edits


def _index(seen: Seen, saved: Saved) -> tuple[Page | None, bool]:
    """index.md when its bytes changed since the last lint, else None; and whether its stat
    did (its record then updated)."""
    if seen.index_stat is None or saved.index is None or saved.index[:2] == list(seen.index_stat):
        return None, False
    index = seen.read_index()
    if index is None:
        return None, False
    was, saved.index = saved.index, [*seen.trusted(seen.index_stat), index.hash, index.read_error]
    return (index if was[2:] != saved.index[2:] else None), True


def _patch(seen: Seen, state: State, saved: Saved) -> Patch | None:
    """What patching the findings across pages reads: the names the last full lint saw."""
    kept = KeptNames.stored(state, seen.attachments)
    if kept.key() != saved.names or (decoded := kept.decoded()) is None:
        return None
    threshold = seen.schema.lint.missing_page_threshold
    return Patch(decoded[0], decoded[1], seen.levels, threshold, state.lint_mentions)


def _result(
    seen: Seen,
    state: State,
    saved: Saved,
    entries: dict[str, Entry],
    index: Page | None,
    sources: list[str],
    mentions: dict[str, topics.Mentions],
    store: bool,
) -> Linted:
    """Every finding, and what the next lint starts from stored."""
    reread = {e.page.rel for e in entries.values()}
    own = [
        json_finding(f) for rel, fs in state.lint_own().items() if rel not in reread for f in json.loads(fs)
    ]
    for e in entries.values():
        own.extend(e.findings)
        saved.records[e.page.rel] = e.record()
        saved.off.pop(e.page.rel, None)
        if e.page.disabled:
            saved.off[e.page.rel] = sorted(e.page.disabled)
        sources += e.deps()
    if index is not None:
        saved.off.pop(index.rel, None)
        if index.disabled:
            saved.off[index.rel] = sorted(index.disabled)
    on_disk = {rel: r[HASH] for rel, r in saved.records.items()}
    if saved.index is not None:
        on_disk[f"wiki/{INDEX}"] = saved.index[2]
    found = saved.findings(seen, on_disk) + own
    if store:
        rows, gone = own_rows(entries)
        deps = {e.page.rel: e.deps() for e in entries.values() if e.facts is not None}
        records = {rel: saved.records[rel] for rel in reread}
        meta = {Meta.LINT_ACROSS: saved.to_json(seen)}
        state.save_lint(rows, gone, deps, mentions, records, seen.sources(set(sources)), meta)
    disabled = {rel: set(off) for rel, off in saved.off.items()}
    return Linted(found, disabled, len(seen.listing), len(entries), seen.attachments)
