"""What a cached lint reads once (settings, the build's records, wiki/ by stat), each page as
an entry (read and checked, or from the cache), the keys its own findings are cached under,
what is saved for the next lint (every page's record, the sources read, the findings across
pages), and the result."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from wikic.hashing import FINGERPRINT, digest, fingerprint
from wikic.lint import citations, rules
from wikic.lint.across import ACROSS, Across
from wikic.lint.context import Context, Finding, SourceCache
from wikic.lint.facts import Facts, facts_of, finding_json, folded
from wikic.project import Project
from wikic.state import LintRow, State
from wikic.state.lint import Record, SourceRecord
from wikic.wiki.page import Page
from wikic.wiki.read import INDEX, LOG, PageStats, Wiki, read_page

if TYPE_CHECKING:
    from wikic.config import Schema

VERSION = 7  # bump when a rule or the facts change: every page is checked again (7: lint_text, topics)
# A file changed this close to the lint that stat'ed it may change again within the same mtime
# tick at the same size (git's "racily clean" entries): such a stat is recorded as untrusted.
RACY_NS = 100_000_000
# A page's own findings: what the page says, checked against the sources it cites and lists.
OWN = {
    "frontmatter": rules.frontmatter,
    "empty-page": rules.empty_page,
    **{r: fn for r, (_, fn) in citations.RULES.items() if r not in ACROSS},
}
Stat = tuple[int, int]  # (size, mtime_ns)
CHECK_AT_ONCE = 500  # pages read, checked and let go together
# characters of sources kept read from one batch of pages to the next (about 25 MB held): a
# topic page cites sources that pages in other batches cite too (10,000 pages read 26,953
# sources when each batch read its own; 10,000 generated sources are 7.2 million characters)
SOURCE_CHARS_KEPT = 8_000_000
# per page in the stored lint (Record): size, mtime_ns, facts["across"], its hash, whether its
# row is cached (not a page always read again), whether it can be an orphan
SIZE: Final = 0
MTIME: Final = 1
FACTS: Final = 2
HASH: Final = 3
CACHED: Final = 4
ORPHANABLE: Final = 5


@dataclass
class Linted:
    """What a cached lint found (unsuppressed, without levels), the inline lint switches of
    the pages, and how many pages there are."""

    findings: list[Finding]
    disabled: dict[str, set[str]]  # page path -> the rules it turns off (index.md's included)
    pages: int
    checked: int  # pages looked at again, read or from their cached facts; the others' findings
    # came whole from the last lint
    files: set[str] = field(default_factory=set)  # the attachments links resolved against

    def switches(self, rel: str) -> set[str]:
        return self.disabled.get(rel, set())


@dataclass
class Entry:
    page: Page
    row: LintRow | None  # a row to store (None: the cached one still holds)
    findings: list[Finding]  # the page's own findings (filled after the check for a reread page)
    across: str  # a digest of what the rules across pages read of it (its bytes, for one always reread)
    stat: Stat  # as read now; mtime -1 when too recent to be trusted next time
    facts: Facts | None  # None: a page always read again (a saved answer)

    def record(self) -> Record:
        page = self.page
        return (*self.stat, self.across, page.hash, self.facts is not None, rules.can_be_orphan(page))

    def deps(self) -> list[str]:
        return list(self.facts["deps"]) if self.facts else []


@dataclass
class Seen:
    """What one cached lint reads once: settings, the build's records, wiki/ by stat."""

    project: Project
    schema: Schema
    levels: dict[str, str]
    settings: str  # what every page's own findings depend on besides its bytes and sources
    base: str  # what the findings across pages depend on besides the pages: settings, attachments
    files: dict[str, str]  # what wikic wrote: path -> hash
    source_stats: dict[str, tuple[int, int, str]]  # what the last build read of each source
    listing: list[tuple[str, Stat]]  # wiki/x.md and its stat, every page but index.md and log.md
    index_stat: Stat | None  # index.md's, None when there is none
    attachments: set[str]
    started: int  # time.time_ns() before anything was stat'ed
    stats: dict[str, Stat | None] = field(default_factory=dict)  # sources' stats, read once
    gone: set[str] = field(default_factory=set)  # of those, the ones with no file (stale-page asks)
    reprs: dict[str, str] = field(default_factory=dict)  # key()'s part for each source, made once
    texts: SourceCache | None = None  # the sources read by the batches of pages checked so far

    root: str = ""  # the project's path and a slash, for stat()

    def __post_init__(self) -> None:
        self.root = os.path.join(self.project.root, "")

    def trusted(self, st: Stat) -> Stat:
        return (st[0], st[1] if st[1] < self.started - RACY_NS else -1)

    def read_index(self) -> Page | None:
        rel = f"wiki/{INDEX}"
        return None if self.index_stat is None else read_page(self.project.root / rel, rel)

    def sources(self, deps: Iterable[str]) -> dict[str, SourceRecord]:
        """What each source's findings read, as saved: its stat and what the last build read."""
        return {rel: self.source(rel) for rel in deps}

    def source(self, rel: str) -> SourceRecord:
        st, read = self.stat(rel), self.source_stats.get(rel)
        return (*(st or (None, None)), *(read or (None, None, None)))

    def stat(self, rel: str) -> Stat | None:
        """A cited or listed source's stat, once per lint (None: not a file under sources/)."""
        if rel not in self.stats:
            self.stats[rel] = None
            if rel.startswith("sources/") and ".." not in rel.split("/"):
                try:
                    st = os.stat(self.root + rel)  # no Path, no join: once per source, every lint
                    self.stats[rel] = (st.st_size, st.st_mtime_ns)
                except FileNotFoundError:
                    self.gone.add(rel)
                except OSError:
                    pass
        return self.stats[rel]

    def key(self, deps: list[str]) -> str:
        """What a page's own findings read besides its bytes: the rules' settings, and for each
        source it cites or lists, the file's stat and what the last build recorded of it."""
        # repr of [settings, (rel, stat, recorded), ...], each source's part made once per lint:
        # a topic page lists hundreds of sources, each listed by many pages
        text = "[" + repr(self.settings) + "".join([", " + self.source_repr(rel) for rel in deps]) + "]"
        return digest(text, FINGERPRINT)

    def source_repr(self, rel: str) -> str:
        """A source's part of a key: its stat and what the last build read of it."""
        found = self.reprs.get(rel)
        if found is None:
            found = self.reprs[rel] = repr((rel, self.stat(rel), self.source_stats.get(rel)))
        return found


def settings_of(schema: Schema, levels: dict[str, str]) -> str:
    """What every page's own findings depend on besides its bytes and sources."""
    return fingerprint(
        [
            VERSION,
            sorted(r for r in levels if r in OWN),
            schema.lint.citation_threshold,
            schema.type_names(),
            schema.privacy.model_dump(mode="json")["redact"],  # bad-citation reads redacted lines
        ]
    )


def base_of(settings: str, levels: Mapping[str, str], schema: Schema, attachments: Iterable[str]) -> str:
    """What the findings across pages depend on besides the pages (Seen.base): the settings,
    the rules, and the attachments' names a link may name."""
    return fingerprint([settings, sorted(levels), schema.lint.model_dump(mode="json"), sorted(attachments)])


def see(
    project: Project, schema: Schema, levels: dict[str, str], state: State, wiki_stats: PageStats | None
) -> Seen:
    settings = settings_of(schema, levels)
    taken = wiki_stats or PageStats.take(project.wiki_dir)
    listing: list[tuple[str, Stat]] = []
    index: Stat | None = None
    for name, st in taken.stats:
        if name == INDEX:
            index = st
        elif name != LOG:
            listing.append((f"wiki/{name}", st))
    base = base_of(settings, levels, schema, taken.attachments)
    files, source_stats = state.file_hashes(), state.source_stats()
    return Seen(
        project,
        schema,
        levels,
        settings,
        base,
        files,
        source_stats,
        listing,
        index,
        taken.attachments,
        taken.taken_ns,
    )


def read(seen: Seen, rel: str, st: Stat) -> Entry:
    """The page read and parsed, its facts made, marked for its own rules."""
    page = read_page(seen.project.root / rel, rel)
    return entry_of(seen, page, facts_of(page), st)


def entry_of(seen: Seen, page: Page, facts: Facts | None, st: Stat) -> Entry:
    """A page read and parsed (`facts`: facts_of(page)), marked for its own rules."""
    rel = page.rel
    deps = facts["deps"] if facts else []
    stat = seen.trusted(st)
    text = json.dumps(facts, ensure_ascii=False) if facts else ""
    across = facts["across"] if facts else repr((page.hash, page.read_error))
    row = LintRow(rel, *stat, seen.key(deps), text, "", folded(facts))
    return Entry(page, row, [], across, stat, facts)


BadCitations = Callable[[Context, Page], Iterable[Finding]]


def check_own(seen: Seen, pages: dict[str, Entry], bad: BadCitations | None = None) -> None:
    """The own rules on these pages (read and parsed): each entry's findings. `bad`: a page's
    bad-citation findings (blocks.py), in place of the rule's."""
    if not pages:
        return
    wiki = Wiki(seen.project.root, {e.page.slug: e.page for e in pages.values()})
    own = Context(seen.project, seen.schema, wiki, seen.files, seen.source_stats)
    own.statted = (seen.stats, seen.gone)  # stale-page stats no source twice
    if seen.texts is None:
        seen.texts = own.sources
    else:
        own.sources = seen.texts
    by_page: dict[str, list[Finding]] = {}
    for rule, check in OWN.items():
        if rule in seen.levels:
            if rule == "bad-citation" and bad is not None:
                found: Iterable[Finding] = [f for e in pages.values() for f in bad(own, e.page)]
            else:
                found = check(own)
            for f in found:
                by_page.setdefault(f.path, []).append(f)
    for e in pages.values():
        e.findings = by_page.get(e.page.rel, [])
    seen.texts.trim(SOURCE_CHARS_KEPT)


@dataclass
class Saved:
    """What a lint stores for the next one besides the rows of the pages it read."""

    records: dict[str, Record]  # every page's (state: lint_records)
    sources: dict[str, SourceRecord]  # each cited or listed source's (state: lint_sources)
    index: list[Any] | None  # index.md's trusted stat, hash, read error
    across: Across
    off: dict[str, list[str]]  # path -> the rules it turns off (index.md's included)
    names: str  # the fingerprint of the names the across findings were made with

    def to_json(self, seen: Seen) -> str:
        """What is stored in Meta.LINT_ACROSS (the records and sources in their tables)."""
        data = {
            "v": VERSION,
            "stored": secrets.token_hex(8),  # tells a reader (`wikic serve`) that a lint stored
            "base": seen.base,
            "index": self.index,
            "across": self.across.to_json(),
            "off": self.off,
            "names": self.names,
        }
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, data: dict[str, Any], state: State) -> Saved:
        across = Across.from_json(data["across"])
        records, sources = state.lint_records(), state.lint_sources()
        return cls(records, sources, data["index"], across, data["off"], data["names"])

    def findings(self, seen: Seen, on_disk: dict[str, str]) -> list[Finding]:
        """The findings across pages, from what is kept and every page's record."""
        pages = [(rel.rsplit("/", 1)[-1][:-3], rel, r[ORPHANABLE]) for rel, r in self.records.items()]
        return self.across.findings(seen.levels, pages, seen.files, on_disk, seen.project.root)


def own_rows(changed: dict[str, Entry]) -> tuple[list[LintRow], list[str]]:
    """The rows to store of the pages read, and those of pages always read again to drop."""
    rows, gone = [], []
    for e in changed.values():
        if e.row is not None and e.row.facts:
            findings = json.dumps([finding_json(f) for f in e.findings], ensure_ascii=False)
            row = e.row
            rows.append(LintRow(row.rel, row.size, row.mtime_ns, row.key, row.facts, findings, row.names))
        elif e.row is not None:  # always read again now (a saved answer): no row of what it was
            gone.append(e.page.rel)
    return rows, gone


def load(raw: str | None) -> dict[str, Any]:
    """The last stored lint's summary ({} when none, or of another version)."""
    data: dict[str, Any] = json.loads(raw or "{}")
    return data if data.get("v") == VERSION else {}
