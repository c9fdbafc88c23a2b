"""What `wikic ask` keeps of each page (ask/index.py): a record by the page's stat."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from wikic.errors import StateError
from wikic.state.connection import Tables

AskRow = tuple[int, int, bytes]  # the page's size and mtime as read, its record


class AskTables(Tables):
    def ask_rows(self) -> Iterator[tuple[str, int, int, bytes]]:
        """Each page's path (wiki/x.md), its stat when it was read, and what ask kept of it:
        one at a time (351 MB of them at 100,000 pages)."""
        for rel, size, mtime, record in self.db.execute("SELECT rel, size, mtime_ns, record FROM ask_pages"):
            yield rel, size, mtime, bytes(record)

    def save_ask_rows(self, rows: dict[str, AskRow], gone: Iterable[str]) -> bool:
        """These pages' records kept, those of the pages `gone` dropped; False where the
        database could not take them now (another process writing): they are a cache."""
        try:
            with self.transaction():
                self.db.executemany("DELETE FROM ask_pages WHERE rel = ?", [(rel,) for rel in gone])
                self.db.executemany(
                    "INSERT OR REPLACE INTO ask_pages VALUES (?, ?, ?, ?)",
                    [(rel, *row) for rel, row in rows.items()],
                )
        except StateError:
            return False
        return True

    def drop_ask_rows(self) -> int:
        """Every page's record (a source forgotten: the pages that held its text are rewritten,
        and what ask kept of them goes too); how many."""
        return int(self.db.execute("DELETE FROM ask_pages").rowcount)
