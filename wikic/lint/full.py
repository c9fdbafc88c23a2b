"""The cached lint over every page: each page's own findings from the cache where its bytes
and sources are as they were, else read and checked; the rules across pages run again over
every page, and what lets the next lint patch them (across.py) is stored. Pages stream: each
is read (or taken from the cache), checked and let go, and only what the end needs of it is
kept (held.py): its names, record and sources in memory, its links and the row to store in
a temporary file; 100,000 pages held whole were about 1.3 GB."""

from __future__ import annotations

import itertools
import json
from functools import partial
from typing import Any

from wikic import forked
from wikic.lint import across, came, rules
from wikic.lint.entries import HASH, Entry, Linted, Saved, Seen, Stat, check_own, read
from wikic.lint.facts import head_page, json_finding
from wikic.lint.held import Held, Parts, parts_of
from wikic.lint.names import Names, names_key
from wikic.state import LintRow, Meta, State
from wikic.wiki.blocks import Body
from wikic.wiki.page import Page

# pages read, checked and let go together, and their bytes at most (a topic page of a large
# wiki lists thousands of sources: 100 of them parsed at once were 60 MB at 10,000 sources);
# at 500 pages (entries.CHECK_AT_ONCE) a first lint of 10,000 pages peaked 40 MB higher, for no
# less CPU (the sources they cite stay read from one batch to the next: SOURCE_CHARS_KEPT)
CHECK_AT_ONCE = 100
BYTES_AT_ONCE = 2_000_000
# pages waiting to be checked together at most, those from the cache among them: they wait
# only to keep the wiki's order in what is kept of them
WAITING = 4 * CHECK_AT_ONCE
# pages shared by every CPU at a time, about (forked.py): what a child sends back of 2,500 pages
# is held at once (about 8 MB)
ROUND = 5000


def checked(seen: Seen, rows: dict[str, LintRow], state: State | None) -> Linted:
    """Every page from its cached facts where they still hold, else read; the own rules on the
    pages read, the rules across pages on all. `state`: where to store it, if anywhere. The
    pages of each ROUND but a first share are read and checked by forked children (forked.py),
    which send back what Held keeps of each: the same bytes, made on every CPU."""
    listing, weight = seen.listing, partial(_weight, rows)
    with Held(seen.project.state_path.parent) as held:
        for at, end in itertools.pairwise(forked.rounds(len(listing), ROUND)):
            some = listing[at:end]
            with forked.Ahead(partial(_apart, seen, rows), some, whole=True, weight=weight) as ahead:
                waiting = _Waiting(seen, held)
                for i, (rel, st) in enumerate(some):
                    parts = ahead.done(i)
                    if parts is None:
                        waiting.add(_entry(seen, rel, st, rows.pop(rel, None)))  # its JSON let go once read
                    else:
                        waiting.take()  # in the wiki's order
                        rows.pop(rel, None)
                        held.add(parts)
                waiting.take()
        held.settle()
        return _across(seen, held, rows, state)


class _Waiting:
    """Pages read, waiting to be checked together (CHECK_AT_ONCE, BYTES_AT_ONCE, WAITING)."""

    def __init__(self, seen: Seen, held: Held | None = None) -> None:
        self.seen, self.held = seen, held
        self.entries: list[Entry] = []
        self.to_check = self.size = 0
        self.taken: list[Parts | None] = []  # without `held`: what Held keeps of each (None: the page)

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        if entry.row is not None:
            self.to_check, self.size = self.to_check + 1, self.size + max(entry.stat[0], 0)
        if self.to_check >= CHECK_AT_ONCE or self.size >= BYTES_AT_ONCE or len(self.entries) >= WAITING:
            self.take()

    def take(self) -> None:
        if not self.entries:
            return
        if self.held is not None:
            self.held.take(self.seen, self.entries)
        else:
            check_own(self.seen, {e.page.slug: e for e in self.entries if e.row is not None})
            self.taken += [parts_of(e) if e.facts is not None else None for e in self.entries]
        self.entries, self.to_check, self.size = [], 0, 0


def _weight(rows: dict[str, LintRow], page: tuple[str, Stat]) -> int:
    """What a page costs a full lint, about: a page read, with its size (checked in batches, a
    topic page of 45 KB cost 20-33 times a source page of 800 bytes), one from the cache little."""
    rel, (size, _) = page
    return 100 if rel in rows else max(size, 0) + 1000


def _apart(seen: Seen, rows: dict[str, LintRow], share: list[tuple[str, Stat]]) -> list[Parts | None]:
    """A forked child's share of a round: each page read (or from the cache) and checked, as
    Held keeps it; None for a page kept whole (no facts: read and checked by the parent)."""
    waiting = _Waiting(seen)
    for rel, st in share:
        waiting.add(_entry(seen, rel, st, rows.get(rel)))
    waiting.take()
    return waiting.taken


def _across(seen: Seen, held: Held, rows: dict[str, LintRow], state: State | None) -> Linted:
    """The rules across pages over what is held of every page; stored with the rows held."""
    names = Names.of_heads(held.heads, seen.attachments)
    index = seen.read_index()  # checked now and let go: 18 MB of text at 100,000 pages
    drift = list(rules.index_findings(names, index)) if "index-drift" in seen.levels else []
    index = _index_only(index)
    found, mentions, have = across.compute(names, held.heads, held.pages(), seen.schema.lint, seen.levels)
    found.index = drift
    names_blob = came.kept_names(names, have, held.heads)
    del names, have
    off = held.off
    if index is not None and index.disabled:
        off[index.rel] = sorted(index.disabled)
    sources = seen.sources({d for deps in held.deps.values() for d in deps})
    saved = Saved(held.records, sources, _index_record(seen, index), found, off, names_key(names_blob))
    on_disk = {rel: r[HASH] for rel, r in saved.records.items()}
    if index is not None:
        on_disk[index.rel] = index.hash
    result = saved.findings(seen, on_disk) + held.findings
    del on_disk
    if state is not None:
        gone = held.gone + [rel for rel in rows if rel not in saved.records]
        meta: dict[Meta, str | bytes] = {
            Meta.LINT_ACROSS: saved.to_json(seen),
            Meta.LINT_NAMES: names_blob,
            Meta.LINT_NAMES_MORE: "[]",
        }
        records, deps = saved.records, held.deps
        state.save_lint(held.rows(), gone, deps, mentions, records, sources, meta, everything=True)
    pages = len(held.heads)
    return Linted(result, {rel: set(v) for rel, v in off.items()}, pages, pages, seen.attachments)


def _index_only(index: Page | None) -> Page | None:
    """index.md without its text and blocks: what the end of a full lint reads of it."""
    if index is None:
        return None
    kept = Page(index.rel, "", hash=index.hash, read_error=index.read_error)
    kept.__dict__["_read_body"] = Body(disabled=index.disabled)
    return kept


def _index_record(seen: Seen, index: Any) -> list[Any] | None:
    if index is None or seen.index_stat is None:
        return None
    return [*seen.trusted(seen.index_stat), index.hash, index.read_error]


def _entry(seen: Seen, rel: str, st: Stat, row: LintRow | None) -> Entry:
    """The page from its cached facts when its bytes (by stat) and what its findings read are
    as they were (enough of it for its names and switches; its facts for the rest); else read,
    parsed and marked for its own rules."""
    if row is not None and row.facts and (row.size, row.mtime_ns) == st:
        facts = json.loads(row.facts)
        if seen.key(facts["deps"]) == row.key:
            findings = [json_finding(f) for f in json.loads(row.findings)] if row.findings != "[]" else []
            return Entry(head_page(rel, facts), None, findings, facts["across"], st, facts)
    return read(seen, rel, st)
