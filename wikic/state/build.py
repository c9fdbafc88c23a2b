"""The tables of a build's own bookkeeping: the source stat cache, the LLM response cache,
the last run of every action, the files wikic wrote, and the sticky page slugs."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from wikic.state.connection import Tables

V = TypeVar("V")

_PART = re.compile(r"#\d+$")


class ActionRecord:
    """The last run of one action: its id (`stage:subject`, and `#n` for one part of a source
    digested in several), its key and its inputs, which a record read from the state decodes
    only when asked (a build at 100,000 sources reads every record, asks of a few)."""

    __slots__ = ("id", "stage", "key", "_inputs")

    def __init__(
        self,
        id: str,  # noqa: A002
        stage: str,
        key: str,
        inputs: dict[str, str] | str | sqlite3.Connection,
    ) -> None:
        self.id, self.stage, self.key = id, stage, key
        self._inputs = inputs  # or its JSON, as stored, or the database to read it from

    @property
    def inputs(self) -> dict[str, str]:
        if isinstance(self._inputs, sqlite3.Connection):  # read when asked: few records are
            row = self._inputs.execute("SELECT inputs FROM actions WHERE id=?", (self.id,)).fetchone()
            self._inputs = row[0] if row else "{}"
        if isinstance(self._inputs, str):
            self._inputs = json.loads(self._inputs)
        assert isinstance(self._inputs, dict)
        return self._inputs

    def _fields(self) -> tuple[str, str, str, dict[str, str]]:
        return (self.id, self.stage, self.key, self.inputs)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, ActionRecord) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable inputs, as the dataclass's were

    def __repr__(self) -> str:
        return f"ActionRecord{self._fields()!r}"

    @property
    def subject(self) -> str:
        """What the action belongs to: a digest's source path (any part), a write's page id."""
        subject = self.id.removeprefix(f"{self.stage}:")
        return _PART.sub("", subject) if self.stage == "digest" else subject


class _Keyed(Mapping[str, V]):
    """A table's rows by key, each read when first asked for (`_row`) and kept; its keys
    where iterated (`_keys`)."""

    def __init__(self) -> None:
        self.got: dict[str, V | None] = {}

    def _row(self, key: str) -> V | None:
        raise NotImplementedError

    def _keys(self) -> Collection[str]:
        raise NotImplementedError

    def __getitem__(self, key: str) -> V:
        if key not in self.got:
            self.got[key] = self._row(key)
        found = self.got[key]
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


class ActionRecords(_Keyed[ActionRecord]):
    """The last run of every action, as `actions()` has them, each read by its id when first
    asked for (its inputs later still: ActionRecord), the ids alone where iterated, and every
    record at once only by `every()` (a full build's clean-up)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__()
        self.db = db
        self._ids: list[str] | None = None

    def _row(self, action_id: str) -> ActionRecord | None:
        row = self.db.execute("SELECT id, stage, key FROM actions WHERE id=?", (action_id,)).fetchone()
        return None if row is None else ActionRecord(row[0], row[1], row[2], self.db)

    def _keys(self) -> list[str]:
        return self.ids()

    def ids(self) -> list[str]:
        """Every action's id (from an index: no record made)."""
        if self._ids is None:
            self._ids = [r[0] for r in self.db.execute("SELECT id FROM actions INDEXED BY actions_keys")]
        return self._ids

    def ids_of(self, stage: str) -> list[str]:
        """The ids of one stage's actions (`stage:...`), by a range of the primary key."""
        low, high = f"{stage}:", f"{stage};"  # ";" follows ":": every id that starts with low
        rows = self.db.execute("SELECT id FROM actions WHERE id >= ? AND id < ?", (low, high))
        return [r[0] for r in rows]

    def let_go(self, ids: Iterable[str]) -> None:
        """These records not held any longer (read again where asked for): a stage's, once its
        actions are settled, their inputs decoded (90 MB at 100,000 sources)."""
        for action_id in ids:
            self.got.pop(action_id, None)

    def every(self) -> list[ActionRecord]:
        """Every record, in one read."""
        rows = self.db.execute("SELECT id, stage, key FROM actions INDEXED BY actions_keys")
        for r in rows:
            if r[0] not in self.got:
                self.got[r[0]] = ActionRecord(r[0], r[1], r[2], self.db)
        return [rec for rec in self.got.values() if rec is not None]


class SourceRows(_Keyed[tuple[int, int, str]]):
    """What the last build read of each source (size, mtime_ns, hash), by path: a row read
    when first asked for, every row at once where iterated (`every`)."""

    def __init__(self, db: sqlite3.Connection, every: Callable[[], dict[str, tuple[int, int, str]]]) -> None:
        super().__init__()
        self.db, self._every = db, every
        self.all: dict[str, tuple[int, int, str]] | None = None

    def every(self) -> dict[str, tuple[int, int, str]]:
        if self.all is None:
            self.all, self.got = self._every(), {}  # asked from here on: as every row was read
        return self.all

    def _row(self, path: str) -> tuple[int, int, str] | None:
        if self.all is not None:
            return self.all.get(path)
        row = self.db.execute("SELECT size, mtime_ns, hash FROM sources WHERE path=?", (path,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def _keys(self) -> dict[str, tuple[int, int, str]]:
        return self.every()


@dataclass(frozen=True, slots=True)  # 100,000 held by a full build: no __dict__ each
class FileRecord:
    path: str
    hash: str
    size: int
    mtime_ns: int


class BuildTables(Tables):
    """The build's tables (see the module's docstring)."""

    # --- sources (stat cache) ---------------------------------------------
    def source_stats(self) -> dict[str, tuple[int, int, str]]:
        rows = self.db.execute("SELECT path, size, mtime_ns, hash FROM sources").fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    def source_rows(self) -> SourceRows:
        """source_stats(), each row read by its path when first asked for, and all of them only
        where iterated: an edit of one source among 100,000 asks for a few."""
        return SourceRows(self.db, self.source_stats)

    def planned_among(self, paths: list[str]) -> set[str]:
        """Which of these sources the last plan planned (a `planned` row with its facts key)."""
        found: set[str] = set()
        for i in range(0, len(paths), 500):
            part = paths[i : i + 500]
            sql = f"SELECT path FROM planned WHERE key != '' AND path IN ({','.join('?' * len(part))})"
            found.update(r[0] for r in self.db.execute(sql, part).fetchall())
        return found

    def digest_ids(self, path: str) -> list[str]:
        """The ids of a source's digest records (`digest:<path>`, `digest:<path>#<n>`), and of
        any other source whose path starts with `<path>#` (the caller tells them apart)."""
        low = f"digest:{path}"
        sql = "SELECT id FROM actions WHERE id = ? OR (id >= ? AND id < ?)"
        return [r[0] for r in self.db.execute(sql, (low, low + "#", low + "$")).fetchall()]

    def set_source(self, path: str, size: int, mtime_ns: int, hash_: str) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO sources (path, size, mtime_ns, hash) VALUES (?, ?, ?, ?)",
            (path, size, mtime_ns, hash_),
        )

    def source_hashes(self) -> dict[str, str]:
        """Path -> hash of each source the last build read."""
        return dict(self.db.execute("SELECT path, hash FROM sources").fetchall())

    def remove_source(self, path: str) -> None:
        self.db.execute("DELETE FROM sources WHERE path=?", (path,))

    # --- response cache ----------------------------------------------------
    def cached(self, key: str) -> Any | None:
        row = self.db.execute("SELECT output FROM cache WHERE key=?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def cached_many(self, keys: list[str]) -> dict[str, Any]:
        """The cached outputs of these keys (those the cache has), 500 keys a query: a build
        asks for every source's digest, and 10,000 queries cost more than their answers."""
        found: dict[str, Any] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            sql = f"SELECT key, output FROM cache WHERE key IN ({','.join('?' * len(part))})"
            found.update((k, json.loads(text)) for k, text in self.db.execute(sql, part))
        return found

    def put_cache(
        self, key: str, stage: str, output: Any, prompt_tokens: int, completion_tokens: int
    ) -> None:
        text = json.dumps(output, ensure_ascii=False)
        self.db.execute(
            "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?)",
            (key, stage, text, prompt_tokens, completion_tokens, time.time()),
        )

    # --- actions -----------------------------------------------------------
    def actions(self, stage: str | None = None) -> dict[str, ActionRecord]:
        if stage is None:
            rows = self.db.execute("SELECT id, stage, key, inputs FROM actions")
        else:
            rows = self.db.execute("SELECT id, stage, key, inputs FROM actions WHERE stage=?", (stage,))
        return {r[0]: ActionRecord(r[0], r[1], r[2], r[3]) for r in rows}

    def action_records(self) -> ActionRecords:
        """actions(), each record read when asked for, while the state is open: an edit of one
        source among 100,000 asks for a few records, and for the ids of the digests."""
        return ActionRecords(self.db)

    def set_action(self, rec: ActionRecord) -> None:
        self.set_actions([rec])

    def set_actions(self, recs: Iterable[ActionRecord]) -> None:
        now = time.time()
        self.db.executemany(
            "INSERT OR REPLACE INTO actions VALUES (?, ?, ?, ?, ?)",
            [(rec.id, rec.stage, rec.key, json.dumps(rec.inputs, sort_keys=True), now) for rec in recs],
        )

    def remove_action(self, action_id: str) -> None:
        self.db.execute("DELETE FROM actions WHERE id=?", (action_id,))

    def remove_actions_of(self, stage: str, subjects: Iterable[str]) -> None:
        """The records of a stage's actions on these subjects (a source digested in parts: each
        part's, `stage:subject#n`)."""
        for subject in subjects:
            head = f"{stage}:{subject}"
            self.db.execute(
                "DELETE FROM actions WHERE id=? OR (id > ? AND id < ?)", (head, f"{head}#", f"{head}$")
            )

    # --- files wikic wrote --------------------------------------------------
    def files(self) -> dict[str, FileRecord]:
        rows = self.db.execute("SELECT path, hash, size, mtime_ns FROM files")
        return {r[0]: FileRecord(r[0], r[1], r[2], r[3]) for r in rows}

    def files_of(self, rels: list[str]) -> dict[str, FileRecord]:
        """files() of these paths only."""
        found: dict[str, FileRecord] = {}
        for i in range(0, len(rels), 500):
            chunk = rels[i : i + 500]
            sql = f"SELECT path, hash, size, mtime_ns FROM files WHERE path IN ({','.join('?' * len(chunk))})"
            found.update({r[0]: FileRecord(r[0], r[1], r[2], r[3]) for r in self.db.execute(sql, chunk)})
        return found

    def file_hashes(self) -> dict[str, str]:
        """Path -> hash of each file wikic wrote (10,000 rows: no records made)."""
        return dict(self.db.execute("SELECT path, hash FROM files").fetchall())

    def file_stats(self) -> list[tuple[str, int, int]]:
        """(path, size, mtime_ns) of each file wikic wrote, as it left them: for the stat checks."""
        return self.db.execute("SELECT path, size, mtime_ns FROM files").fetchall()

    def set_file(self, rec: FileRecord) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rec.path, rec.hash, rec.size, rec.mtime_ns)
        )

    def remove_file(self, path: str) -> None:
        self.db.execute("DELETE FROM files WHERE path=?", (path,))

    # --- sticky page slugs ---------------------------------------------------
    def slugs(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT page_id, slug FROM slugs").fetchall())

    def set_slugs(self, mapping: dict[str, str]) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM slugs")
            self.db.executemany("INSERT INTO slugs VALUES (?, ?)", sorted(mapping.items()))

    def patch_slugs(self, new: Mapping[str, str], gone: Iterable[str], heads: str = "") -> None:
        """The slugs of the pages new put in, and those of the pages gone taken out; `heads`: the
        token of the kept plan whose heads they are now, page for page (heads_are_slugs)."""
        with self.transaction():
            self.db.executemany("DELETE FROM slugs WHERE page_id=?", [(pid,) for pid in gone])
            self.db.executemany("INSERT OR REPLACE INTO slugs VALUES (?, ?)", sorted(new.items()))
            if heads:
                self.db.execute("INSERT OR REPLACE INTO kept VALUES ('heads=slugs', ?)", (heads.encode(),))

    def wiki_changed_at(self) -> float:
        """When the build last wrote or removed a page: the newest file it recorded (0 if none)."""
        row = self.db.execute("SELECT MAX(mtime_ns) FROM files").fetchone()
        return (row[0] or 0) / 1e9 if row else 0.0
