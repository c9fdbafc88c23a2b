"""The connection to state.db: file errors as StateErrors, the format check, moving a
damaged database aside, and transactions. Every table's module builds on `Tables`."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from wikic.errors import StateError
from wikic.state import checked
from wikic.state.schema import FORMAT, SCHEMA, Meta


def open_db(path: Path) -> Connection:
    """Connect, check and set up the database (WAL, the tables); Damaged when it is not usable.
    The full check is skipped where the file is as a process that checked it left it (checked.py)."""
    trusted = checked.as_left(path)  # before connecting: WAL mode makes a -wal file at once
    try:
        db = sqlite3.connect(
            path, timeout=30, isolation_level=None, check_same_thread=False, factory=Connection
        )
    except sqlite3.DatabaseError as exc:
        raise damaged_or_state_error(path, exc) from exc
    try:
        found = read_format(db, path)  # before anything is written: a newer format is never touched
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA secure_delete=ON")  # deleted bytes zeroed at once (ForgetTables.compact)
        check = ("ok",) if trusted else db.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise Damaged(f"quick_check: {check[0] if check else 'no answer'}")
        db.executescript(SCHEMA)
        if found is None:  # a new database: every byte deleted from it is zeroed
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (Meta.FORMAT.value, str(FORMAT)))
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (Meta.ZEROED.value, "1"))
    except sqlite3.DatabaseError as exc:
        db.close()
        raise damaged_or_state_error(path, exc) from exc
    except BaseException:
        db.close()
        raise
    db.state_path = path  # from here on, file errors are StateErrors
    return db


def peek_db(path: Path) -> Connection | None:
    """A connection that creates and changes nothing, or None (no database, or another format)."""
    if not path.is_file():
        return None
    db = sqlite3.connect(path, timeout=30, isolation_level=None, factory=Connection)
    db.execute("PRAGMA secure_delete=ON")  # what it deletes is zeroed too
    try:
        found = read_format(db, path)
    except (sqlite3.Error, Damaged, StateError):
        found = None
    if found != FORMAT:
        db.close()
        return None
    db.state_path = path
    return db


def peek_meta(path: Path, key: Meta) -> str | None:
    """One `meta` value, read as `peek_db` opens: None when there is no database, it is of
    another format, or the value is not set. For the no-op check, which loads no table's module."""
    db = peek_db(path)
    if db is None:
        return None
    try:
        row = db.execute("SELECT v FROM meta WHERE k=?", (key.value,)).fetchone()
    finally:
        db.close()
    return None if row is None else str(row[0])


class Damaged(Exception):
    """The database file is not a usable SQLite database."""


BATCH = 1024  # rows fetched at once while a cursor is iterated

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
        checked.forget(path)  # found damaged in use: the next open checks it in full, and repairs
        return StateError(
            f"{path} is damaged ({exc}); run `wikic build`, which moves it aside and "
            "rebuilds (cached model answers in it will be lost)"
        )
    return StateError(f"{path}: {exc}")


class Cursor(sqlite3.Cursor):
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

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]  # rows, not the cursor
        # `for row in cursor` in batches: one Python call per row (__next__) is a tenth of a
        # second over the 90,000 rows an edit of 10,000 sources reads
        while rows := self.fetchmany(BATCH):
            yield from rows


class Connection(sqlite3.Connection):
    """A connection whose file errors are StateErrors, for every module that uses `state.db`."""

    state_path: Path | None = None

    def cursor(self, factory: Any = Cursor) -> Any:
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


def damaged_or_state_error(path: Path, exc: sqlite3.DatabaseError) -> Exception:
    """Corruption can be repaired by starting afresh; anything else (locked, disk full,
    no permission) must not be mistaken for it, and is reported as it is."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if name.startswith(CORRUPT) or "malformed" in text or "not a database" in text:
        checked.forget(path)
        return Damaged(text)
    return StateError(f"{path}: {text}")


def read_format(db: sqlite3.Connection, path: Path) -> int | None:
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
        raise Damaged(f"its format mark is {row[0]!r}") from exc
    if found > FORMAT:
        raise StateError(
            f"{path} was written by a newer wikic (state format {found}, this one reads {FORMAT}); "
            "upgrade wikic, or move .wikic/ aside to rebuild from scratch"
        )
    return found


def move_aside(path: Path) -> Path:
    """Rename a damaged database, with its -wal and -shm files, out of the way."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    checked.forget(path)
    for suffix in ("-wal", "-shm"):  # a WAL left beside a fresh database would be replayed into it
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(target.with_name(target.name + suffix))
    path.replace(target)
    return target


def holding(
    db: sqlite3.Connection, select: str, column: str, groups: Iterable[list[str]], where: str = ""
) -> Iterator[Any]:
    """The rows of `select` ("SELECT ... FROM table"; `where`: of those that meet it) whose
    `column` holds every string of one of these groups (SQLite searches the text, nothing is
    read into Python first), 50 groups a query; a row found by two queries comes twice. Each
    string as a GLOB pattern, `*s*`, its own `*`, `?` and `[` taken literally: what instr
    finds, twice as fast (instr counts the characters before the match; 0.40 -> 0.16 s over
    280 MB of planned facts)."""
    asked = [g for g in groups if g]
    for i in range(0, len(asked), 50):
        chunk = asked[i : i + 50]
        found = " OR ".join("(" + " AND ".join([f"{column} GLOB ?"] * len(g)) + ")" for g in chunk)
        sql = f"{select} WHERE {where} AND ({found})" if where else f"{select} WHERE {found}"
        yield from db.execute(sql, [_inside(s) for g in chunk for s in g])


def _inside(text: str) -> str:
    """The GLOB pattern of the texts that hold `text`."""
    return "*" + text.replace("[", "[[]").replace("*", "[*]").replace("?", "[?]") + "*"


class Transaction:
    """`with state.transaction():` one write transaction, rolled back on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


class Tables:
    """What every table's methods share: the connection, and write transactions."""

    db: sqlite3.Connection

    def transaction(self) -> Transaction:
        return Transaction(self.db)
