"""The cached lint over every page: each page's own findings from the cache where its bytes
and sources are as they were, else read and checked; the rules across pages run again over
every page's facts, and what lets the next lint patch them (across.py) is stored."""

from __future__ import annotations

import json
from typing import Any

from wikic.hashing import fingerprint
from wikic.lint import across
from wikic.lint.context import Context
from wikic.lint.entries import (
    CHECK_AT_ONCE,
    HASH,
    Entry,
    Linted,
    Saved,
    Seen,
    Stat,
    check_own,
    own_rows,
    read,
)
from wikic.lint.facts import json_finding, page_of
from wikic.state import LintRow, Meta, State
from wikic.wiki.read import Wiki


def checked(seen: Seen, rows: dict[str, LintRow], state: State | None) -> Linted:
    """Every page from its cached facts where they still hold, else read; the own rules on the
    pages read, the rules across pages on all. `state`: where to store it, if anywhere."""
    entries: dict[str, Entry] = {}
    batch: dict[str, Entry] = {}
    for rel, st in seen.listing:
        entry = _entry(seen, rel, st, rows.pop(rel, None))  # its JSON let go once read
        entries[entry.page.slug] = entry
        if entry.row is not None:
            batch[entry.page.slug] = entry
            if len(batch) >= CHECK_AT_ONCE:
                _check_and_let_go(seen, batch)
                batch = {}
    _check_and_let_go(seen, batch)
    index = seen.read_index()
    pages = {slug: e.page for slug, e in entries.items()}
    wiki = Wiki(seen.project.root, pages, index, seen.attachments)
    ctx = Context(seen.project, seen.schema, wiki, seen.files, seen.source_stats)
    found, mentions, have = across.compute(ctx, seen.levels)
    names = json.dumps({"names": ctx.names.to_json(), "have": have}, ensure_ascii=False)
    off = {e.page.rel: sorted(e.page.disabled) for e in entries.values() if e.page.disabled}
    if index is not None and index.disabled:
        off[index.rel] = sorted(index.disabled)
    saved = Saved(
        {e.page.rel: e.record() for e in entries.values()},
        seen.sources({d for e in entries.values() for d in e.deps()}),
        _index_record(seen, index),
        found,
        off,
        fingerprint(names),
    )
    on_disk = {rel: r[HASH] for rel, r in saved.records.items()}
    if index is not None:
        on_disk[index.rel] = index.hash
    result = saved.findings(seen, on_disk) + [f for e in entries.values() for f in e.findings]
    if state is not None:
        changed = {slug: e for slug, e in entries.items() if e.row is not None}
        new, gone = own_rows(changed)
        gone += [rel for rel in rows if rel not in saved.records]
        deps = {e.page.rel: e.deps() for e in entries.values() if e.facts is not None}
        meta = {Meta.LINT_ACROSS: saved.to_json(seen), Meta.LINT_NAMES: names}
        records, sources = saved.records, saved.sources
        state.save_lint(new, gone, deps, mentions, records, sources, meta, everything=True)
    return Linted(result, {rel: set(v) for rel, v in off.items()}, len(entries), len(entries))


def _index_record(seen: Seen, index: Any) -> list[Any] | None:
    if index is None or seen.index_stat is None:
        return None
    return [*seen.trusted(seen.index_stat), index.hash, index.read_error]


def _check_and_let_go(seen: Seen, batch: dict[str, Entry]) -> None:
    """The own rules on pages just read; then each keeps only its facts (what the rules across
    pages read, as for a page from the cache), not its text and parsed blocks: a first lint of
    100,000 pages held them all (3.9 GB)."""
    check_own(seen, batch)
    for e in batch.values():
        if e.facts is not None:
            e.page = page_of(e.page.rel, e.facts)
            e.facts = {"deps": e.facts["deps"]}


def _entry(seen: Seen, rel: str, st: Stat, row: LintRow | None) -> Entry:
    """The page from its cached facts when its bytes (by stat) and what its findings read are
    as they were; else read, parsed and marked for its own rules."""
    if row is not None and row.facts and (row.size, row.mtime_ns) == st:
        facts = json.loads(row.facts)
        if seen.key(facts["deps"]) == row.key:
            findings = [json_finding(f) for f in json.loads(row.findings)]
            deps = {"deps": facts["deps"]}  # the rest is in the page now: not held twice
            return Entry(page_of(rel, facts), None, findings, facts["across"], st, deps)
    return read(seen, rel, st)
