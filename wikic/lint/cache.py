"""The deterministic lint at the cost of what changed: each page's own findings
(front matter, empty page, uncited claims, citations, staleness) are cached by what
they read (the page's bytes by stat, the stats of the sources it cites and lists,
the rules' settings), and the rules across pages (links, orphans, missing and
duplicate pages, the index, hand edits) run over facts cached per page (facts.py), so
an unchanged page is neither read nor parsed. When nothing but some pages changed since
the last stored lint, and not what the rules across pages read of them (an edit of a
page's text, a line added above its links), only those pages are read: the findings
across pages are the last ones, moved with the pages' lines. Same findings as
runner.lint, by test.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from wikic.config import Schema
from wikic.hashing import FINGERPRINT, digest, fingerprint
from wikic.lint import citations, rules
from wikic.lint.context import Context, Finding
from wikic.lint.facts import Facts, facts_of, finding_json, json_finding, move, moved_lines, page_of
from wikic.project import Project
from wikic.state import LintRow, Meta, State
from wikic.wiki.page import Page
from wikic.wiki.read import INDEX, LOG, PageStats, Wiki, read_page

VERSION = 4  # bump when a rule or the facts change: every page is checked again
# A file changed this close to the lint that stat'ed it may change again within the same mtime
# tick at the same size (git's "racily clean" entries): such a stat is recorded as untrusted.
RACY_NS = 100_000_000
# A page's own findings: what the page says, checked against the sources it cites and lists.
OWN = {
    "frontmatter": rules.frontmatter,
    "empty-page": rules.empty_page,
    **{r: fn for r, (_, fn) in citations.RULES.items() if r != "hand-edit"},
}
# Findings that read other pages or the build's records of every page (hand-edit: a page wikic
# wrote that is gone is a finding on no page there is).
ACROSS = {r: fn for r, (_, fn) in {**rules.RULES, **citations.RULES}.items() if r not in OWN}
Stat = tuple[int, int]  # (size, mtime_ns)
CHECK_AT_ONCE = 500  # pages read, checked and let go together
Record = list[Any]  # per page in the stored lint: size, mtime_ns, facts["across"], bytes as wikic wrote


@dataclass
class Linted:
    """What a cached lint found (unsuppressed, without levels), the inline lint switches of
    the pages, and how many pages there are."""

    findings: list[Finding]
    disabled: dict[str, set[str]]  # page path -> the rules it turns off (index.md: see `index`)
    pages: int
    index: Page | None  # read for its hash; its switches parsed only if a finding concerns it

    def switches(self, rel: str) -> set[str]:
        if self.index is not None and rel == self.index.rel:
            return self.index.disabled
        return self.disabled.get(rel, set())


@dataclass
class _Entry:
    page: Page
    row: LintRow | None  # a row to store (None: the cached one still holds)
    findings: list[Finding]  # the page's own findings (filled after the check for a reread page)
    across: str  # a digest of what the rules across pages read of it (its bytes, for one always reread)
    stat: Stat  # as read now; mtime -1 when too recent to be trusted next time
    facts: Facts | None  # None: a page always read again (a saved answer)


@dataclass
class _Seen:
    """What one cached lint reads once: settings, the build's records, wiki/ by stat."""

    project: Project
    schema: Schema
    levels: dict[str, str]
    settings: str  # what every page's own findings depend on besides its bytes and sources
    files: dict[str, str]  # what wikic wrote: path -> hash
    source_stats: dict[str, tuple[int, int, str]]  # what the last build read of each source
    listing: list[tuple[str, Stat]]  # wiki/x.md and its stat, every page but index.md and log.md
    index: Page | None
    attachments: set[str]
    started: int  # time.time_ns() before anything was stat'ed
    stats: dict[str, Stat | None] = field(default_factory=dict)  # sources' stats, read once
    memo: dict[Any, str] = field(default_factory=dict)  # _base and _env, asked again when storing
    reprs: dict[str, str] = field(default_factory=dict)  # _key's part for each source, made once

    def trusted(self, st: Stat) -> Stat:
        return (st[0], st[1] if st[1] < self.started - RACY_NS else -1)


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
    seen = _see(project, schema, levels, state, wiki_stats)
    raw = None if fresh else state.get_meta(Meta.LINT_ACROSS)
    saved: dict[str, Any] = json.loads(raw or "{}")
    if saved.get("base") == _base(seen) and saved.get("env") == _env(seen, saved.get("deps", [])):
        done = _few_changed(seen, state, saved, store)
        if done is not None and not store and state.get_meta(Meta.LINT_ACROSS) != raw:
            done = None  # a build stored a lint meanwhile: the rows read may be of another
        if done is not None:
            return done
    rows = {} if fresh else state.lint_pages()
    return _checked(seen, rows, saved, fresh, state if store else None)


def _see(
    project: Project, schema: Schema, levels: dict[str, str], state: State, wiki_stats: PageStats | None
) -> _Seen:
    settings = fingerprint(
        [
            VERSION,
            sorted(r for r in levels if r in OWN),
            schema.lint.citation_threshold,
            schema.type_names(),
            schema.privacy.model_dump(mode="json")["redact"],  # bad-citation reads redacted lines
        ]
    )
    taken = wiki_stats or PageStats.take(project.wiki_dir)
    listing: list[tuple[str, Stat]] = []
    index: Page | None = None
    for name, st in taken.stats:
        if name == INDEX:
            index = read_page(project.wiki_dir / name, f"wiki/{name}")
        elif name != LOG:
            listing.append((f"wiki/{name}", st))
    files, source_stats = state.file_hashes(), state.source_stats()
    found = taken.attachments
    return _Seen(
        project, schema, levels, settings, files, source_stats, listing, index, found, taken.taken_ns
    )


def _base(seen: _Seen) -> str:
    """What every finding reads besides the pages and their sources: the rules and their
    settings, index.md, the attachments, what wikic wrote."""
    if "base" in seen.memo:
        return seen.memo["base"]
    index = seen.index
    seen.memo["base"] = fingerprint(
        [
            seen.settings,
            sorted(seen.levels),
            seen.schema.lint.model_dump(mode="json"),
            [index.hash, index.read_error] if index is not None else None,
            sorted(seen.attachments),
            digest(repr(sorted(seen.files.items())), FINGERPRINT),
        ]
    )
    return seen.memo["base"]


def _env(seen: _Seen, deps: list[str]) -> str:
    """The stat of each source the pages cite or list, and what the last build read of it."""
    key = ("env", *deps)
    if key not in seen.memo:
        parts = [(rel, _stat(seen, rel), seen.source_stats.get(rel)) for rel in deps]
        seen.memo[key] = digest(repr(parts), FINGERPRINT)
    return seen.memo[key]


# --- when only some pages changed since the last stored lint: O(change) -----------------
def _few_changed(seen: _Seen, state: State, saved: dict[str, Any], store: bool) -> Linted | None:
    """With the settings, index, attachments, records and sources as the last stored lint saw
    them: every finding from the cache but those of the pages whose stat changed, which are
    read and checked again. None when a page came, went or changed what the rules across
    pages read of it other than lines (they run again)."""
    known: dict[str, Record] = saved["pages"]
    if len(known) != len(seen.listing):
        return None
    rows = state.lint_findings()  # the facts only of the pages read again
    own: list[Finding] = []
    reread: dict[str, _Entry] = {}
    for rel, st in seen.listing:
        row, record = rows.get(rel), known.get(rel)
        if record is None:
            return None
        if row is not None and row[0] == st[0] == record[0] and row[1] == st[1] == record[1]:
            if row[2] != "[]":
                own.extend(json_finding(f) for f in json.loads(row[2]))
            continue
        entry = _read(seen, rel, st)
        reread[entry.page.slug] = entry
    across = [json_finding(f) for f in saved["findings"]]
    facts = state.lint_facts(e.page.rel for e in reread.values())
    for e in reread.values():
        followed = _follow(seen, e, known[e.page.rel], facts.get(e.page.rel), across)
        if followed is None:
            return None
        across = followed
    _check_own(seen, reread)
    disabled = {rel: set(off) for rel, off in saved["off"].items()}
    for e in reread.values():
        own.extend(e.findings)
        disabled.pop(e.page.rel, None)
        if e.page.disabled:
            disabled[e.page.rel] = e.page.disabled
    found = [*across, *own]
    if store and reread:
        known.update(_records(seen, reread))
        deps = sorted({*saved["deps"], *(d for e in reread.values() for d in _deps(e))})
        _store(state, seen, reread, [], known, across, disabled, deps)
    return Linted(found, disabled, len(seen.listing), seen.index)


def _follow(
    seen: _Seen, e: _Entry, record: Record, cached: str | None, across: list[Finding]
) -> list[Finding] | None:
    """The findings across pages after a page changed, if it changed nothing they read but
    its lines (moved with them) and whether its bytes are what wikic wrote (hand-edit).
    `cached`: the page's facts as the last stored lint read them."""
    rel = e.page.rel
    if e.across != record[2]:
        old = json.loads(cached) if cached else None
        if old is None or e.facts is None or old["across"] != record[2]:
            return None
        lines = moved_lines(old, e.facts)
        moved = move(across, rel, lines) if lines is not None else None
        if moved is None:
            return None
        across = moved
    if "hand-edit" not in seen.levels:
        return across
    recorded = {rel: seen.files[rel]} if rel in seen.files else {}
    ctx = Context(seen.project, seen.schema, Wiki(seen.project.root, {e.page.slug: e.page}), recorded, None)
    kept = [f for f in across if not (f.rule == "hand-edit" and f.path == rel)]
    return kept + list(citations.hand_edit(ctx))


# --- after any other change: every page's facts, the rules across pages again ------------
def _checked(
    seen: _Seen, rows: dict[str, LintRow], saved: dict[str, Any], fresh: bool, state: State | None
) -> Linted:
    """Each page from its cached facts where they still hold, else read; the rules across
    pages from the last lint when nothing they read changed; own rules on the pages read."""
    entries: dict[str, _Entry] = {}
    read: dict[str, _Entry] = {}
    for rel, st in seen.listing:
        entry = _entry(seen, rel, st, rows.pop(rel, None))  # its JSON let go once read
        entries[entry.page.slug] = entry
        if entry.row is not None:
            read[entry.page.slug] = entry
            if len(read) >= CHECK_AT_ONCE:
                _check_and_let_go(seen, read)
                read = {}
    _check_and_let_go(seen, read)
    wiki = Wiki(
        seen.project.root, {slug: e.page for slug, e in entries.items()}, seen.index, seen.attachments
    )
    ctx = Context(seen.project, seen.schema, wiki, seen.files, seen.source_stats)
    records = _records(seen, entries)
    if not fresh and saved.get("key") == _across_key(seen, records):
        across = [json_finding(f) for f in saved["findings"]]
    else:
        across = [f for rule, check in ACROSS.items() if rule in seen.levels for f in check(ctx)]
    changed = {slug: e for slug, e in entries.items() if e.row is not None}
    found = across + [f for e in entries.values() for f in e.findings]
    disabled = {e.page.rel: e.page.disabled for e in entries.values() if e.page.disabled}
    if state is not None:
        gone = [rel for rel in rows if rel not in records]
        deps = sorted({d for e in entries.values() for d in _deps(e)})
        _store(state, seen, changed, gone, records, across, disabled, deps)
    return Linted(found, disabled, len(entries), seen.index)


def _check_and_let_go(seen: _Seen, read: dict[str, _Entry]) -> None:
    """The own rules on pages just read; then each keeps only its facts (what the rules across
    pages read, as for a page from the cache), not its text and parsed blocks: a first lint of
    100,000 pages held them all (3.9 GB)."""
    _check_own(seen, read)
    for e in read.values():
        if e.facts is not None:
            e.page = page_of(e.page.rel, e.facts)
            e.facts = {"deps": e.facts["deps"]}


def _check_own(seen: _Seen, pages: dict[str, _Entry]) -> None:
    """The own rules on these pages (read and parsed): each entry's findings."""
    if not pages:
        return
    wiki = Wiki(seen.project.root, {slug: e.page for slug, e in pages.items()})
    own = Context(seen.project, seen.schema, wiki, seen.files, seen.source_stats)
    by_page: dict[str, list[Finding]] = {}
    for rule, check in OWN.items():
        if rule in seen.levels:
            for f in check(own):
                by_page.setdefault(f.path, []).append(f)
    for e in pages.values():
        e.findings = by_page.get(e.page.rel, [])


def _across_key(seen: _Seen, records: dict[str, Record]) -> str:
    """What the rules across pages read: every page's facts and whether its bytes are what
    wikic wrote, the index, attachments, what wikic wrote, the settings. An edit that changes
    only pages' text and citations (most do) leaves it as it was."""
    index = seen.index
    parts: list[Any] = [
        VERSION,
        sorted(r for r in seen.levels if r in ACROSS),
        seen.schema.lint.model_dump(mode="json"),
        seen.schema.type_names(),
        (index.hash, index.read_error, index.hash == seen.files.get(index.rel)) if index else None,
        sorted(seen.attachments),
        sorted(seen.files),  # hand-edit: a recorded page that is gone
        sorted((rel, r[2], r[3]) for rel, r in records.items()),
    ]
    return digest(repr(parts), FINGERPRINT)


def _records(seen: _Seen, entries: dict[str, _Entry]) -> dict[str, Record]:
    return {
        e.page.rel: [*e.stat, e.across, e.page.hash == seen.files.get(e.page.rel)] for e in entries.values()
    }


def _deps(e: _Entry) -> list[str]:
    return list(e.facts["deps"]) if e.facts else []


def _store(
    state: State,
    seen: _Seen,
    changed: dict[str, _Entry],
    gone: list[str],
    records: dict[str, Record],
    across: list[Finding],
    disabled: dict[str, set[str]],
    deps: list[str],
) -> None:
    """The rows of the pages read, and what the next lint compares with (every page's record,
    the findings across pages, the sources read), in one transaction."""
    new = []
    for e in changed.values():
        if e.row is not None and e.row.facts:
            findings = json.dumps([finding_json(f) for f in e.findings], ensure_ascii=False)
            new.append(LintRow(e.row.rel, e.row.size, e.row.mtime_ns, e.row.key, e.row.facts, findings))
        elif e.row is not None:  # always read again now (a saved answer): no row of what it was
            gone.append(e.page.rel)
    saved = {
        "base": _base(seen),
        "env": _env(seen, deps),
        "deps": deps,
        "key": _across_key(seen, records),
        "findings": [finding_json(f) for f in across],
        "pages": records,
        "off": {rel: sorted(off) for rel, off in disabled.items()},
    }
    state.set_lint_pages(new, gone, json.dumps(saved, ensure_ascii=False))


def _entry(seen: _Seen, rel: str, st: Stat, row: LintRow | None) -> _Entry:
    """The page from its cached facts when its bytes (by stat) and what its findings read are
    as they were; else read, parsed and marked for its own rules."""
    if row is not None and row.facts and (row.size, row.mtime_ns) == st:
        facts = json.loads(row.facts)
        if _key(seen, facts["deps"]) == row.key:
            findings = [json_finding(f) for f in json.loads(row.findings)]
            deps = {"deps": facts["deps"]}  # the rest is in the page now: not held twice
            return _Entry(page_of(rel, facts), None, findings, facts["across"], st, deps)
    return _read(seen, rel, st)


def _read(seen: _Seen, rel: str, st: Stat) -> _Entry:
    page = read_page(seen.project.root / rel, rel)
    facts = facts_of(page)
    deps = facts["deps"] if facts else []
    stat = seen.trusted(st)
    text = json.dumps(facts, ensure_ascii=False) if facts else ""
    across = facts["across"] if facts else repr((page.hash, page.read_error))
    return _Entry(page, LintRow(rel, *stat, _key(seen, deps), text, ""), [], across, stat, facts)


def _key(seen: _Seen, deps: list[str]) -> str:
    """What a page's own findings read besides its bytes: the rules' settings, and for each
    source it cites or lists, the file's stat and what the last build recorded of it."""
    # repr of [settings, (rel, stat, recorded), ...], each source's part made once per lint:
    # a topic page lists hundreds of sources, each listed by many pages
    reprs = seen.reprs
    for rel in deps:
        if rel not in reprs:
            reprs[rel] = repr((rel, _stat(seen, rel), seen.source_stats.get(rel)))
    text = "[" + repr(seen.settings) + "".join([", " + reprs[rel] for rel in deps]) + "]"
    return digest(text, FINGERPRINT)


def _stat(seen: _Seen, rel: str) -> Stat | None:
    """A cited or listed source's stat, once per lint (None: not a file under sources/)."""
    if rel not in seen.stats:
        seen.stats[rel] = None
        if rel.startswith("sources/") and ".." not in rel.split("/"):
            try:
                st = os.stat(os.path.join(seen.project.root, rel))  # no Path: once per source
                seen.stats[rel] = (st.st_size, st.st_mtime_ns)
            except OSError:
                pass
    return seen.stats[rel]
