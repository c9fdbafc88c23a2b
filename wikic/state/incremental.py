"""The tables that make an edit cost what it changes: what the plan made of each source,
each page's lint facts and findings, what assemble rendered of each page, and what compose
made of each page's text (issue 17)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from wikic.state.connection import Tables, Transaction, holding
from wikic.state.schema import LINKS_BY_SLUG, LINKS_INDEX, Meta


@dataclass(frozen=True)
class LintRow:
    rel: str
    size: int
    mtime_ns: int
    key: str  # what the page's own findings read (settings, its sources' stats)
    facts: str  # JSON: what the rules across pages read of it
    findings: str  # JSON: its own findings
    names: str = ""  # what the rules across pages resolve of it, casefolded (lint.facts.folded)


@dataclass(frozen=True)
class Rendered:
    """What assemble made of a page, by key: its body's inputs, the whole page's."""

    body_key: str
    page_key: str
    links: list[str]  # the slugs its body links to
    description: str  # its line in index.md


@dataclass(frozen=True)
class Planned:
    """What the plan made of one source (build/sourceplan.py), by key, as JSON."""

    key: str  # over everything its facts read
    facts: str  # JSON, then a newline and the packed names and terms (candidates.source_names)
    notes_key: str  # over its facts and what of its lines other pages show
    notes: str
    struct_key: str = ""  # over its facts and the names from structure it has lines about
    struct: str = ""  # JSON: the notes of those lines, by name


_SAVE_FACTS = """INSERT INTO planned VALUES (?, ?, ?, '', '')
    ON CONFLICT(path) DO UPDATE SET key=excluded.key, facts=excluded.facts"""
_SAVE_NOTES = """INSERT INTO planned VALUES (?, '', '', ?, ?)
    ON CONFLICT(path) DO UPDATE SET notes_key=excluded.notes_key, notes=excluded.notes"""
# The planned rows changed: the kept plan ("plan", and "plan+" beside it) is not of them until the
# plan that changed them keeps its own, which lets the mark go (a plan killed in between: none).
_STALE = "INSERT OR REPLACE INTO kept VALUES ('plan?', x'')"
_KEPT = """SELECT blob FROM kept WHERE name = ?1
    AND NOT (?1 IN ('plan', 'plan+') AND EXISTS (SELECT 1 FROM kept WHERE name = 'plan?'))"""
_PUT = "INSERT OR REPLACE INTO kept VALUES (?, zeroblob(?))"
_SAVE_STRUCT = "INSERT OR REPLACE INTO planned_struct VALUES (?, ?, ?)"
_SAVE_NAMES = "INSERT OR REPLACE INTO planned_names VALUES (?, ?)"
_EVERY_NAMED = "SELECT (SELECT COUNT(*) FROM planned) = (SELECT COUNT(*) FROM planned_names)"
_UNNAMED = "SELECT path FROM planned WHERE path NOT IN (SELECT path FROM planned_names)"
_FACTS_OF = "SELECT path, facts FROM planned WHERE path IN ({})"
_SAVE = {"facts": _SAVE_FACTS, "notes": _SAVE_NOTES, "struct": _SAVE_STRUCT}


class PlannedRows(Mapping[str, Planned]):
    """The planned table as a mapping that reads rows as they are asked for, a window of rows
    in path order at a time: the plan asks in path order, and 100,000 sources' JSON is never
    all in memory at once."""

    WINDOW = 512

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.window: dict[str, Planned] = {}

    def __getitem__(self, path: str) -> Planned:
        if path not in self.window:
            sql = (
                "SELECT p.path, p.key, p.facts, p.notes_key, p.notes, s.key, s.notes FROM planned p "
                "LEFT JOIN planned_struct s ON s.path = p.path WHERE p.path >= ? ORDER BY p.path LIMIT ?"
            )
            rows = self.db.execute(sql, (path, self.WINDOW))
            self.window = {r[0]: Planned(r[1], r[2], r[3], r[4], r[5] or "", r[6] or "") for r in rows}
        return self.window[path]

    def __iter__(self) -> Iterator[str]:
        return iter([r[0] for r in self.db.execute("SELECT path FROM planned ORDER BY path")])

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM planned").fetchone()[0])

    def holding(self, strings: Iterable[str]) -> set[str]:
        """The paths of the rows whose names and phrases (planned_names: those a patched merge
        looks for) hold any of these strings, or, of a row that has none there (written before
        it was, or by an older wikic), whose facts do: found by SQLite in one pass, not read row
        by row (a pass over every source's facts: 280 MB, 0.5-0.8 s at 100,000 sources)."""
        groups = [[s] for s in strings]
        found = {r[0] for r in holding(self.db, "SELECT path FROM planned_names", "names", groups)}
        if not self._every_named():  # a row with none: its facts searched
            unnamed = "path NOT IN (SELECT path FROM planned_names)"
            found.update(r[0] for r in holding(self.db, "SELECT path FROM planned", "facts", groups, unnamed))
        return found

    def name_rows(self, names: Callable[[str], str]) -> int:
        """planned_names made for the rows that have none (`names`: of a row's packed names, as
        a plan saves them), a thousand at a time: once, after an upgrade (at 100,000 sources a
        few seconds, then none); returns how many."""
        if self._every_named():
            return 0
        missing = [r[0] for r in self.db.execute(_UNNAMED)]
        for i in range(0, len(missing), 1000):
            rows = _by_keys(self.db, _FACTS_OF, missing[i : i + 1000])
            made = [(path, names(facts.partition("\n")[2])) for path, facts in rows]
            with Transaction(self.db):
                self.db.executemany(_SAVE_NAMES, made)
        return len(missing)

    def _every_named(self) -> bool:
        """Whether every row has its planned_names (which are of its facts as they are)."""
        return bool(self.db.execute(_EVERY_NAMED).fetchone()[0])

    def load(self, paths: list[str]) -> None:
        """These rows read at once, as the next asked for: a patched plan asks for a few
        hundred, far apart."""
        sql = (
            "SELECT p.path, p.key, p.facts, p.notes_key, p.notes, s.key, s.notes FROM planned p "
            "LEFT JOIN planned_struct s ON s.path = p.path WHERE p.path IN ({})"
        )
        self.window = {}
        for i in range(0, len(paths), 500):
            chunk = paths[i : i + 500]
            rows = self.db.execute(sql.format(",".join("?" * len(chunk))), chunk)
            self.window.update({r[0]: Planned(r[1], r[2], r[3], r[4], r[5] or "", r[6] or "") for r in rows})


Entry = tuple[str, str, list[str], str]  # a page's title, type, aliases and id ("": not the build's)


@dataclass
class Links:
    """What an assembly's pages link to, for the next to find the backlinks an edit changes
    (build/quick.py): `edges`, slug -> targets, of the pages whose links are new or changed
    (`every`: all of them, the table written anew); `dropped`, the slugs of pages gone. With
    `names` (what its names went by, kept as 'names'), every page's entry and the linker's
    names (name -> slug), each table written anew (`every`), or those that changed (an edit
    whose pages came or went: build/comego.py; a name None is no page's now). `texts`: the
    text the linker read of each page rendered (casefolded), by slug: what the next edit whose
    names change looks for them in."""

    every: bool
    edges: dict[str, list[str]]
    dropped: list[str]
    names: bytes | None = None
    entries: dict[str, Entry] = field(default_factory=dict)
    linked_names: Mapping[str, str | None] = field(default_factory=dict)
    texts: Iterable[tuple[str, str]] = ()


def _by_keys(db: sqlite3.Connection, sql: str, keys: Iterable[str]) -> Iterator[tuple[str, ...]]:
    """The rows of `sql` (its IN ({}) filled) for these keys, a few hundred at a time."""
    keys = list(keys)
    for i in range(0, len(keys), 500):
        chunk = keys[i : i + 500]
        yield from db.execute(sql.format(",".join("?" * len(chunk))), chunk)


class IncrementalTables(Tables):
    """The incremental stages' tables (see the module's docstring)."""

    _planned_keys: dict[str, str] | None = None  # planned_keys(), as last read

    def planned(self) -> PlannedRows:
        """source path -> what the last plan made of it (build/sourceplan.py), read as asked."""
        return PlannedRows(self.db)

    def save_planned(self, what: str, made: dict[str, tuple[str, str]]) -> None:
        """A plan's new "facts", "notes" or "struct" of sources: path -> (key, JSON); or the
        "names" of their facts just saved (path -> (key, text): planned_names). The kept plan is
        of the rows as they were: marked stale with the first change (a plan killed after it is
        planned in full by the next build), until the plan that finishes keeps its own."""
        self._planned_keys = None
        with self.transaction():
            if what == "names":  # of facts saved before: no row of planned changed
                self.db.executemany(_SAVE_NAMES, [(path, text) for path, (_, text) in made.items()])
                return
            self.db.execute(_STALE)
            self.db.executemany(_SAVE[what], [(path, key, text) for path, (key, text) in made.items()])

    def drop_planned(self, paths: Iterable[str]) -> None:
        self._planned_keys = None
        with self.transaction():
            self.db.execute(_STALE)
            self.db.executemany("DELETE FROM planned WHERE path=?", [(path,) for path in paths])
            self.db.executemany("DELETE FROM planned_struct WHERE path=?", [(path,) for path in paths])

    def kept(self, name: str) -> bytes | None:
        """What the last plan kept for the next to patch: its merge of names and terms ("merge",
        build/merge.py) or its pages and what it went by ("plan", build/replan.py)."""
        row = self.db.execute(_KEPT, (name,)).fetchone()
        return bytes(row[0]) if row else None

    def keep(self, name: str, blob: bytes, since: bytes | None = None, room: bool = False) -> None:
        """`blob` kept as `name`; or, with `since`, what changed since it (as `name`+), which then
        stays as it is. `room`: written with the room it takes in SQLite's cache (roomy)."""
        with roomy(self.db, len(blob) + len(since or b"") if room else 0), self.transaction():
            if since is None:
                put_kept(self.db, name, blob)
                self.db.execute("DELETE FROM kept WHERE name = ?", (name + "+",))
            else:
                put_kept(self.db, name + "+", since)

    def heads_are_slugs(self, token: str) -> bool:
        """Whether the heads of the kept plan `token` are the sticky slugs (state/build.py's),
        page for page: marked by that plan where it found them so, let go by any change of the
        slugs (schema.py's triggers) or by the next plan kept."""
        row = self.db.execute("SELECT blob FROM kept WHERE name = 'heads=slugs'").fetchone()
        return row is not None and bytes(row[0]) == token.encode()

    def kept_rows(self, ids: Iterable[str]) -> dict[str, bytes]:
        """These pages of the kept plan, each as it kept it (those it has)."""
        wanted, found = list(ids), dict[str, bytes]()
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            sql = f"SELECT id, page FROM kept_pages WHERE id IN ({','.join('?' * len(part))})"
            found.update((pid, bytes(page)) for pid, page in self.db.execute(sql, part))
        return found

    def keep_plan(
        self,
        blob: bytes,
        pages: Mapping[str, bytes],
        gone: Iterable[str],
        every: bool,
        since: bytes | None = None,
        slugs: str = "",
    ) -> None:
        """A plan kept: what it went by, and its pages new or changed (`every`: all of them).
        `since`: what changed since the base it went by ("plan+", beside "plan", which stays);
        else `blob` is the new base. `slugs`: the plan's token, where its pages' slugs are the
        sticky ones it read, page for page (heads_are_slugs() from here on, until either changes)."""
        # a full plan's blob is written at a full build's peak: no room made for it (roomy)
        with roomy(self.db, 0 if every else len(blob) + len(since or b"")), self.transaction():
            if every:
                self.db.execute("DELETE FROM kept_pages")
                self.db.execute("DELETE FROM kept_heads")  # an older wikic's: the heads are in the blob now
            self.db.executemany("DELETE FROM kept_pages WHERE id = ?", [(pid,) for pid in gone])
            self.db.executemany("INSERT OR REPLACE INTO kept_pages VALUES (?, ?)", pages.items())
            if since is None:
                put_kept(self.db, "plan", blob)
                self.db.execute("DELETE FROM kept WHERE name = 'plan+'")
            else:
                put_kept(self.db, "plan+", since)
            self.db.execute("DELETE FROM kept WHERE name = 'plan?'")
            if slugs:
                self.db.execute("INSERT OR REPLACE INTO kept VALUES ('heads=slugs', ?)", (slugs.encode(),))
            else:
                self.db.execute("DELETE FROM kept WHERE name = 'heads=slugs'")

    def planned_keys(self) -> dict[str, str]:
        """Each planned source's facts key: what a kept plan must have gone by (build/replan.py),
        and which sources can be settled (build/settled.py). Read once until the table changes
        (one build asks twice; not to be changed by the caller)."""
        if self._planned_keys is None:
            rows = self.db.execute("SELECT path, key FROM planned WHERE key != ''").fetchall()
            self._planned_keys = dict(rows)
        return self._planned_keys

    def lint_pages(self) -> dict[str, LintRow]:
        """Each page's cached lint facts and own findings, by path (lint/cache.py)."""
        rows = self.db.execute("SELECT rel, size, mtime_ns, key, facts, findings FROM lint_pages")
        return {r[0]: LintRow(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def set_lint_pages(self, rows: Iterable[LintRow], gone: Iterable[str], across: str | None = None) -> None:
        """`across`: Meta.LINT_ACROSS, in the same transaction as the rows it was made with."""
        with self.transaction():
            if across is not None:  # Meta.LINT_ACROSS, written here to stay in the transaction
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (Meta.LINT_ACROSS.value, across))
            self.db.executemany("DELETE FROM lint_pages WHERE rel=?", [(rel,) for rel in gone])
            self.db.executemany(
                "INSERT OR REPLACE INTO lint_pages VALUES (?, ?, ?, ?, ?, ?)",
                [(r.rel, r.size, r.mtime_ns, r.key, r.facts, r.findings) for r in rows],
            )

    def lint_findings(self) -> dict[str, tuple[int, int, str]]:
        """Each page's stat and own findings (JSON) in the lint cache, without its facts: what
        a lint after an edit of a few pages reads of the others (lint/cache.py)."""
        rows = self.db.execute("SELECT rel, size, mtime_ns, findings FROM lint_pages").fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def lint_facts(self, rels: Iterable[str]) -> dict[str, str]:
        """The cached facts (JSON) of these pages, by path."""
        found: dict[str, str] = {}
        for rel in rels:
            row = self.db.execute("SELECT facts FROM lint_pages WHERE rel=?", (rel,)).fetchone()
            if row is not None:
                found[rel] = row[0]
        return found

    def assembled(self) -> dict[str, Rendered]:
        """slug -> what its last assembly rendered, by key (build/assemble.py)."""
        rows = self.db.execute("SELECT slug, body_key, page_key, links, description FROM assembled")
        found = {r[0]: Rendered(r[1], r[2], json.loads(r[3]), r[4]) for r in rows}
        # a link as the slug it names, one string each, not one per link (800,000 links and
        # 100,000 slugs at 100,000 pages: 40 MB)
        slugs = {slug: slug for slug in found}
        for row in found.values():
            row.links[:] = [slugs.get(target, target) for target in row.links]
        return found

    def assembled_descriptions(self) -> dict[str, str]:
        """slug -> its line in index.md as the last assembly rendered it, of its own pages."""
        return {r[0]: r[1] for r in self.db.execute("SELECT slug, description FROM assembled")}

    def assembled_of(self, slugs: Iterable[str]) -> dict[str, Rendered]:
        """What the last assembly rendered of these pages only, by slug (build/quick.py)."""
        sql = "SELECT slug, body_key, page_key, links, description FROM assembled WHERE slug IN ({})"
        return {r[0]: Rendered(r[1], r[2], json.loads(r[3]), r[4]) for r in _by_keys(self.db, sql, slugs)}

    def linked_from(self, targets: Iterable[str]) -> dict[str, set[str]]:
        """target slug -> the slugs of the pages whose text links to it, as the last assembly
        left them (assembled_links: answers and hand-made pages too)."""
        found: dict[str, set[str]] = {}
        sql = "SELECT target, slug FROM assembled_links WHERE target IN ({})"
        for target, slug in _by_keys(self.db, sql, targets):
            found.setdefault(target, set()).add(slug)
        return found

    def links_of(self, slugs: Iterable[str]) -> dict[str, set[str]]:
        """slug -> the slugs its page links to, as the last assembly left them."""
        found: dict[str, set[str]] = {slug: set() for slug in slugs}
        sql = "SELECT slug, target FROM assembled_links WHERE slug IN ({})"
        for slug, target in _by_keys(self.db, sql, found):
            found[slug].add(target)
        return found

    def set_assembled(
        self, changed: dict[str, Rendered], gone: Iterable[str], by: str, links: Links | None = None
    ) -> None:
        """What an assembly rendered anew, and what its keys went by (Meta.ASSEMBLED), at once;
        with `links`, the pages' links and the names the next assembly may go by (quick.py)."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (Meta.ASSEMBLED.value, by))
            self.db.executemany("DELETE FROM assembled WHERE slug=?", [(slug,) for slug in gone])
            self.db.executemany(
                "INSERT OR REPLACE INTO assembled VALUES (?, ?, ?, ?, ?)",
                [(s, r.body_key, r.page_key, json.dumps(r.links), r.description) for s, r in changed.items()],
            )
            if links is None:  # what it links to is not known: no assembly goes by it
                self.db.execute("DELETE FROM kept WHERE name = 'names'")
                return
            if links.every:  # every page's links again: the table made anew, in its key's order
                edges = sorted((t, slug) for slug, targets in links.edges.items() for t in targets)
                self.db.execute("DELETE FROM assembled_links")
                self.db.execute(f"DROP INDEX IF EXISTS {LINKS_INDEX}")
            else:
                self.db.executemany("DELETE FROM assembled_links WHERE slug=?", [(s,) for s in links.dropped])
                edges = self._links_changed(links.edges)
            self.db.executemany("INSERT INTO assembled_links (target, slug) VALUES (?, ?)", edges)
            if links.every:
                self.db.execute(LINKS_BY_SLUG)
            left = [(slug,) for slug in links.dropped]
            if links.every:
                self.db.execute("DELETE FROM assembled_text")
            self.db.executemany("DELETE FROM assembled_text WHERE slug=?", left)
            self.db.executemany("INSERT OR REPLACE INTO assembled_text VALUES (?, ?)", links.texts)
            if links.names is not None:
                put_kept(self.db, "names", links.names)
                if links.every:
                    self.db.execute("DELETE FROM assembled_entries")
                    self.db.execute("DELETE FROM assembled_names")
                self.db.executemany("DELETE FROM assembled_entries WHERE slug=?", left)
                self.db.executemany(
                    "INSERT OR REPLACE INTO assembled_entries VALUES (?, ?, ?, ?, ?)",
                    [(slug, e[0], e[1], json.dumps(e[2]), e[3]) for slug, e in links.entries.items()],
                )
                named = links.linked_names.items()
                self.db.executemany(
                    "DELETE FROM assembled_names WHERE name=?", [(n,) for n, s in named if s is None]
                )
                self.db.executemany(
                    "INSERT OR REPLACE INTO assembled_names VALUES (?, ?)",
                    [(n, s) for n, s in named if s is not None],
                )

    def _links_changed(self, edges: Mapping[str, list[str]]) -> list[tuple[str, str]]:
        """In set_assembled's transaction: the links these pages no longer have taken out, and
        those they have now and did not handed back, as (target, slug) (a topic page of 1,300
        sources, one of them gone: 2 rows, not 2,600 over as many of the table's pages)."""
        was = self.links_of(edges)
        now = {slug: set(targets) for slug, targets in edges.items()}
        self.db.executemany(
            "DELETE FROM assembled_links WHERE target=? AND slug=?",
            [(target, slug) for slug, targets in was.items() for target in targets - now[slug]],
        )
        return [(target, slug) for slug, targets in now.items() for target in targets - was[slug]]

    def kept_entries(self, slugs: Iterable[str] | None = None) -> dict[str, Entry]:
        """slug -> its entry as the last assembly kept it (set_assembled's `links`): these
        pages' (None: every page's)."""
        sql = "SELECT slug, title, type, aliases, page_id FROM assembled_entries"
        rows = (
            self.db.execute(sql) if slugs is None else _by_keys(self.db, sql + " WHERE slug IN ({})", slugs)
        )
        return {r[0]: (r[1], r[2], json.loads(r[3]), r[4]) for r in rows}

    def kept_entries_having(self, names: set[str]) -> dict[str, Entry]:
        """slug -> entry, as the last assembly kept them, of the pages whose title or an alias
        is one of these names (casefolded, stripped: build/comego.names_of). Every row is read,
        but only those decoded (at 100,000 pages: 0.3-0.6 s to decode them all)."""
        found: dict[str, Entry] = {}
        for slug, title, kind, aliases, pid in self.db.execute(
            "SELECT slug, title, type, aliases, page_id FROM assembled_entries"
        ):
            if title.casefold().strip() in names or (
                aliases != "[]" and any(a.casefold().strip() in names for a in json.loads(aliases))
            ):
                found[slug] = (title, kind, json.loads(aliases), pid)
        return found

    def kept_entries_of_pages(self, ids: Iterable[str]) -> dict[str, Entry]:
        """slug -> entry, as the last assembly kept them, of the planned pages of these ids."""
        sql = "SELECT slug, title, type, aliases, page_id FROM assembled_entries WHERE page_id IN ({})"
        return {r[0]: (r[1], r[2], json.loads(r[3]), r[4]) for r in _by_keys(self.db, sql, ids)}

    def assembled_naming(self, strings: Iterable[str]) -> set[str]:
        """The slugs of the pages whose text the linker read (as the last assembly kept it,
        casefolded) holds any of these strings."""
        return {
            r[0] for r in holding(self.db, "SELECT slug FROM assembled_text", "text", ([s] for s in strings))
        }

    def assembled_texts_with(self, mark: str) -> Iterator[tuple[str, str]]:
        """(slug, text the linker read) of the pages whose text holds `mark`."""
        yield from self.db.execute("SELECT slug, text FROM assembled_text WHERE instr(text, ?) > 0", (mark,))

    def assembled_texts_of(self, slugs: Iterable[str]) -> Iterator[tuple[str, str]]:
        """(slug, text the linker read) of these pages."""
        rows = _by_keys(self.db, "SELECT slug, text FROM assembled_text WHERE slug IN ({})", slugs)
        return ((slug, text) for slug, text in rows)

    def assembled_slugs(self) -> set[str]:
        """The slugs of every page the last assembly listed, its own and the others."""
        return {r[0] for r in self.db.execute("SELECT slug FROM assembled_entries")}

    def assembled_foreign(self) -> list[str]:
        """The slugs of the pages the last assembly found but did not make (answers, hand-made)."""
        return [r[0] for r in self.db.execute("SELECT slug FROM assembled_entries WHERE page_id = ''")]

    def kept_names(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """name -> the slug the last assembly's linker resolved it to: these (None: every name)."""
        sql = "SELECT name, slug FROM assembled_names"
        rows = (
            self.db.execute(sql) if names is None else _by_keys(self.db, sql + " WHERE name IN ({})", names)
        )
        return {r[0]: r[1] for r in rows}

    def composed(self) -> dict[str, tuple[str, str]]:
        """page id -> (key of what its text was composed from, the text as JSON) (build/compose.py)."""
        return {r[0]: (r[1], r[2]) for r in self.db.execute("SELECT page_id, key, text FROM composed")}

    def composed_of(self, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """composed() of these pages only."""
        sql = "SELECT page_id, key, text FROM composed WHERE page_id IN ({})"
        return {r[0]: (r[1], r[2]) for r in _by_keys(self.db, sql, ids)}

    def set_composed(self, changed: dict[str, tuple[str, str]], gone: Iterable[str]) -> None:
        with self.transaction():
            self.db.executemany("DELETE FROM composed WHERE page_id=?", [(pid,) for pid in gone])
            self.db.executemany(
                "INSERT OR REPLACE INTO composed VALUES (?, ?, ?)",
                [(p, k, t) for p, (k, t) in changed.items()],
            )


@contextmanager
def roomy(db: sqlite3.Connection, size: int) -> Iterator[None]:
    """SQLite's page cache made room, for the time of a write, for a blob of `size` bytes put
    in place of another (0: none made): in its 2 MB, the old blob's pages zeroed (secure_delete),
    the new one's allocated (zeroblob) and written (put_kept) each spill to the WAL and are read
    back: 4 times the blob written to it and 5 times read, against twice and once (a deletion
    at 100,000 sources, the plan's and the merge's: 247 and 310 MB, against 127 and 126). Let go
    after (SQLite frees the pages)."""
    if not size:
        yield
        return
    was = db.execute("PRAGMA cache_size").fetchone()[0]
    db.execute(f"PRAGMA cache_size = {-max(-was if was < 0 else 2000, 3 * size // 1024)}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size = {was}")


def put_kept(db: sqlite3.Connection, name: str, blob: bytes) -> None:
    """`blob` kept as `name`, written into its row in place (sqlite's blob I/O): bound as a
    parameter, it is copied twice over (the bound value, the row's record) before it is written,
    and a plan's or a merge's blob is 30 MB at 100,000 sources, written at a full build's peak."""
    row = db.execute(_PUT, (name, len(blob))).lastrowid
    if blob:  # (no row 0: a missing rowid fails here, never leaves the zeros)
        with db.blobopen("kept", "blob", row or 0) as out:
            out.write(blob)
