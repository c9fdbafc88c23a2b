"""The build state in .wikic/state.db: the source stat cache, the LLM response
cache, the last run of every action, and the files wikic wrote.

Each change is committed at once, so a killed build keeps every finished call.
This module imports nothing from wikic but its errors.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from wikic.errors import StateError

FORMAT = 1


class Meta(StrEnum):
    """Every key of the `meta` table, and what its value holds."""

    FORMAT = "format"  # the state format (FORMAT) that wrote the database
    CLEAN = "clean"  # the build's mark of inputs and wiki/ after a clean build ("" after any other)
    PAGES = "pages"  # pages and actions the last clean build counted: a no-op build reports them
    ACTIONS = "actions"
    UPTODATE = "uptodate"  # the no-op check's mark (JSON), with the figures a skipped build reports
    LINT_SUMMARY = "lint_summary"  # the lint summary's cache key and counts (JSON)
    LINT_ACROSS = "lint_across"  # the findings of the rules across pages, by what they read (JSON)
    ASK_SAVED = "ask_saved_mark"  # the build's "clean" mark as it is with a just-saved answer


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, hash TEXT);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, stage TEXT, output TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, created REAL);
CREATE TABLE IF NOT EXISTS actions (
    id TEXT PRIMARY KEY, stage TEXT, key TEXT, inputs TEXT, updated REAL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT, size INTEGER, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS slugs (page_id TEXT PRIMARY KEY, slug TEXT UNIQUE);
CREATE TABLE IF NOT EXISTS lint_pages (
    rel TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, key TEXT, facts TEXT, findings TEXT);
CREATE TABLE IF NOT EXISTS assembled (
    slug TEXT PRIMARY KEY, body_key TEXT, page_key TEXT, links TEXT, description TEXT);
CREATE TABLE IF NOT EXISTS composed (page_id TEXT PRIMARY KEY, key TEXT, text TEXT);
CREATE TABLE IF NOT EXISTS batches (
    token TEXT PRIMARY KEY, stage TEXT, file_id TEXT, batch_id TEXT, created REAL);
CREATE TABLE IF NOT EXISTS batch_items (token TEXT, key TEXT, PRIMARY KEY (token, key));
"""


_PART = re.compile(r"#\d+$")


@dataclass(frozen=True)
class ActionRecord:
    id: str  # `stage:subject`, and `#n` for one part of a source digested in several
    stage: str
    key: str
    inputs: dict[str, str]

    @property
    def subject(self) -> str:
        """What the action belongs to: a digest's source path (any part), a write's page id."""
        subject = self.id.removeprefix(f"{self.stage}:")
        return _PART.sub("", subject) if self.stage == "digest" else subject


@dataclass(frozen=True)
class FileRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class LintRow:
    rel: str
    size: int
    mtime_ns: int
    key: str  # what the page's own findings read (settings, its sources' stats)
    facts: str  # JSON: what the rules across pages read of it
    findings: str  # JSON: its own findings


@dataclass(frozen=True)
class Rendered:
    """What assemble made of a page, by key: its body's inputs, the whole page's."""

    body_key: str
    page_key: str
    links: list[str]  # the slugs its body links to
    description: str  # its line in index.md


@dataclass(frozen=True)
class BatchRecord:
    token: str  # wikic's name for the submission, recorded before the upload
    stage: str
    file_id: str | None  # the uploaded JSONL file, once uploaded
    batch_id: str | None  # the provider's batch, once created
    created: float
    keys: list[str]  # the action keys it asks for (its lines' custom_id)


class State:
    """A thin, typed door onto state.db. Use `State.open(path)`."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self.warnings: list[str] = []  # what opening it had to do, for the build's report

    @classmethod
    def open(cls, path: Path, recover: bool = False) -> State:
        """Open (or create) the state database.

        A damaged database (not SQLite, truncated, failing its quick check) is a
        StateError, or with `recover` (the build, which holds the project lock
        and can rebuild everything) is moved aside to `state.db.corrupt-<time>`
        and replaced by an empty one; `warnings` then says so. A database from a
        newer wikic is never touched.
        """
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(f"cannot create {path.parent}: {exc.strerror or exc}") from exc
        try:
            return cls._open(path)
        except _Damaged as exc:
            if not recover:
                raise StateError(
                    f"{path} is damaged ({exc}); run `wikic build`, which moves it aside and rebuilds "
                    "(cached model answers in it will be lost)"
                ) from exc
            moved = _move_aside(path)
            state = cls._open(path)
            state.warnings.append(
                f"{path} was damaged ({exc}); moved it aside to {moved.name} and started afresh: "
                "cached model answers are lost, so the model is asked again; pages in wiki/ are kept "
                "(one that differs from what this build makes is reported as a hand edit)"
            )
            return state

    @classmethod
    def peek(cls, path: Path) -> State | None:
        """A cheap open for the no-op check, which must stay fast: no file created, no
        quick_check, no WAL switch. None when there is no database or it is of another format;
        anything the full open would repair or report is left to the build."""
        if not path.is_file():
            return None
        db = sqlite3.connect(path, timeout=30, isolation_level=None, factory=_Connection)
        try:
            found = _format(db, path)
        except (sqlite3.Error, _Damaged, StateError):
            found = None
        if found != FORMAT:
            db.close()
            return None
        db.state_path = path
        return cls(db, path)

    @classmethod
    def _open(cls, path: Path) -> State:
        try:
            db = sqlite3.connect(
                path, timeout=30, isolation_level=None, check_same_thread=False, factory=_Connection
            )
        except sqlite3.DatabaseError as exc:
            raise _damaged_or_state_error(path, exc) from exc
        try:
            found = _format(db, path)  # before anything is written: a newer format is never touched
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            check = db.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise _Damaged(f"quick_check: {check[0] if check else 'no answer'}")
            db.executescript(SCHEMA)
            if found is None:
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (Meta.FORMAT.value, str(FORMAT)))
        except sqlite3.DatabaseError as exc:
            db.close()
            raise _damaged_or_state_error(path, exc) from exc
        except BaseException:
            db.close()
            raise
        db.state_path = path  # from here on, file errors are StateErrors
        return cls(db, path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> State:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta --------------------------------------------------------------
    def get_meta(self, k: Meta) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (k.value,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, k: Meta, v: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k.value, v))

    def delete_meta(self, k: Meta) -> None:
        self.db.execute("DELETE FROM meta WHERE k=?", (k.value,))

    # --- sources (stat cache) ---------------------------------------------
    def source_stats(self) -> dict[str, tuple[int, int, str]]:
        rows = self.db.execute("SELECT path, size, mtime_ns, hash FROM sources")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def set_source(self, path: str, size: int, mtime_ns: int, hash_: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO sources (path, size, mtime_ns, hash) VALUES (?, ?, ?, ?)",
            (path, size, mtime_ns, hash_),
        )

    def source_hashes(self) -> dict[str, str]:
        """Path -> hash of each source the last build read."""
        return dict(self.db.execute("SELECT path, hash FROM sources").fetchall())

    def remove_source(self, path: str) -> None:
        self.db.execute("DELETE FROM sources WHERE path=?", (path,))

    # --- response cache ----------------------------------------------------
    def cached(self, key: str) -> Any | None:
        row = self.db.execute("SELECT output FROM cache WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put_cache(
        self, key: str, stage: str, output: Any, prompt_tokens: int, completion_tokens: int
    ) -> None:
        text = json.dumps(output, ensure_ascii=False)
        self.db.execute(
            "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?)",
            (key, stage, text, prompt_tokens, completion_tokens, time.time()),
        )

    # --- actions -----------------------------------------------------------
    def actions(self, stage: str | None = None) -> dict[str, ActionRecord]:
        if stage is None:
            rows = self.db.execute("SELECT id, stage, key, inputs FROM actions")
        else:
            rows = self.db.execute("SELECT id, stage, key, inputs FROM actions WHERE stage=?", (stage,))
        return {r[0]: ActionRecord(r[0], r[1], r[2], json.loads(r[3])) for r in rows}

    def set_action(self, rec: ActionRecord) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO actions VALUES (?, ?, ?, ?, ?)",
            (rec.id, rec.stage, rec.key, json.dumps(rec.inputs, sort_keys=True), time.time()),
        )

    def remove_action(self, action_id: str) -> None:
        self.db.execute("DELETE FROM actions WHERE id=?", (action_id,))

    # --- files wikic wrote --------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        rows = self.db.execute("SELECT path, hash, size, mtime_ns FROM files")
        return {r[0]: FileRecord(r[0], r[1], r[2], r[3]) for r in rows}

    def file_hashes(self) -> dict[str, str]:
        """Path -> hash of each file wikic wrote (10,000 rows: no records made)."""
        return dict(self.db.execute("SELECT path, hash FROM files").fetchall())

    def file_stats(self) -> list[tuple[str, int, int]]:
        """(path, size, mtime_ns) of each file wikic wrote, as it left them: for the stat checks."""
        return [(r[0], r[1], r[2]) for r in self.db.execute("SELECT path, size, mtime_ns FROM files")]

    def set_file(self, rec: FileRecord) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rec.path, rec.hash, rec.size, rec.mtime_ns)
        )

    def remove_file(self, path: str) -> None:
        self.db.execute("DELETE FROM files WHERE path=?", (path,))

    # --- sticky page slugs ---------------------------------------------------
    def slugs(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT page_id, slug FROM slugs").fetchall())

    def set_slugs(self, mapping: dict[str, str]) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM slugs")
            self.db.executemany("INSERT INTO slugs VALUES (?, ?)", sorted(mapping.items()))

    # --- forgetting (privacy/forget.py, privacy/gc.py) -----------------------
    def drop_cache(
        self, stages: Iterable[str], *, other: bool = False, unreferenced: bool = False, before: float = 0.0
    ) -> int:
        """Delete cached answers of these stages (with `other`: of every other stage): all, or only
        those no action refers to, or made before `before` (a time.time()); returns how many.
        Freed pages are zeroed (secure_delete)."""
        args: list[Any] = list(stages)
        sql = f"DELETE FROM cache WHERE stage {'NOT ' if other else ''}IN ({','.join('?' * len(args))})"
        if unreferenced:
            sql += " AND key NOT IN (SELECT key FROM actions WHERE key IS NOT NULL)"
        if before:
            sql += " AND (created IS NULL OR created < ?)"
            args.append(before)
        self.db.execute("PRAGMA secure_delete=ON")
        return int(self.db.execute(sql, args).rowcount)

    def compact(self) -> bool:
        """Rewrite the database without free pages, then empty the WAL into it and truncate it:
        no deleted byte is left in state.db or state.db-wal. False when another process's
        reading kept it from finishing (deleted bytes may remain until the next compaction)."""
        try:
            self.db.execute("VACUUM")
            busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except StateError:  # SQLITE_BUSY / LOCKED: a reader holds the database
            return False
        return not (busy and busy[0])

    def wiki_changed_at(self) -> float:
        """When the build last wrote or removed a page: the newest file it recorded (0 if none)."""
        row = self.db.execute("SELECT MAX(mtime_ns) FROM files").fetchone()
        return (row[0] or 0) / 1e9 if row else 0.0

    # --- issue 17: what makes an edit cost what it changes, and batches ----------
    def lint_pages(self) -> dict[str, LintRow]:
        """Each page's cached lint facts and own findings, by path (lint/cache.py)."""
        rows = self.db.execute("SELECT rel, size, mtime_ns, key, facts, findings FROM lint_pages")
        return {r[0]: LintRow(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def set_lint_pages(self, rows: Iterable[LintRow], gone: Iterable[str], across: str | None = None) -> None:
        """`across`: Meta.LINT_ACROSS, in the same transaction as the rows it was made with."""
        with self.transaction():
            if across is not None:
                self.set_meta(Meta.LINT_ACROSS, across)
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
        return {r[0]: Rendered(r[1], r[2], json.loads(r[3]), r[4]) for r in rows}

    def set_assembled(self, changed: dict[str, Rendered], gone: Iterable[str]) -> None:
        with self.transaction():
            self.db.executemany("DELETE FROM assembled WHERE slug=?", [(slug,) for slug in gone])
            self.db.executemany(
                "INSERT OR REPLACE INTO assembled VALUES (?, ?, ?, ?, ?)",
                [(s, r.body_key, r.page_key, json.dumps(r.links), r.description) for s, r in changed.items()],
            )

    def composed(self) -> dict[str, tuple[str, str]]:
        """page id -> (key of what its text was composed from, the text as JSON) (build/compose.py)."""
        return {r[0]: (r[1], r[2]) for r in self.db.execute("SELECT page_id, key, text FROM composed")}

    def set_composed(self, changed: dict[str, tuple[str, str]], gone: Iterable[str]) -> None:
        with self.transaction():
            self.db.executemany("DELETE FROM composed WHERE page_id=?", [(pid,) for pid in gone])
            self.db.executemany(
                "INSERT OR REPLACE INTO composed VALUES (?, ?, ?)",
                [(p, k, t) for p, (k, t) in changed.items()],
            )

    def batches(self, stage: str | None = None) -> list[BatchRecord]:
        """Submissions to a provider's Batch API not yet collected, oldest first (backends/batch.py)."""
        rows = self.db.execute(
            "SELECT token, stage, file_id, batch_id, created FROM batches ORDER BY created, token"
        ).fetchall()
        items: dict[str, list[str]] = {}
        for token, key in self.db.execute("SELECT token, key FROM batch_items ORDER BY key"):
            items.setdefault(token, []).append(key)
        found = [BatchRecord(r[0], r[1], r[2], r[3], r[4], items.get(r[0], [])) for r in rows]
        return [b for b in found if stage is None or b.stage == stage]

    def begin_batch(self, token: str, stage: str, keys: list[str]) -> None:
        """A submission about to be made: recorded before anything is uploaded."""
        with self.transaction():
            self.db.execute("INSERT INTO batches VALUES (?, ?, NULL, NULL, ?)", (token, stage, time.time()))
            self.db.executemany("INSERT INTO batch_items VALUES (?, ?)", [(token, k) for k in keys])

    def set_batch_ids(self, token: str, file_id: str | None, batch_id: str | None) -> None:
        self.db.execute(
            "UPDATE batches SET file_id=coalesce(?, file_id), batch_id=coalesce(?, batch_id) WHERE token=?",
            (file_id, batch_id, token),
        )

    def end_batch(self, token: str) -> None:
        """A submission collected (or given up): its answers are in the cache, or go live."""
        with self.transaction():
            self.db.execute("DELETE FROM batches WHERE token=?", (token,))
            self.db.execute("DELETE FROM batch_items WHERE token=?", (token,))

    # --- batching ----------------------------------------------------------
    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def integrity_ok(self) -> bool:
        return bool(self.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok")


class _Damaged(Exception):
    """The database file is not a usable SQLite database."""


# Errors of the database file, not of wikic's SQL: reported as StateError, never a traceback.
FILE_ERRORS = (
    "SQLITE_CORRUPT",
    "SQLITE_NOTADB",
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
)


def _translated(path: Path | None, exc: sqlite3.DatabaseError) -> Exception:
    name = getattr(exc, "sqlite_errorname", "") or ""
    if path is None or (not name.startswith(FILE_ERRORS) and "malformed" not in str(exc)):
        return exc  # while opening (State.open decides), or an error in wikic's own SQL
    if name.startswith(CORRUPT) or "malformed" in str(exc):
        return StateError(
            f"{path} is damaged ({exc}); run `wikic build`, which moves it aside and "
            "rebuilds (cached model answers in it will be lost)"
        )
    return StateError(f"{path}: {exc}")


class _Cursor(sqlite3.Cursor):
    """Rows are read lazily: a damaged page can surface while fetching, not only in execute."""

    def _fail(self, exc: sqlite3.DatabaseError) -> Exception:
        return _translated(getattr(self.connection, "state_path", None), exc)

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._fail(exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._fail(exc) from exc

    def fetchmany(self, size: int | None = None) -> list[Any]:
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except sqlite3.DatabaseError as exc:
            raise self._fail(exc) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            raise self._fail(exc) from exc


class _Connection(sqlite3.Connection):
    """A connection whose file errors are StateErrors, for every module that uses `state.db`."""

    state_path: Path | None = None

    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = ()) -> Any:
        try:
            return self.cursor().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise _translated(self.state_path, exc) from exc

    def executemany(self, sql: str, parameters: Iterable[Any]) -> Any:
        try:
            return self.cursor().executemany(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise _translated(self.state_path, exc) from exc

    def executescript(self, script: str) -> Any:
        try:
            return self.cursor().executescript(script)
        except sqlite3.DatabaseError as exc:
            raise _translated(self.state_path, exc) from exc


CORRUPT = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def _damaged_or_state_error(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    """Corruption can be repaired by starting afresh; anything else (locked, disk full,
    no permission) must not be mistaken for it, and is reported as it is."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if name.startswith(CORRUPT) or "malformed" in text or "not a database" in text:
        return _Damaged(text)
    return StateError(f"{path}: {text}")


def _format(db: sqlite3.Connection, path: Path) -> int | None:
    """The state format written in the database, None for a new one."""
    has_meta = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
    if not has_meta:
        return None
    row = db.execute("SELECT v FROM meta WHERE k=?", (Meta.FORMAT.value,)).fetchone()
    if row is None:
        return None
    try:
        found = int(row[0])
    except (TypeError, ValueError) as exc:
        raise _Damaged(f"its format mark is {row[0]!r}") from exc
    if found > FORMAT:
        raise StateError(
            f"{path} was written by a newer wikic (state format {found}, this one reads {FORMAT}); "
            "upgrade wikic, or move .wikic/ aside to rebuild from scratch"
        )
    return found


def _move_aside(path: Path) -> Path:
    """Rename a damaged database, with its -wal and -shm files, out of the way."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    for suffix in ("-wal", "-shm"):  # a WAL left beside a fresh database would be replayed into it
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(target.with_name(target.name + suffix))
    path.replace(target)
    return target


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")
