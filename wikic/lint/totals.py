"""The lint summary at the end of a build at the cost of what the build changed: the counts
of the last summary are kept in state.db (Meta.LINT_TOTALS, by rule, suppressions applied),
with the digest of wiki/ as that lint saw it. When this build found wiki/ as that lint left
it, and the pages it wrote keep their names, only the pages it wrote, those citing or listing
a source it read again and those every lint reads again are checked (their paragraphs'
bad-citation findings kept by what they read: blocks.py): what those pages said before is
taken from the counts (their cached own findings, their hand-edit finding) and what they say
now added. Where one changed what the rules across pages read of it (its links, bold terms,
mentions), the findings across pages it can touch are taken before and after (moved.py).
index.md rewritten by the build (a description or a title changed) is read and checked again
against the names the last lint kept (they are the wiki's: the patch keeps every page's names),
its findings taken for those it had (kept apart: "index"); not read at all where the build
only changed plain descriptions in it (Report.index_same_links: its links are as they were).
Pages the build added, removed or renamed (their names changed) are patched too (came.py),
and so are the pages changed by hand since (hand-made pages, saved answers, the build's own
pages edited), where the build tells which (Report.hand: build/handmade.py), and the
attachments' names a link may name, where it says they changed (Report.hand_files); the saved
answers, which the lint reads again each time and keeps no facts of, by what the kept counts
keep of them ("answers": what the rules across pages read of each). Anything else (the first
build, a build killed before its lint, wiki/ changed where the build cannot tell how, other
rules, settings or wikic, --force) is the cached lint (cache.py), whose counts are kept anew;
`wikic lint` and `wikic site`, which store the cache, keep theirs so (linted). Same counts as
runner.lint, by test (tests/test_lint_totals.py).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from wikic import __version__
from wikic.errors import WikicError
from wikic.hashing import fingerprint
from wikic.lint import rules
from wikic.lint.blocks import bad_citations
from wikic.lint.came import Added, Change, Gone, listed_alone, looked_for
from wikic.lint.context import Context, Finding
from wikic.lint.entries import (
    CACHED,
    FACTS,
    HASH,
    ORPHANABLE,
    OWN,
    Entry,
    Linted,
    Seen,
    base_of,
    check_own,
    entry_of,
    own_rows,
)
from wikic.lint.entries import settings_of as own_settings
from wikic.lint.facts import Facts, facts_of, finding_json, json_finding, page_of
from wikic.lint.moved import Moved, moved
from wikic.lint.names import KeptNames
from wikic.lint.patch import names_read
from wikic.lint.runner import LintOptions, rule_levels
from wikic.project import Project
from wikic.settings import load_schema
from wikic.state import Meta, State
from wikic.wiki.page import Page
from wikic.wiki.read import INDEX, LOG, PageStats, attachments, gc_paused, read_page

if TYPE_CHECKING:
    from wikic.build.report import Report
    from wikic.config import Schema
    from wikic.snapshot import Tree

Counts = dict[str, int]  # rule -> findings
Index = tuple[Counts, bool, list[Finding]]  # index.md's counts, its hand edit, its index-drift findings
KEPT = 2  # the kept summary's format: bump when it changes (the counts are then made again)
# what a patch reads of it
FIELDS = {"settings", "wiki", "counts", "hand", "off", "always", "answers", "unbuilt", "index", "files"}
INDEX_REL = f"wiki/{INDEX}"


def take(project: Project) -> dict[str, Any] | None:
    """The kept summary, taken out of state.db before a build changes anything: a build killed
    before its lint leaves none, so the next one counts from the cache."""
    if not project.state_path.is_file():
        return None
    try:
        state = State.peek(project.state_path)
        if state is None:
            return None
        with state:
            raw = state.get_meta(Meta.LINT_TOTALS)
            if raw is not None:
                state.delete_meta(Meta.LINT_TOTALS)
        kept = json.loads(raw or "{}")
    except (sqlite3.Error, WikicError, ValueError):  # the build opens, repairs or reports it
        return None
    return kept if isinstance(kept, dict) and kept else None


def summary(
    project: Project,
    state: State,
    report: Report,
    fresh: bool,
    kept: dict[str, Any] | None,
    after: Tree | None,
) -> dict[str, int]:
    """Counts by level of the findings after the build of `report` (`fresh`: every page
    checked again), as LintResult.counts() says them; what lets the next build patch them
    kept, with `after`: wiki/ as the build left it, walked (None: not known)."""
    schema = load_schema(project.schema_path)
    levels = rule_levels(schema, LintOptions())
    own = own_settings(schema, levels)  # made once: it fingerprints the schema's settings
    mark = _settings(schema, levels, own)
    with gc_paused():
        counts = None
        usable = kept is not None and kept.get("settings") == mark and kept.keys() >= FIELDS
        if kept is not None and usable and after is not None and not fresh:
            counts = _patched(project, state, _seen(project, schema, levels, own), report, kept, after)
        if counts is None:
            counts = _counted(project, state, schema, levels, fresh, mark, after)[1]
    return by_level(counts, levels)


def by_level(counts: Mapping[str, int], levels: Mapping[str, str]) -> dict[str, int]:
    """{"error": n, "warning": n}, as LintResult.counts() says them."""
    out = {"error": 0, "warning": 0}
    for rule, n in counts.items():
        if levels.get(rule) in out:
            out[levels[rule]] += n
    return out


def _settings(schema: Schema, levels: dict[str, str], own: str) -> str:
    """What the kept counts were made with besides the pages: wikic, the rules and settings
    (`own`: entries.settings_of)."""
    lint = schema.lint.model_dump(mode="json")
    return fingerprint([KEPT, __version__, own, sorted(levels.items()), lint])


def _suppressed(off: Mapping[str, Iterable[str]]) -> Callable[[Finding], bool]:
    def hidden(f: Finding) -> bool:
        for path in (f.path, *f.also):
            rules_off = off.get(path, ())
            if f.rule in rules_off or "all" in rules_off:
                return True
        return False

    return hidden


def _tally(findings: Iterable[Finding], off: Mapping[str, Iterable[str]]) -> Counter[str]:
    hidden = _suppressed(off)
    return Counter(f.rule for f in findings if not hidden(f))


def _hand(rel: str) -> Finding:
    """A page's hand-edit finding, as far as counting goes (the rules across pages say it)."""
    return Finding("hand-edit", rel, 1, "")


# --- the full count ------------------------------------------------------------------
def linted(
    project: Project, state: State, schema: Schema, after: Tree, wiki_stats: PageStats | None = None
) -> Linted:
    """`wikic lint`'s cached lint over every page, its counts kept as a build's summary keeps
    them, so that the next build patches them (`after`: wiki/ as walked before it was read;
    `wiki_stats`: the lint's stats of it, from that walk)."""
    levels = rule_levels(schema, LintOptions())
    mark = _settings(schema, levels, own_settings(schema, levels))
    with gc_paused():
        return _counted(project, state, schema, levels, False, mark, after, wiki_stats)[0]


def _counted(
    project: Project,
    state: State,
    schema: Schema,
    levels: dict[str, str],
    fresh: bool,
    mark: str,
    after: Tree | None,
    wiki_stats: PageStats | None = None,
) -> tuple[Linted, Counts]:
    """The cached lint (cache.py) over every page, and its counts; kept where the build left
    a wiki/ to compare the next with."""
    from wikic.lint.cache import cached_findings

    done = cached_findings(project, schema, levels, state, fresh, wiki_stats=wiki_stats)
    off = {rel: sorted(rs) for rel, rs in done.disabled.items()}
    counts = dict(_tally(done.findings, off))
    if after is not None and after.complete:
        always = state.lint_always()
        own = [f for f in done.findings if f.rule in OWN]
        answers = _answers(project, state, always)
        kept = {
            "settings": mark,
            "wiki": after.digest(),
            "counts": counts,
            "hand": sorted(f.path for f in done.findings if f.rule == "hand-edit"),
            "off": off,
            "always": {rel: dict(_tally([f for f in own if f.path == rel], off)) for rel in always},
            "answers": answers,
            "unbuilt": state.lint_unbuilt_sources(),
            "index": dict(_tally([f for f in done.findings if f.path == INDEX_REL], off)),
            "files": sorted(done.files),  # the attachments: a link to one is not broken
            "how": "counted",  # how these counts were made, and from how many pages read: for tests
            "checked": done.checked,
        }
        state.set_meta(Meta.LINT_TOTALS, json.dumps(kept, ensure_ascii=False))
    return done, counts


def _answers(project: Project, state: State, always: list[str]) -> dict[str, Facts]:
    """The pages read again by every lint (saved answers) that the rules across pages read as
    any page (their facts, which the lint keeps none of), as the lint just read them: what
    the next patch takes them to have been."""
    records = state.lint_records_of(always)
    found: dict[str, Facts] = {}
    for rel in always:
        page = read_page(project.root / rel, rel)
        facts = facts_of(page, answer=True)
        if facts is not None and rel in records and records[rel][HASH] == page.hash:
            found[rel] = facts
    return found


# --- the patched count ---------------------------------------------------------------
def _patched(
    project: Project,
    state: State,
    seen: Seen,
    report: Report,
    kept: dict[str, Any],
    after: Tree,
) -> Counts | None:
    """The kept counts brought up to date from the pages the build changed, and kept; None
    where that cannot be exact (see the module)."""
    made = _written(report, after, kept["wiki"])
    if made is None:
        return None
    written, index_written, new, gone = made
    answers: dict[str, Facts] = kept["answers"]
    if gone & ({*kept["always"], *kept["off"]} - answers.keys()):
        return None  # a page gone read each time (but a saved answer), or with switches
    unbuilt: list[str] = kept["unbuilt"]
    # the sources the build read again (one edited after it read it is read by the next build,
    # whose summary checks its pages: as for a page edited after the build wrote it)
    changed = set(report.reread) | _moved(project, state, unbuilt)
    again = sorted((written | state.lint_dependents(changed) | set(kept["always"])) - gone)
    read = _pages(seen, state, again, kept["off"], new)
    if read is None:
        return None
    pages, changed_facts = read
    files, moved_files = _files(project, report, kept)
    names = KeptNames.stored(state, files)  # ...with the attachments' names now
    was = _was(state, answers, changed_facts, new)
    # pages that came, went or changed their names, and those that name them (or an attachment's)
    change = _change(seen, state, kept, names, pages, changed_facts, was, new, gone, moved_files)
    if change is None:
        return None
    patched = _across(seen, state, names, pages, changed_facts, was, change)
    if patched is None:
        return None
    across, names = patched
    holds, index = _index_now(seen, state, kept, report, index_written, names, change)
    if not holds:
        return None
    deps = {d for _, facts, _, _ in pages.values() if facts is not None for d in facts["deps"]} | changed
    seen.source_stats = state.built_sources_of(sorted(deps))  # before any key is made
    entries = {page.slug: entry_of(seen, page, facts, st) for page, facts, st, _ in pages.values()}
    blocks = _Blocks(seen, state.lint_blocks_of(again))
    check_own(seen, entries, blocks.bad)
    hand = {rel for rel, (page, _, _, wrote) in pages.items() if wrote and page.hash != wrote}
    counts = _apply(state, kept, entries, hand, index, across, new, gone)
    if counts is None:
        return None
    checked, reused = len(entries), len(blocks.used)
    kept.update(
        counts=counts, wiki=after.digest(), how="patched", checked=checked, reused=reused, files=sorted(files)
    )
    _answers_now(answers, pages, gone)
    kept["unbuilt"] = sorted({*unbuilt, *(d for d in deps if d not in seen.source_stats)})
    saved = json.dumps(kept, ensure_ascii=False)
    base = base_of(seen.settings, seen.levels, seen.schema, files) if moved_files else None
    _store(seen, state, entries, changed, blocks, saved, across, gone, _drift(report, index), base)
    return counts


def _files(project: Project, report: Report, kept: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The attachments' names a link may name, now (read again where the build says they
    changed: Report.hand_files), and those of them that came or went."""
    files = attachments(project.wiki_dir) if report.hand_files else set(kept["files"])
    return files, files ^ set(kept["files"])


def _drift(report: Report, index: Index | None) -> list[Finding] | None:
    """index.md's findings of index-drift, where it was read again but not rewritten: edited by
    hand (build/ownindex.py), what it lists may not be there now, which the lint's own store
    says where it reads it unchanged."""
    return index[2] if index is not None and INDEX_REL not in report.written else None


def _was(state: State, answers: dict[str, Facts], changed: list[str], new: set[str]) -> dict[str, Facts]:
    """The stored facts of the pages read whose facts changed (a saved answer's: as the kept
    counts keep them), but those new."""
    was = {rel: json.loads(f) for rel, f in state.lint_facts(sorted(set(changed) - new)).items()}
    return was | {rel: answers[rel] for rel in changed if rel in answers and rel not in new}


def _answers_now(answers: dict[str, Facts], pages: Read, gone: set[str]) -> None:
    """What the kept counts keep of the saved answers, as read now, for the next patch."""
    for rel in gone:
        answers.pop(rel, None)
    for rel, got in pages.items():
        if got[1] is None and (facts := _read_facts(got)) is not None:
            answers[rel] = facts
        elif got[1] is None:
            answers.pop(rel, None)


def _index_now(
    seen: Seen,
    state: State,
    kept: dict[str, Any],
    report: Report,
    written: bool,
    names: KeptNames,
    change: Change,
) -> tuple[bool, Index | None]:
    """Whether the patch holds for index.md (`written`: the build rewrote it), and its counts
    where it was read again: unless the build says its links are as they were, or that it only
    listed the pages it added or renamed (or took out those gone) where the index had no
    finding (checked on their lines alone). index.md kept as edited by hand (build/ownindex.py)
    is not rewritten, but what it lists or does not changes where pages came, went or were
    renamed, or the attachments' names did: read again then."""
    kept_edit = INDEX_REL in report.conflicts and bool(change.added or change.gone or report.hand_files)
    check = (written or kept_edit) and not report.index_same_links
    if check and report.index_listed and (change.added or change.gone) and not any(kept["index"].values()):
        check = not _listed(seen, names, change)
    if not check:
        return True, None
    index = _index(seen, state, kept, names)
    return index is not None, index


def _across(
    seen: Seen,
    state: State,
    names: KeptNames,
    pages: Read,
    changed_facts: list[str],
    was: dict[str, Facts],
    change: Change,
) -> tuple[Moved | None, KeptNames] | None:
    """The findings across pages the pages read (and those gone) can touch, before and after
    (None where none changed what those rules read of it), and the names as they are now; None
    where that cannot be patched (moved.py). `was`: the stored facts of the pages read whose
    facts changed."""
    if not changed_facts and change.gone is None and not change.relinked:
        return None, names
    # what the rules across pages read of them changed: patched from before and after (a
    # saved answer: as a full lint reads it, which keeps no facts of it)
    now = {rel: facts for rel in changed_facts if (facts := _read_facts(pages[rel])) is not None}
    if len(now) != len(changed_facts):  # a page always read again: no facts to patch from
        return None
    thresholds = (seen.schema.lint.missing_page_threshold, seen.schema.lint.duplicate_threshold)
    across = moved(state, seen.levels, thresholds, names, now, was, change)
    if across is None:
        return None
    # the names changed by the pages added or gone: index.md is checked by them
    return across, across.names if across.names is not None else names


def _read_facts(read: tuple[Page, Facts | None, Any, Any]) -> Facts | None:
    """What the rules across pages read of a page read: its facts, or a saved answer's, which
    the lint keeps none of (read again each time), as a full lint reads it."""
    page, facts = read[0], read[1]
    return facts if facts is not None else facts_of(page, answer=True)


class _Blocks:
    """The bad-citation findings of the pages read, by block (blocks.py): kept and now."""

    def __init__(self, seen: Seen, kept: dict[str, dict[str, str]]) -> None:
        self.seen, self.kept = seen, kept
        self.now: dict[str, dict[str, str]] = {}
        self.used: set[str] = set()  # the keys of blocks whose findings came from the kept ones

    def bad(self, ctx: Context, page: Page) -> Iterator[Finding]:
        kept, now = self.kept.get(page.rel, {}), self.now.setdefault(page.rel, {})
        return bad_citations(self.seen, ctx, page, kept, now, self.used)

    def changes(self) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
        """The blocks gone, and those new, by page."""
        gone, new = [], []
        for rel, now in self.now.items():
            kept = self.kept.get(rel, {})
            gone += [(rel, key) for key in kept if key not in now]
            new += [(rel, key, found) for key, found in now.items() if key not in kept]
        return gone, new


def _store(
    seen: Seen,
    state: State,
    entries: dict[str, Entry],
    changed: set[str],
    blocks: _Blocks,
    kept: str,
    across: Moved | None = None,
    went: Iterable[str] = (),
    drift: list[Finding] | None = None,
    base: str | None = None,
) -> None:
    """The pages read, their sources and blocks, where they changed, and the counts, at once;
    with `across`, the findings across pages as patched and the pages' mentions; the rows of
    the pages gone (`went`) dropped; with `drift`, index.md's findings of index-drift now; with
    `base`, what those findings depend on besides the pages (the attachments changed)."""
    rows, gone = own_rows(entries)
    gone += went
    was = state.lint_deps_of(e.page.rel for e in entries.values())
    cited = {
        e.page.rel: e.deps()
        for e in entries.values()
        if e.facts is not None and set(e.deps()) != was.get(e.page.rel)
    }
    records = {e.page.rel: e.record() for e in entries.values()}
    # a source the build did not read again, that the same page cited before, is as stored
    # (wiki/ and the build say so): only the others are compared with what is
    asked = changed | {d for e in entries.values() for d in e.deps() if d not in was.get(e.page.rel, ())}
    before = state.lint_sources_of(sorted(asked))
    sources = {rel: now for rel, now in seen.sources(asked).items() if before.get(rel) != now}
    saved: dict[Meta, str | bytes] = {Meta.LINT_TOTALS: kept}
    mentions = {}
    unmentioned: list[str] = []
    if across is not None:
        saved[Meta.LINT_ACROSS], mentions, unmentioned = across.across, across.mentions, across.unmentioned
        if across.names is not None:  # the pages added or gone: their names, as one more change
            saved[Meta.LINT_NAMES_MORE] = across.names.more
            if across.names.folded and across.names.raw is not None:  # or written into the whole
                saved[Meta.LINT_NAMES] = across.names.raw
    if (drift is not None or base) and (
        text := saved.get(Meta.LINT_ACROSS) or state.get_meta(Meta.LINT_ACROSS)
    ):
        data = json.loads(text)
        if drift is not None:
            data["across"]["index"] = [finding_json(f) for f in drift]
        data["base"] = base or data["base"]
        data["stored"] = secrets.token_hex(8)
        saved[Meta.LINT_ACROSS] = json.dumps(data, ensure_ascii=False)
    state.save_lint(
        rows, gone, cited, mentions, records, sources, saved, blocks=blocks.changes(), unmentioned=unmentioned
    )


def _written(report: Report, after: Tree, linted: str) -> tuple[set[str], bool, set[str], set[str]] | None:
    """The pages the build wrote (or removed) and those changed by hand since the last lint
    saw wiki/ (`linted`, its digest; the build tells which: Report.hand), whether it rewrote
    index.md, and the pages added and those removed (came.py), from wiki/ as the build found
    it (Report.found) and left it (`after`); None when either is not known whole, a source
    could not be read, wiki/ changed otherwise, index.md went or came, or the build touched
    an attachment (the rules across pages then run again)."""
    before = report.found
    if before is None or not (before.complete and after.complete) or not report.ok:
        return None
    by_hand: Mapping[str, str] = {}
    if before.digest() != linted:
        if report.hand is None or report.hand_left != linted:
            return None
        by_hand = report.hand
    pages: set[str] = set()
    new: set[str] = set()
    gone: set[str] = set()
    index = False
    for rel, kind in by_hand.items():
        if (after.stat(rel) is None) != (kind == "gone"):  # changed again meanwhile
            return None
        if rel == INDEX_REL:  # index.md edited by hand, kept as it is (build/ownindex.py)
            index = True
            continue
        (gone if kind == "gone" else pages).add(rel)
        if kind == "new":
            new.add(rel)
    for rel in [*report.written, *report.removed]:
        if not rel.startswith("wiki/") or rel == f"wiki/{LOG}" or rel in by_hand:
            continue  # nothing lint reads; a page deleted by hand that the build wrote again
        name = rel[len("wiki/") :]
        there = after.stat(rel) is not None  # by bisection: 2 of 100,000
        was = before.stat(rel) is not None
        if "/" in name or not name.endswith(".md") or not (there or was) or (not there and name == INDEX):
            return None
        if not there:
            gone.add(rel)
            continue
        if not was:
            new.add(rel)
        if name == INDEX:
            index = True
        else:
            pages.add(rel)
    return (pages, index, new, gone) if INDEX_REL not in new else None


def _change(
    seen: Seen,
    state: State,
    kept: dict[str, Any],
    names: KeptNames,
    pages: Read,
    changed: list[str],
    was: dict[str, Facts],
    new: set[str],
    gone: set[str],
    files: set[str],
) -> Change | None:
    """The pages new, those gone (from their stored facts) and those read whose names changed
    (`was`: the stored facts of those whose facts changed), as came.py takes them; and the
    pages whose findings across pages that can change though their facts did not, with those
    facts: those whose names text names one (or an attachment's name that came or went:
    `files`), and those that may treat a topic key no page has now as a topic (their names
    text holds each of its words). None where a page gone has no
    stored facts, or a page read again each time (but a saved answer) names one or such a key
    (it has no facts to patch from)."""
    renamed = {
        rel for rel, old in was.items() if names_read(old) != names_read(_read_facts(pages[rel]) or old)
    }
    stored = {rel: json.loads(f) for rel, f in state.lint_facts(sorted(gone)).items()}
    stored |= {rel: kept["answers"][rel] for rel in gone if rel in kept["answers"]}
    if len(stored) != len(gone):
        return None
    went = added = None
    if gone or renamed:
        went = Gone(
            {rel: page_of(rel, f) for rel, f in stored.items()} | {r: page_of(r, was[r]) for r in renamed}
        )
    if new or renamed:
        added = Added({rel: pages[rel][0] for rel in sorted(new | renamed)})
    if went is None and added is None and not files:
        return Change()
    keys: dict[str, int] | None = {}
    if went is not None and "missing-page" in seen.levels and (keys := went.keys(names)) is None:
        return None
    assert keys is not None
    found, words = looked_for(went.pages if went else {}, added.pages if added else {}, keys)
    found = [*found, *sorted(files)]  # the attachments' names that came or went
    always = set()  # those of the pages read again each time that may say otherwise now
    for rel in kept["always"].keys() - gone:
        text = pages[rel][0].text.casefold()
        if any(s in text for s in found) or any(all(w in text for w in ws) for ws in words):
            always.add(rel)
    # the pages whose names text holds a name or slug gone, or every word of a key gone, each
    # a whole word ("504" of "note 504" is not one in "note 1504"; a key's word may have lost an s)
    bounded = [[re.compile(rf"{re.escape(w)}s?(?!\w)") for w in ws] for ws in words]
    named = {
        rel
        for rel, text in state.lint_texts([[s] for s in found] + words)
        if any(s in text for s in found) or any(all(_whole(w, text) for w in ws) for ws in bounded)
    }
    relinked = _facts_of(state, pages, (named | always) - gone - new - set(changed))
    return None if relinked is None else Change(went, added, renamed, relinked)


def _facts_of(state: State, pages: Read, rels: set[str]) -> dict[str, Facts] | None:
    """These pages' facts: as read, or else as stored; None where one has none (a page read
    again each time)."""
    found: dict[str, Facts] = {}
    for rel in sorted(rels & pages.keys()):
        facts = _read_facts(pages[rel])
        if facts is None:
            return None
        found[rel] = facts
    rest = sorted(rels - pages.keys())
    stored = state.lint_facts(rest)
    if len(stored) != len(rest):
        return None
    found.update((rel, json.loads(stored[rel])) for rel in rest)
    return found


def _whole(word: re.Pattern[str], text: str) -> bool:
    r"""Whether `word` (a word, maybe with an s, not followed by a word character) is in the
    text as a whole word: (?<!\w) checked here, since a pattern that opens with it is searched
    for a character at a time (5 ms for a topic page's names text at 100,000 pages, not 0.1)."""
    for m in word.finditer(text):
        at = m.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            return True
    return False


def _listed(seen: Seen, names: KeptNames, change: Change) -> bool:
    """Whether index.md as the build left it, which only listed the pages added or renamed or
    took out those gone (and changed plain descriptions), has no finding: checked on their
    lines alone (came.listed_alone)."""
    decoded = names.decoded()
    if decoded is None:
        return False
    try:
        text = (seen.project.root / INDEX_REL).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    # a page renamed is listed anew (its line taken out and put where it sorts now), not gone
    new = [page.slug for page in change.added.pages.values()] if change.added else []
    went = change.gone.pages.items() if change.gone else ()
    return listed_alone(
        text, decoded[0].pages, new, [page.slug for rel, page in went if rel not in change.renamed]
    )


def _index(seen: Seen, state: State, kept: dict[str, Any], names: KeptNames) -> Index | None:
    """index.md as the build rewrote it: the counts of its findings (suppressions applied),
    whether it differs from what wikic wrote, and its findings of index-drift; None where its
    switches changed or the names the last lint kept are not at hand."""
    off: dict[str, list[str]] = kept["off"]
    page = read_page(seen.project.root / INDEX_REL, INDEX_REL)
    if sorted(page.disabled) != off.get(INDEX_REL, []):
        return None
    found: list[Finding] = []
    if "index-drift" in seen.levels:
        # the names of every page as the last lint saw them: the patch keeps each page's names
        decoded = names.decoded()
        if decoded is None:
            return None
        found = list(rules.index_findings(decoded[0], page))
    wrote = state.written_hashes_of([INDEX_REL]).get(INDEX_REL, "") if page.hash else ""
    hand = bool(wrote) and page.hash != wrote
    drift = list(found)
    if hand and "hand-edit" in seen.levels:
        found.append(_hand(INDEX_REL))
    return dict(_tally(found, off)), hand, drift


def _moved(project: Project, state: State, unbuilt: list[str]) -> set[str]:
    """The cited sources that are no build's input (so the build cannot say) whose stat changed."""
    if not unbuilt:
        return set()
    was = state.lint_sources_of(unbuilt)
    moved = set()
    for rel in unbuilt:
        try:
            st = os.stat(os.path.join(project.root, rel))
            now: tuple[int | None, int | None] = (st.st_size, st.st_mtime_ns)
        except OSError:
            now = (None, None)
        if rel not in was or was[rel][:2] != now:
            moved.add(rel)
    return moved


def _seen(project: Project, schema: Schema, levels: dict[str, str], settings: str) -> Seen:
    """What the own rules read, for a few pages: no listing; the build's records by key."""
    return Seen(project, schema, levels, settings, "", {}, {}, [], None, set(), time.time_ns())


# path -> the page, its facts, its stat, the hash of what wikic wrote of it ("": not wikic's)
Read = dict[str, tuple[Page, Facts | None, tuple[int, int], str]]


def _pages(
    seen: Seen, state: State, again: list[str], off: dict[str, list[str]], new: set[str] | None = None
) -> tuple[Read, list[str]] | None:
    """These pages read and parsed, with their facts and stat, and those of them that changed
    what the rules across pages read of them (the pages `new` among them); None when one is
    gone, or changed whether it is cached, whether it can be an orphan, or its switches (a
    page new: when it has no facts, or switches)."""
    records, written = state.lint_records_of(again), state.written_hashes_of(again)
    pages: Read = {}
    changed_facts: list[str] = []
    for rel in again:
        record = records.get(rel)
        try:
            st = os.stat(seen.root + rel)
        except OSError:
            return None
        page = read_page(seen.project.root / rel, rel)
        facts = facts_of(page)
        across = facts["across"] if facts else repr((page.hash, page.read_error))
        if new and rel in new:  # a saved answer new: what the rules across pages read of it (_across)
            if page.disabled or (facts is None and facts_of(page, answer=True) is None):
                return None
            changed_facts.append(rel)
            pages[rel] = (
                page,
                facts,
                (st.st_size, st.st_mtime_ns),
                written.get(rel, "") if page.hash else "",
            )
            continue
        if record is None or record[CACHED] != (facts is not None):
            return None
        if record[ORPHANABLE] != rules.can_be_orphan(page) or sorted(page.disabled) != off.get(rel, []):
            return None
        if record[FACTS] != across:
            changed_facts.append(rel)
        pages[rel] = (page, facts, (st.st_size, st.st_mtime_ns), written.get(rel, "") if page.hash else "")
    return pages, changed_facts


def _apply(
    state: State,
    kept: dict[str, Any],
    entries: dict[str, Entry],
    hand: set[str],
    index: Index | None = None,
    across: Moved | None = None,
    new: Iterable[str] = (),
    gone: set[str] | None = None,
) -> Counts | None:
    """The kept counts, less what the pages read (and those `gone`) said before, plus what
    they say now (`hand`: those of them that differ from what wikic wrote; `index`: index.md's
    counts now, and whether it does, where the build rewrote it; `across`: the findings across
    pages the pages' changed facts touched, before and after); None when the cache lacks what
    one said."""
    off: dict[str, list[str]] = kept["off"]
    always: dict[str, Counts] = kept["always"]
    counts: Counter[str] = Counter(kept["counts"])
    gone = gone or set()
    if across is not None:
        counts.subtract(_tally(across.before, off))
        counts.update(_tally(across.after, off))
    if index is not None:
        counts.subtract(kept["index"])
        counts.update(index[0])
        kept["index"] = index[0]
        kept["hand"] = sorted(
            {rel for rel in kept["hand"] if rel != INDEX_REL} | ({INDEX_REL} if index[1] else set())
        )
    cached = [e.page.rel for e in entries.values() if e.facts is not None and e.page.rel not in new]
    cached += sorted(gone - always.keys())
    before = state.lint_own_of(cached)
    if len(before) != len(cached):
        return None
    for rel in gone & always.keys():  # a saved answer gone (_patched): its own findings kept apart
        counts.subtract(always.pop(rel))
    for findings in before.values():
        counts.subtract(_tally((json_finding(f) for f in json.loads(findings)), off))
    read = {e.page.rel for e in entries.values()} | gone
    counts.subtract(_tally((_hand(rel) for rel in read & set(kept["hand"])), off))
    counts.update(_tally((_hand(rel) for rel in hand), off))
    for e in entries.values():
        if e.facts is None:
            counts.subtract(always.get(e.page.rel, {}))
            always[e.page.rel] = dict(_tally(e.findings, off))
        counts.update(_tally(e.findings, off))
    kept["hand"] = sorted((set(kept["hand"]) - read) | hand)
    if any(n < 0 for n in counts.values()):
        return None  # never, unless the kept counts were not those of this cache
    return {rule: n for rule, n in sorted(counts.items()) if n}
