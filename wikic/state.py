"""The build state in .wikic/state.db: the source stat cache, the LLM response
cache, the last run of every action, and the files wikic wrote.

Each change is committed at once, so a killed build keeps every finished call.
This module imports nothing from wikic but its errors.
"""

from __future__ import annotations

import json
import sqlite3
import time

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikic.errors import StateError

FORMAT = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, hash TEXT, parts INTEGER DEFAULT 1);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, stage TEXT, output TEXT NOT NULL,
    prompt_tokens INTEGER, completion_tokens INTEGER, created REAL);
CREATE TABLE IF NOT EXISTS actions (
    id TEXT PRIMARY KEY, stage TEXT, key TEXT, inputs TEXT, updated REAL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT, size INTEGER, mtime_ns INTEGER);
CREATE TABLE IF NOT EXISTS slugs (page_id TEXT PRIMARY KEY, slug TEXT UNIQUE);
"""


@dataclass(frozen=True)
class ActionRecord:
    id: str
    stage: str
    key: str
    inputs: dict[str, str]


@dataclass(frozen=True)
class FileRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int


class State:
    """A thin, typed door onto state.db. Use `State.open(path)`."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    @classmethod
    def open(cls, path: Path) -> State:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
            row = db.execute("SELECT v FROM meta WHERE k='format'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StateError(
                f"{path} is damaged ({exc}); move it aside to rebuild "
                "(cached model answers in it will be lost)"
            ) from exc
        if row is None:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (str(FORMAT),))
        elif int(row[0]) > FORMAT:
            db.close()
            raise StateError(
                f"{path} was written by a newer wikic (state format {row[0]}, this one reads {FORMAT}); "
                "upgrade wikic, or move .wikic/ aside to rebuild from scratch"
            )
        return cls(db, path)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> State:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- meta --------------------------------------------------------------
    def get_meta(self, k: str) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (k,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, k: str, v: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, v))

    # --- sources (stat cache) ---------------------------------------------
    def source_stats(self) -> dict[str, tuple[int, int, str, int]]:
        rows = self.db.execute("SELECT path, size, mtime_ns, hash, parts FROM sources")
        return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}

    def set_source(self, path: str, size: int, mtime_ns: int, hash_: str, parts: int) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO sources VALUES (?, ?, ?, ?, ?)", (path, size, mtime_ns, hash_, parts)
        )

    def remove_source(self, path: str) -> None:
        self.db.execute("DELETE FROM sources WHERE path=?", (path,))

    # --- response cache ----------------------------------------------------
    def cached(self, key: str) -> Any | None:
        row = self.db.execute("SELECT output FROM cache WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put_cache(self, key: str, stage: str, output: Any, prompt_tokens: int, completion_tokens: int) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?)",
            (key, stage, json.dumps(output, ensure_ascii=False), prompt_tokens, completion_tokens, time.time()),
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

    def set_file(self, rec: FileRecord) -> None:
        self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rec.path, rec.hash, rec.size, rec.mtime_ns))

    def remove_file(self, path: str) -> None:
        self.db.execute("DELETE FROM files WHERE path=?", (path,))

    # --- sticky page slugs ---------------------------------------------------
    def slugs(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT page_id, slug FROM slugs").fetchall())

    def set_slugs(self, mapping: dict[str, str]) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM slugs")
            self.db.executemany("INSERT INTO slugs VALUES (?, ?)", sorted(mapping.items()))

    # --- batching ----------------------------------------------------------
    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    def integrity_ok(self) -> bool:
        return self.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


