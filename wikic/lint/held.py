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
from wikic.lint.spill import Spill
from wikic.state import LintRow
from wikic.state.lint import Record
from wikic.wiki.page import Page

NONE_FOUND = "[]"  # the findings of most pages, one string for them all


class Held:
    """Every page's part of a full lint's end, taken as the pages are checked, in the wiki's
    order."""

    def __init__(self, folder: Path) -> None:
        self.heads: list[Head] = []
        self.records: dict[str, Record] = {}
        self.deps: dict[str, list[str]] = {}  # page path -> its sources (pages with facts)
        self.off: dict[str, list[str]] = {}  # page path -> the rules it turns off
        self.findings: list[Finding] = []  # the pages' own findings
        self.gone: list[str] = []  # pages read now that are always read again: no row kept
        self._whole: dict[str, Page] = {}  # pages always read again (no facts): kept as they are
        self._cross = Spill(folder)  # each page with facts: marshal of facts.cross_of
        self._rows = Spill(folder)  # the facts (JSON, UTF-8) of each row to store
        self._row_heads: list[tuple[str, int, int, str, str]] = []  # rel, size, mtime, key, findings

    def take(self, seen: Seen, entries: list[Entry]) -> None:
        """These pages (in the wiki's order): the own rules on those read, then what the end
        needs of each kept and the rest let go."""
        check_own(seen, {e.page.slug: e for e in entries if e.row is not None})
        intern = sys.intern  # a source is cited by many pages: one string for it
        for e in entries:
            page = e.page
            self.heads.append(head_of(page))
            self.records[page.rel] = e.record()
            if page.disabled:
                self.off[page.rel] = sorted(page.disabled)
            self.findings += e.findings
            if e.facts is None:
                self._whole[page.rel] = page
            else:
                self.deps[page.rel] = [intern(d) for d in e.facts["deps"]]
                self._cross.add(marshal.dumps(cross_of(e.facts)))
            if e.row is not None and e.row.facts:
                self._rows.add(e.row.facts.encode())
                found = NONE_FOUND
                if e.findings:
                    found = json.dumps([finding_json(f) for f in e.findings], ensure_ascii=False)
                self._row_heads.append((e.row.rel, e.row.size, e.row.mtime_ns, e.row.key, found))
            elif e.row is not None:  # always read again now (a saved answer): no row of what it was
                self.gone.append(page.rel)

    def pages(self) -> Iterator[Page]:
        """Every page, in the wiki's order, as the rules across pages read it (once)."""
        cross = iter(self._cross)
        for head in self.heads:
            whole = self._whole.get(head.rel)
            yield whole if whole is not None else cross_page(head.rel, marshal.loads(next(cross)))

    def rows(self) -> Iterator[LintRow]:
        """The rows of the pages read, to store (once)."""
        for (rel, size, mtime_ns, key, found), facts in zip(self._row_heads, self._rows, strict=True):
            yield LintRow(rel, size, mtime_ns, key, facts.decode(), found)

    def close(self) -> None:
        self._cross.close()
        self._rows.close()

    def __enter__(self) -> Held:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
