"""The lint cache's indexes beside its rows (lint_pages): which pages cite or list each
source, and which pages treat each term with no page as a topic, so that an edit is checked
against what it touches alone (lint/patch.py); and saving a lint's rows, indexes and summary
in one transaction."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from wikic.state.connection import Tables
from wikic.state.incremental import LintRow
from wikic.state.schema import Meta

# a page's mentions: topic key -> (first line, term -> how often), as lint/rules.py makes them
Mentions = Mapping[str, tuple[int, Mapping[str, int]]]


class LintTables(Tables):
    """lint_deps (source -> pages) and lint_mentions (topic key -> pages), with lint_pages."""

    def has_lint_tables(self) -> bool:
        """Whether this database has the lint cache's tables (a wikic before them made it)."""
        sql = (
            "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN ('lint_deps', 'lint_mentions')"
        )
        return bool(self.db.execute(sql).fetchone()[0] == 2)

    def lint_own(self) -> dict[str, str]:
        """path -> own findings (JSON) of each cached page that has any."""
        rows = self.db.execute("SELECT rel, findings FROM lint_pages WHERE findings != '[]'")
        return {r[0]: r[1] for r in rows}

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
        saved: dict[Meta, str],
        everything: bool = False,
    ) -> None:
        """The rows of the pages read, `gone` dropped; `deps`, `mentions`: the sources and the
        mentions of these pages, in place of their old ones (`everything`: of every page, all
        old ones dropped); `saved`: meta values made with them."""
        db = self.db
        with self.transaction():
            for k, v in saved.items():
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k.value, v))
            gone = list(gone)
            db.executemany("DELETE FROM lint_pages WHERE rel=?", [(rel,) for rel in gone])
            db.executemany(
                "INSERT OR REPLACE INTO lint_pages VALUES (?, ?, ?, ?, ?, ?)",
                [(r.rel, r.size, r.mtime_ns, r.key, r.facts, r.findings) for r in rows],
            )
            if everything:
                db.execute("DELETE FROM lint_deps")
                db.execute("DELETE FROM lint_mentions")
            else:
                db.executemany("DELETE FROM lint_deps WHERE rel=?", [(rel,) for rel in {*gone, *deps}])
                db.executemany(
                    "DELETE FROM lint_mentions WHERE rel=?", [(rel,) for rel in {*gone, *mentions}]
                )
            db.executemany(
                "INSERT OR IGNORE INTO lint_deps VALUES (?, ?)",
                [(source, rel) for rel, sources in deps.items() for source in sources],
            )
            db.executemany(
                "INSERT INTO lint_mentions VALUES (?, ?, ?, ?)",
                [
                    (key, rel, line, _json(terms))
                    for rel, m in mentions.items()
                    for key, (line, terms) in m.items()
                ],
            )


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)
