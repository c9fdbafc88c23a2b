"""What `wikic ask` keeps of each page (ask/index.py): a record in two parts by the page's stat."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from wikic.errors import StateError
from wikic.state.connection import Tables

AskRow = tuple[int, int, bytes, bytes]  # the page's size and mtime as read, its record's head and body


class AskTables(Tables):
    def ask_heads(self) -> Iterator[tuple[str, int, int, bytes]]:
        """Each page's path (wiki/x.md), its stat when it was read, and its record's head: one
        at a time."""
        for rel, size, mtime, head in self.db.execute("SELECT rel, size, mtime_ns, head FROM ask_pages"):
            yield rel, size, mtime, bytes(head)

    def ask_stats(self) -> Iterator[tuple[str, int, int]]:
        """Each page's path and its stat when it was read."""
        yield from self.db.execute("SELECT rel, size, mtime_ns FROM ask_pages")

    def ask_bodies(self) -> Iterator[tuple[str, bytes]]:
        """Each page's path and its record's body: one at a time (350 MB of them at 100,000
        pages)."""
        for rel, body in self.db.execute("SELECT rel, body FROM ask_pages"):
            yield rel, bytes(body)

    def save_ask_rows(self, rows: dict[str, AskRow], gone: Iterable[str]) -> bool:
        """These pages' records kept, those of the pages `gone` dropped; False where the
        database could not take them now (another process writing): they are a cache."""
        try:
            with self.transaction():
                self.db.executemany("DELETE FROM ask_pages WHERE rel = ?", [(rel,) for rel in gone])
                self.db.executemany(
                    "INSERT OR REPLACE INTO ask_pages VALUES (?, ?, ?, ?, ?)",
                    [(rel, *row) for rel, row in rows.items()],
                )
        except StateError:
            return False
        return True

    def drop_ask_rows(self, rels: Iterable[str]) -> int:
        """These pages' records (a source forgotten: the pages that held its text were rewritten
        or removed, and what ask kept of them goes too); how many."""
        return sum(self.db.execute("DELETE FROM ask_pages WHERE rel = ?", (rel,)).rowcount for rel in rels)
