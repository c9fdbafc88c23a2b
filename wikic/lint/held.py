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

from wikic.lint.context import Finding
from wikic.lint.entries import Entry, Seen, check_own
from wikic.lint.facts import cross_of, cross_page, finding_json
from wikic.lint.names import Head, head_of
from wikic.spill import Spill
from wikic.state import LintRow
from wikic.state.lint import Record
from wikic.wiki.page import Page

NONE_FOUND = "[]"  # the findings of most pages, one string for them all


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
            page = e.page
            deps = None
            self.findings += e.findings
            if e.facts is None:
                self._whole[page.rel] = page
            else:
                deps = e.facts["deps"]
                self._cross.add(marshal.dumps(cross_of(e.facts)))
            off = sorted(page.disabled) if page.disabled else None
            self._kept.add(marshal.dumps((tuple(head_of(page)), e.record(), deps, off)))
            if e.row is not None and e.row.facts:
                found = NONE_FOUND
                if e.findings:
                    found = json.dumps([finding_json(f) for f in e.findings], ensure_ascii=False)
                row = e.row
                self._rows.add(
                    marshal.dumps((row.rel, row.size, row.mtime_ns, row.key, row.facts, found, row.names))
                )
            elif e.row is not None:  # always read again now (a saved answer): no row of what it was
                self.gone.append(page.rel)

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
