"""What a lint over every page (full.py) keeps of each page once it is checked, until the rules
across pages run at its end: in memory its head (names, type), record, cited and listed sources,
switches and own findings; in temporary files (spill.py) its links, bold terms and Topics
items, read back once as a page for the rules across pages, and the row of a page read, read
back once as it is stored."""

from __future__ import annotations

import json
import marshal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from wikic.lint.context import Finding
from wikic.lint.entries import Entry, Seen, check_own
from wikic.lint.facts import cross_of, cross_page, finding_json, json_finding
from wikic.lint.names import Head, head_of
from wikic.spill import Spill
from wikic.state import LintRow
from wikic.state.lint import Record
from wikic.wiki.page import Page

NONE_FOUND = "[]"  # the findings of most pages, one string for them all


# What the end of a full lint keeps of a page with facts, as lists and bytes (marshallable): its
# own findings (finding_json), its head and record, what the rules across pages read of it
# (cross_of), and the row to store (None: the cached one holds)
Parts = tuple[list[list[Any]], bytes, bytes, bytes | None]


def parts_of(e: Entry) -> Parts:
    """A page with facts, checked: what Held keeps of it."""
    assert e.facts is not None
    findings = [finding_json(f) for f in e.findings]
    row = None
    if e.row is not None:  # read now: its facts are a JSON object, never ""
        found = json.dumps(findings, ensure_ascii=False) if findings else NONE_FOUND
        r = e.row
        row = marshal.dumps((r.rel, r.size, r.mtime_ns, r.key, r.facts, found, r.names))
    return findings, _kept_of(e), marshal.dumps(cross_of(e.facts)), row


def _kept_of(e: Entry) -> bytes:
    page = e.page
    deps = e.facts["deps"] if e.facts is not None else None
    off = sorted(page.disabled) if page.disabled else None
    return marshal.dumps((tuple(head_of(page)), e.record(), deps, off))


class Held:
    """Every page's part of a full lint's end, taken as the pages are checked, in the wiki's
    order. Even what is kept in memory waits in a file until every page is checked (settle):
    made in one go at the end, it fills memory of its own, where made page by page among the
    pages read and let go it kept much of theirs from going back to the system."""

    def __init__(self, folder: Path) -> None:
        self.heads: list[Head] = []
        self.records: dict[str, Record] = {}
        self.deps: dict[str, tuple[str, ...]] = {}  # page path -> its sources (pages with facts)
        self.off: dict[str, list[str]] = {}  # page path -> the rules it turns off
        self.findings: list[Finding] = []  # the pages' own findings
        self.gone: list[str] = []  # pages read now that are always read again: no row kept
        self._whole: dict[str, Page] = {}  # pages always read again (no facts): kept as they are
        self._cross = Spill(folder)  # each page with facts: marshal of facts.cross_of
        self._rows = Spill(folder)  # marshal of each row to store (a LintRow's fields)
        self._kept = Spill(folder)  # marshal of each page's head, record, sources and switches

    def take(self, seen: Seen, entries: list[Entry]) -> None:
        """These pages (in the wiki's order): the own rules on those read, then what the end
        needs of each kept and the rest let go."""
        check_own(seen, {e.page.slug: e for e in entries if e.row is not None})
        for e in entries:
            if e.facts is not None:
                self.add(parts_of(e))
                continue
            self.findings += e.findings
            self._whole[e.page.rel] = e.page
            self._kept.add(_kept_of(e))
            if e.row is not None:  # always read again now (a saved answer): no row of what it was
                self.gone.append(e.page.rel)

    def add(self, parts: Parts) -> None:
        """A page with facts, as parts_of() gives it (here, or in a forked child: full.py)."""
        findings, kept, cross, row = parts
        self.findings += [json_finding(f) for f in findings]
        self._cross.add(cross)
        self._kept.add(kept)
        if row is not None:
            self._rows.add(row)

    def settle(self) -> None:
        """What is kept in memory of every page, from its file (once every page is taken)."""
        intern = sys.intern  # a source is cited by many pages: one string for it
        for data in self._kept:
            head, record, deps, off = marshal.loads(data)
            head = Head(*head)
            self.heads.append(head)
            self.records[head.rel] = record
            if deps is not None:
                self.deps[head.rel] = tuple([intern(d) for d in deps])
            if off is not None:
                self.off[head.rel] = off
        self._kept.close()

    def pages(self) -> Iterator[Page]:
        """Every page, in the wiki's order, as the rules across pages read it (once)."""
        cross = iter(self._cross)
        for head in self.heads:
            whole = self._whole.get(head.rel)
            yield whole if whole is not None else cross_page(head.rel, marshal.loads(next(cross)))

    def rows(self) -> Iterator[LintRow]:
        """The rows of the pages read, to store (once)."""
        for data in self._rows:
            yield LintRow(*marshal.loads(data))

    def close(self) -> None:
        self._cross.close()
        self._rows.close()
        self._kept.close()

    def __enter__(self) -> Held:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
