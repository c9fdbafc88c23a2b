"""Forgetting (privacy/forget.py, privacy/gc.py): dropping cached answers, and compacting
state.db so that no deleted byte is left in it or its WAL."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wikic.errors import StateError
from wikic.state.connection import Tables


class ForgetTables(Tables):
    """The response cache's deletions and the database's compaction."""

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
