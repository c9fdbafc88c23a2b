"""The lint cache beside its rows (lint_pages): every page's record (stat, digests), what
each cited or listed source was (lint_sources), which pages cite or list each source
(lint_deps), which pages treat each term with no page as a topic (lint_mentions), so that an
edit is checked against what it touches alone (lint/patch.py); and saving a lint's rows,
records, indexes and summary in one transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from wikic.state.connection import Tables, holding
from wikic.state.incremental import LintRow
from wikic.state.schema import Meta

# a page's mentions: topic key -> (first line, term -> how often), as lint/topics.py makes them
Mentions = Mapping[str, tuple[int, Mapping[str, int]]]
# a page's record: size, mtime_ns, digest of its facts, hash, cached, can be an orphan
Record = tuple[int, int, str, str, bool, bool]
# a source's: size, mtime_ns (None: no file), and what the last build read: size, mtime_ns, hash
SourceRecord = tuple[int | None, int | None, int | None, int | None, str | None]
TABLES = ("lint_deps", "lint_mentions", "lint_records", "lint_sources")
HELD = (*TABLES, "lint_blocks")  # the lint cache's tables; lint_blocks outlives a full lint
AT_ONCE = 500  # keys in one query (SQLite allows 999 variables at least)


class LintTables(Tables):
    """lint_records, lint_sources, lint_deps (source -> pages) and lint_mentions (topic key
    -> pages), with lint_pages."""

    def has_lint_tables(self) -> bool:
        """Whether this database has the lint cache's tables (a wikic before them made it)."""
        marks = ",".join("?" * len(HELD))
        sql = f"SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN ({marks})"
        return bool(self.db.execute(sql, HELD).fetchone()[0] == len(HELD))

    def lint_records(self) -> dict[str, Record]:
        """Every page's record in the last stored lint, by path."""
        sql = "SELECT rel, size, mtime_ns, across, hash, cached, orphanable FROM lint_records"
        rows = self.db.execute(sql).fetchall()  # not row by row: the cursor wraps each step
        return {r[0]: (r[1], r[2], r[3], r[4], bool(r[5]), bool(r[6])) for r in rows}

    def lint_sources(self) -> dict[str, SourceRecord]:
        """What each source cited or listed was at the last stored lint, by path."""
        sql = "SELECT rel, size, mtime_ns, read_size, read_mtime_ns, read_hash FROM lint_sources"
        return {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in self.db.execute(sql).fetchall()}

    def lint_own(self) -> dict[str, str]:
        """path -> own findings (JSON) of each cached page that has any."""
        rows = self.db.execute("SELECT rel, findings FROM lint_pages WHERE findings != '[]'").fetchall()
        return {r[0]: r[1] for r in rows}

    def _by_key(self, select: str, keys: Iterable[str]) -> list[Any]:
        """`select` ... WHERE <key> IN (...), the keys asked some hundreds at a time."""
        keys, rows = list(keys), []
        for at in range(0, len(keys), AT_ONCE):
            part = keys[at : at + AT_ONCE]
            rows += self.db.execute(select.replace("(?)", f"({','.join('?' * len(part))})"), part).fetchall()
        return rows

    def lint_records_of(self, rels: Iterable[str]) -> dict[str, Record]:
        """These pages' records in the last stored lint (those it has), by path."""
        sql = (
            "SELECT rel, size, mtime_ns, across, hash, cached, orphanable FROM lint_records WHERE rel IN (?)"
        )
        return {r[0]: (r[1], r[2], r[3], r[4], bool(r[5]), bool(r[6])) for r in self._by_key(sql, rels)}

    def lint_sources_of(self, rels: Iterable[str]) -> dict[str, SourceRecord]:
        """What these sources were at the last stored lint (those it has), by path."""
        sql = "SELECT rel, size, mtime_ns, read_size, read_mtime_ns, read_hash FROM lint_sources"
        sql += " WHERE rel IN (?)"
        return {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in self._by_key(sql, rels)}

    def lint_own_of(self, rels: Iterable[str]) -> dict[str, str]:
        """path -> own findings (JSON) of these cached pages (those that have a row)."""
        return dict(self._by_key("SELECT rel, findings FROM lint_pages WHERE rel IN (?)", rels))

    def lint_always(self) -> list[str]:
        """The pages the last stored lint had no cached row for: read again by every lint."""
        return [r[0] for r in self.db.execute("SELECT rel FROM lint_records WHERE cached=0")]

    def lint_unbuilt_sources(self) -> list[str]:
        """The cited or listed sources that the build keeps no record of (not its inputs)."""
        sql = "SELECT rel FROM lint_sources WHERE rel NOT IN (SELECT path FROM sources)"
        return [r[0] for r in self.db.execute(sql)]

    def built_sources_of(self, rels: Iterable[str]) -> dict[str, tuple[int, int, str]]:
        """What the last build read of these sources (those it read): size, mtime_ns, hash."""
        sql = "SELECT path, size, mtime_ns, hash FROM sources WHERE path IN (?)"
        return {r[0]: (r[1], r[2], r[3]) for r in self._by_key(sql, rels)}

    def written_hashes_of(self, rels: Iterable[str]) -> dict[str, str]:
        """The hash of what wikic wrote of these files (those it wrote), by path."""
        return dict(self._by_key("SELECT path, hash FROM files WHERE path IN (?)", rels))

    def lint_blocks_of(self, rels: Iterable[str]) -> dict[str, dict[str, str]]:
        """path -> block key -> bad-citation findings (JSON) kept of these pages (lint/blocks.py)."""
        found: dict[str, dict[str, str]] = {}
        for rel, key, findings in self._by_key(
            "SELECT rel, key, findings FROM lint_blocks WHERE rel IN (?)", rels
        ):
            found.setdefault(rel, {})[key] = findings
        return found

    def lint_deps_of(self, rels: Iterable[str]) -> dict[str, set[str]]:
        """path -> the sources each of these pages cites or lists, as stored."""
        found: dict[str, set[str]] = {}
        for source, rel in self._by_key("SELECT source, rel FROM lint_deps WHERE rel IN (?)", rels):
            found.setdefault(rel, set()).add(source)
        return found

    def lint_naming(self, strings: Iterable[str]) -> set[str]:
        """The pages whose names the rules across pages resolve (casefolded: lint_text) hold
        any of these strings."""
        return {rel for rel, _ in self.lint_texts([[s] for s in strings])}

    def lint_texts(self, groups: Iterable[list[str]]) -> Iterator[tuple[str, str]]:
        """(path, lint_text) of the pages whose lint_text holds every string of one of these
        groups, each page once."""
        seen: set[str] = set()
        for rel, text in holding(self.db, "SELECT rel, text FROM lint_text", "text", groups):
            if rel not in seen:
                seen.add(rel)
                yield rel, text

    def lint_dependents(self, sources: Iterable[str]) -> set[str]:
        """The cached pages that cite or list any of these sources."""
        found: set[str] = set()
        for source in sources:
            found.update(r[0] for r in self.db.execute("SELECT rel FROM lint_deps WHERE source=?", (source,)))
        return found

    def lint_mentions(self, keys: Iterable[str]) -> dict[str, dict[str, tuple[int, dict[str, int]]]]:
        """topic key -> the pages that mention it: path -> (first line, term -> how often)."""
        found: dict[str, dict[str, tuple[int, dict[str, int]]]] = {}
        sql = "SELECT rel, line, terms FROM lint_mentions WHERE key=?"
        for key in keys:
            found[key] = {r[0]: (r[1], json.loads(r[2])) for r in self.db.execute(sql, (key,))}
        return found

    def save_lint(
        self,
        rows: Iterable[LintRow],
        gone: Iterable[str],
        deps: Mapping[str, Iterable[str]],
        mentions: Mapping[str, Mentions],
        records: Mapping[str, Record],
        sources: Mapping[str, SourceRecord],
        saved: Mapping[Meta, str | bytes],
        everything: bool = False,
        blocks: tuple[Iterable[tuple[str, str]], Iterable[tuple[str, str, str]]] = ((), ()),
        unmentioned: Iterable[str] = (),
    ) -> None:
        """The rows of the pages read, `gone` dropped; `deps`, `mentions`: the sources and the
        mentions of these pages, in place of their old ones; `records`, `sources`: new or
        changed (`everything`: of every page, all old ones dropped); `saved`: meta values made
        with them; `blocks`: the (page, block key) gone, and the (page, block key, findings)
        new, of the bad-citation findings kept by block; `unmentioned`: topic keys no page
        mentions as missing any longer (a page new has them: lint/came.py). The kept lint summary
        (Meta.LINT_TOTALS) goes unless `saved` has it anew: it holds only for the cache it was
        made with."""
        db = self.db
        with self.transaction():
            if Meta.LINT_TOTALS not in saved:
                db.execute("DELETE FROM meta WHERE k=?", (Meta.LINT_TOTALS.value,))
            for k, v in saved.items():
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k.value, v))
            gone = list(gone)
            db.executemany("DELETE FROM lint_pages WHERE rel=?", [(rel,) for rel in gone])
            db.executemany("DELETE FROM lint_text WHERE rel=?", [(rel,) for rel in gone])
            db.executemany("DELETE FROM lint_blocks WHERE rel=?", [(rel,) for rel in gone])
            names: list[tuple[str, str]] = []  # each row's lint_text, put in as the rows are
            # row by row: a full lint's rows come from a file, not all held at once
            db.executemany("INSERT OR REPLACE INTO lint_pages VALUES (?, ?, ?, ?, ?, ?)", _pages(rows, names))
            db.executemany("INSERT OR REPLACE INTO lint_text VALUES (?, ?)", names)
            if everything:
                for table in TABLES:
                    db.execute(f"DELETE FROM {table}")
            else:
                db.executemany("DELETE FROM lint_deps WHERE rel=?", [(rel,) for rel in gone])
                deps = self._deps_changed(deps)
                db.executemany(
                    "DELETE FROM lint_mentions WHERE rel=?", [(rel,) for rel in {*gone, *mentions}]
                )
            db.executemany("DELETE FROM lint_records WHERE rel=?", [(rel,) for rel in gone])
            db.executemany(
                "INSERT OR REPLACE INTO lint_records VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(rel, *r) for rel, r in records.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO lint_sources VALUES (?, ?, ?, ?, ?, ?)",
                [(rel, *r) for rel, r in sources.items()],
            )
            self._save_blocks(blocks, everything)
            db.executemany("DELETE FROM lint_mentions WHERE key=?", [(key,) for key in unmentioned])
            self._save_refs(deps, mentions)

    def _deps_changed(self, deps: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
        """In save_lint's transaction: the sources these pages no longer cite taken out, and
        those they cite now and did not handed back (a topic page that 1,300 sources give to,
        one of them gone: 2 rows, not 2,600 over as many of the table's pages)."""
        was = self.lint_deps_of(deps)
        now = {rel: set(sources) for rel, sources in deps.items()}
        self.db.executemany(
            "DELETE FROM lint_deps WHERE source=? AND rel=?",
            [(source, rel) for rel, sources in was.items() for source in sources - now[rel]],
        )
        return {rel: sources - was.get(rel, set()) for rel, sources in now.items()}

    def _save_refs(self, deps: Mapping[str, Iterable[str]], mentions: Mapping[str, Mentions]) -> None:
        """In save_lint's transaction: the sources and the mentions of the pages read."""
        self.db.executemany(
            "INSERT OR IGNORE INTO lint_deps VALUES (?, ?)",
            [(source, rel) for rel, sources in deps.items() for source in sources],
        )
        self.db.executemany(
            "INSERT INTO lint_mentions VALUES (?, ?, ?, ?)",
            [
                (key, rel, line, _json(terms))
                for rel, m in mentions.items()
                for key, (line, terms) in m.items()
            ],
        )

    def _save_blocks(
        self, blocks: tuple[Iterable[tuple[str, str]], Iterable[tuple[str, str, str]]], everything: bool
    ) -> None:
        """In save_lint's transaction: the blocks gone and new; after a lint of every page,
        those of pages no longer there (a block's kept findings hold as long as it exists)."""
        if everything:
            self.db.execute("DELETE FROM lint_blocks WHERE rel NOT IN (SELECT rel FROM lint_records)")
            self.db.execute("DELETE FROM lint_text WHERE rel NOT IN (SELECT rel FROM lint_pages)")
        self.db.executemany("DELETE FROM lint_blocks WHERE rel=? AND key=?", blocks[0])
        self.db.executemany("INSERT OR REPLACE INTO lint_blocks VALUES (?, ?, ?)", blocks[1])


def _pages(rows: Iterable[LintRow], names: list[tuple[str, str]]) -> Iterator[tuple[Any, ...]]:
    """The rows as lint_pages holds them, each one's lint_text put in `names`."""
    for r in rows:
        names.append((r.rel, r.names))
        yield r.rel, r.size, r.mtime_ns, r.key, r.facts, r.findings


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
