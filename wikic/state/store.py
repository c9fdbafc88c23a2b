"""`State`, the one door onto .wikic/state.db: opening it (and recovering a damaged one),
the `meta` table, and the methods of every table's module."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from wikic.errors import StateError
from wikic.state import checked
from wikic.state.ask import AskTables
from wikic.state.batches import BatchTables
from wikic.state.build import BuildTables
from wikic.state.connection import Damaged, move_aside, open_db, peek_db
from wikic.state.forget import ForgetTables
from wikic.state.incremental import IncrementalTables
from wikic.state.lint import LintTables
from wikic.state.schema import Meta


class State(BuildTables, IncrementalTables, LintTables, BatchTables, ForgetTables, AskTables):
    """A thin, typed door onto state.db. Use `State.open(path)`."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self.warnings: list[str] = []  # what opening it had to do, for the build's report
        self.checked = False  # opened checked, or found as a checked close left it

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
            state = cls(open_db(path), path)
        except Damaged as exc:
            if not recover:
                raise StateError(
                    f"{path} is damaged ({exc}); run `wikic build`, which moves it aside and rebuilds "
                    "(cached model answers in it will be lost)"
                ) from exc
            moved = move_aside(path)
            state = cls(open_db(path), path)
            state.warnings.append(
                f"{path} was damaged ({exc}); moved it aside to {moved.name} and started afresh: "
                "cached model answers are lost, so the model is asked again; pages in wiki/ are kept "
                "(one that differs from what this build makes is reported as a hand edit)"
            )
        state.checked = True
        return state

    @classmethod
    def peek(cls, path: Path) -> State | None:
        """A cheap open for the no-op check, which must stay fast: no file created, no
        quick_check, no WAL switch. None when there is no database or it is of another format;
        anything the full open would repair or report is left to the build."""
        trusted = checked.as_left(path)  # then it stays so through this door too: see close()
        db = peek_db(path)
        if db is None:
            return None
        state = cls(db, path)
        state.checked = trusted
        return state

    def close(self) -> None:
        self.db.close()
        if self.checked:  # closed as checked: the next open need not read every page again
            checked.record(self.path)

    def __enter__(self) -> State:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_meta(self, k: Meta) -> str | None:
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (k.value,)).fetchone()
        return None if row is None else str(row[0])

    def get_meta_blob(self, k: Meta) -> bytes | None:
        """A meta value kept as bytes (None: none, or text an older wikic kept there)."""
        row = self.db.execute("SELECT v FROM meta WHERE k=?", (k.value,)).fetchone()
        return bytes(row[0]) if row is not None and isinstance(row[0], bytes) else None

    def set_meta(self, k: Meta, v: str | bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k.value, v))

    def delete_meta(self, k: Meta) -> None:
        self.db.execute("DELETE FROM meta WHERE k=?", (k.value,))

    def integrity_ok(self) -> bool:
        return bool(self.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok")
