"""The submissions to a provider's Batch API not yet collected, and the action keys each asks for."""

from __future__ import annotations

import time
from dataclasses import dataclass

from wikic.state.connection import Tables


@dataclass(frozen=True)
class BatchRecord:
    token: str  # wikic's name for the submission, recorded before the upload
    stage: str
    file_id: str | None  # the uploaded JSONL file, once uploaded
    batch_id: str | None  # the provider's batch, once created
    created: float
    keys: list[str]  # the action keys it asks for (its lines' custom_id)


class BatchTables(Tables):
    """The batches' tables (see the module's docstring)."""

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
