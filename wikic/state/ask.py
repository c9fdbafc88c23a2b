"""What `wikic ask` keeps of each page (ask/index.py): a record in two parts by the page's stat,
and beside it what ranking reads of the page, as text (ask/terms.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from wikic.errors import StateError
from wikic.state.connection import Tables

AskRow = tuple[int, int, bytes, bytes, str]  # the page's size and mtime as read; its head, body and terms
CHUNK = 500  # rels per query: under SQLite's limit of bound values


class AskTables(Tables):
    def ask_heads(self) -> Iterator[tuple[str, int, int, bytes]]:
        """Each page's path (wiki/x.md), its stat when it was read, and its record's head: one
        at a time."""
        for rel, size, mtime, head in self.db.execute("SELECT rel, size, mtime_ns, head FROM ask_pages"):
            yield rel, size, mtime, bytes(head)

    def ask_stats(self) -> Iterator[tuple[str, int, int]]:
        """Each page's path and its stat when it was read."""
        yield from self.db.execute("SELECT rel, size, mtime_ns FROM ask_pages")

    def ask_stat_lines(self) -> list[tuple[str, str]]:
        """Each page's path, and its stat when it was read as a walk's line has it
        (`rel<TAB>size<TAB>mtime_ns`, snapshot.Tree), made by SQLite: 100,000 compared as
        strings, with no tuple made and no stat looked up each."""
        sql = "SELECT rel, rel || char(9) || size || char(9) || mtime_ns FROM ask_pages"
        return self.db.execute(sql).fetchall()

    def ask_bodies(self, rels: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
        """Each page's path and its record's body, or those of these pages: one at a time (200
        MB of them at 100,000 pages)."""
        if rels is None:
            for rel, body in self.db.execute("SELECT rel, body FROM ask_pages"):
                yield rel, bytes(body)
            return
        wanted = list(rels)
        for at in range(0, len(wanted), CHUNK):
            part = wanted[at : at + CHUNK]
            marks = ",".join("?" * len(part))
            for rel, body in self.db.execute(f"SELECT rel, body FROM ask_pages WHERE rel IN ({marks})", part):
                yield rel, bytes(body)

    def ask_terms(self, rels: Iterable[str] | None = None) -> Iterator[tuple[str, str]]:
        """Each page's path and what ranking reads of it (ask/terms.py), or those of these pages:
        one at a time."""
        if rels is None:
            yield from self.db.execute("SELECT rel, terms FROM ask_terms")
            return
        wanted = list(rels)
        for at in range(0, len(wanted), CHUNK):
            part = wanted[at : at + CHUNK]
            marks = ",".join("?" * len(part))
            yield from self.db.execute(f"SELECT rel, terms FROM ask_terms WHERE rel IN ({marks})", part)

    def save_ask_rows(self, rows: dict[str, AskRow], gone: Iterable[str]) -> bool:
        """These pages' records kept, those of the pages `gone` dropped; False where the
        database could not take them now (another process writing): they are a cache."""
        try:
            with self.transaction():
                for table in ("ask_pages", "ask_terms"):
                    self.db.executemany(f"DELETE FROM {table} WHERE rel = ?", [(rel,) for rel in gone])
                self.db.executemany(
                    "INSERT OR REPLACE INTO ask_pages VALUES (?, ?, ?, ?, ?)",
                    [(rel, *row[:4]) for rel, row in rows.items()],
                )
                terms = [(rel, row[4]) for rel, row in rows.items()]
                self.db.executemany("INSERT OR REPLACE INTO ask_terms VALUES (?, ?)", terms)
        except StateError:
            return False
        return True

    def drop_ask_rows(self, rels: Iterable[str]) -> int:
        """These pages' records (a source forgotten: the pages that held its text were rewritten
        or removed, and what ask kept of them goes too); how many."""
        dropped = 0
        for rel in rels:
            dropped += self.db.execute("DELETE FROM ask_pages WHERE rel = ?", (rel,)).rowcount
            self.db.execute("DELETE FROM ask_terms WHERE rel = ?", (rel,))
        # and any without a record (an older wikic drops records alone): no terms of a page gone stay
        self.db.execute("DELETE FROM ask_terms WHERE rel NOT IN (SELECT rel FROM ask_pages)")
        return dropped
