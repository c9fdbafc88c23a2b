"""Forgetting (privacy/forget.py, privacy/gc.py): dropping cached answers, and compacting
state.db so that no deleted byte is left in it or its WAL."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wikic.errors import StateError
from wikic.state.connection import Tables
from wikic.state.schema import Meta


class ForgetTables(Tables):
    """The response cache's deletions and the database's compaction."""

    def drop_cache(
        self, stages: Iterable[str], *, other: bool = False, unreferenced: bool = False, before: float = 0.0
    ) -> int:
        """Delete cached answers of these stages (with `other`: of every other stage): all, or only
        those no action refers to, or made before `before` (a time.time()); returns how many.
        Freed pages are zeroed (secure_delete)."""
        # the stages written out, not bound: those of the partial index of the others' answers
        # (schema.py's cache_others) then find them from it
        named = ", ".join("'" + stage.replace("'", "''") + "'" for stage in stages)
        sql = f"DELETE FROM cache WHERE stage {'NOT ' if other else ''}IN ({named})"
        args: list[Any] = []
        if unreferenced:
            # the keys alone, from the cache's own index, each looked up in the actions' (IS NOT
            # 1: an action with no key makes IN say NULL, not 0); the rows, with their answers,
            # read only for those found (a scan of the table: 0.25 -> 0.04 s at 100,000 answers)
            referred = "SELECT key FROM actions INDEXED BY actions_key"
            sql += f" AND key IN (SELECT key FROM cache WHERE (key IN ({referred})) IS NOT 1)"
        if before:
            sql += " AND (created IS NULL OR created < ?)"
            args.append(before)
        return int(self.db.execute(sql, args).rowcount)

    def compact(self, shrink: bool = True) -> bool:
        """Leave no deleted byte in state.db or state.db-wal: rewrite the database without free
        pages (VACUUM), then empty the WAL into it and truncate it. Without `shrink`, where every
        byte deleted since the database was made or last rewritten was zeroed as it went (every
        connection deletes so: secure_delete), the WAL alone (12.6 s of VACUUM at 100,000
        sources saved). False when another process's reading kept it from finishing (deleted
        bytes may remain until the next compaction)."""
        zeroed = self.db.execute("SELECT v FROM meta WHERE k=?", (Meta.ZEROED.value,)).fetchone()
        try:
            if shrink or zeroed is None:
                self.db.execute("VACUUM")
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (Meta.ZEROED.value, "1"))
            busy = self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except StateError:  # SQLITE_BUSY / LOCKED: a reader holds the database
            return False
        return not (busy and busy[0])
