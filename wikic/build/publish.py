"""Putting assembled pages into wiki/: atomic writes, removals, and the rule that a page
changed by hand is never overwritten or deleted silently (log.md: logfile.py)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from wikic.build.logfile import append_log as append_log  # log.md's own module; callers import it here
from wikic.build.outputs import take
from wikic.build.report import Report
from wikic.fsutil import atomic_write_many
from wikic.hashing import bytes_hash, file_hash
from wikic.state import FileRecord, State
from wikic.wiki.page import is_safe_file_name, sealed_intact

WIKI = "wiki"
LOG = "log.md"
BATCH = 1000  # pages written (and fsynced together) at a time
PIECE = 1 << 20  # bytes of a file compared at a time


def _record(state: State, rel: str, path: Path, data: bytes) -> None:
    st = path.stat()
    state.set_file(FileRecord(rel, bytes_hash(data), st.st_size, st.st_mtime_ns))


def publish(
    root: Path,
    outputs: Mapping[str, str],
    keep: set[str],
    state: State,
    report: Report,
    force: bool = False,
    records: dict[str, FileRecord] | None = None,
    prune: bool = True,
    remove: Iterable[str] = (),
) -> None:
    """Write what changed, remove pages no longer planned (except `keep`; without `prune`, an
    edit's outputs, those in `remove`, the pages it knows are gone), record it all.

    Only plain page names directly in wiki/ are written or removed: a name that
    would reach elsewhere (from a tampered state.db, say) is an error, never a write.
    `records`: state.files() (of `outputs` at least, without `prune`), where the caller has
    just read them. Each page's text is taken from `outputs` as it is written (outputs.take).
    """
    job = _Publish(root, state, report, force, records)
    batch: list[tuple[Path, bytes]] = []
    for item in job.changed(outputs):  # a thousand at a time: 100,000 pages' bytes are never all held
        batch.append(item)
        if len(batch) == BATCH:
            job.write(batch)
            batch = []
    job.write(batch)
    if prune:
        job.remove_unplanned(outputs, keep)
    else:
        job.remove(sorted(remove))


class _Publish:
    """One publish: the records of what wikic wrote, and the rule for hand edits."""

    def __init__(
        self, root: Path, state: State, report: Report, force: bool, records: dict[str, FileRecord] | None
    ) -> None:
        self.root, self.state, self.report, self.force = root, state, report, force
        self.records = {rel: rec for rel, rec in (records or state.files()).items() if _ours(rel)}

    def changed(self, outputs: Mapping[str, str]) -> Iterator[tuple[Path, bytes]]:
        """The pages to write: new or different from disk, and not edited by hand (unless forced)."""
        wiki = self.root / WIKI
        for name in sorted(outputs):
            if not is_safe_file_name(name):
                self.report.error(
                    name, "refused to write a page with this name: it is not a plain file name in wiki/"
                )
                continue
            rel, path, data = f"{WIKI}/{name}", wiki / name, take(outputs, name).encode("utf-8")
            same = holds(path, data)
            rec = self.records.get(rel)
            if same:
                if rec is None or rec.hash != bytes_hash(data) or rec.mtime_ns != path.stat().st_mtime_ns:
                    _record(self.state, rel, path, data)  # adopt a page that is already what we would write
                continue
            if same is not None and self._hand_edited(rec, path):  # (None: gone since, written)
                self.report.conflicts.append(rel)
                continue
            yield path, data

    def write(self, batch: list[tuple[Path, bytes]]) -> None:
        """The pages written, and their records in one commit (one each: 0.1 ms a page). A build
        killed before the commit leaves pages unrecorded that the next adopts (changed())."""
        if batch:
            with self.state.transaction():
                atomic_write_many(batch, self.written)

    def written(self, path: Path, data: bytes) -> None:
        rel = f"{WIKI}/{path.name}"
        _record(self.state, rel, path, data)
        self.report.written.append(rel)

    def remove_unplanned(self, outputs: Mapping[str, str], keep: set[str]) -> None:
        """Remove the pages wikic wrote that are no longer planned, unless edited by hand."""
        # by set difference: the common case is 10,000 records and none to remove
        planned = {f"{WIKI}/{name}" for name in outputs} | keep | {f"{WIKI}/{LOG}"}
        self.remove(sorted(self.records.keys() - planned))

    def remove(self, rels: list[str]) -> None:
        """Remove these pages that wikic wrote, unless edited by hand."""
        for rel in rels:
            rec = self.records.get(rel)
            if rec is None:  # not wikic's: never removed
                continue
            path = self.root / rel
            edited = self._hand_edited(rec, path)
            if edited is None:  # deleted by hand already
                self.state.remove_file(rel)
                continue
            if edited:
                self.report.conflicts.append(rel)
                continue
            path.unlink()
            self.state.remove_file(rel)
            self.report.removed.append(rel)

    def _hand_edited(self, rec: FileRecord | None, path: Path) -> bool | None:
        """Not as wikic last wrote it, nor sealed intact: a person's edit, kept unless forced;
        None where there is no such file (gone since it was looked at: deleted by hand)."""
        try:
            if self.force:
                return False if path.exists() else None
            if rec is not None and file_hash(path) == rec.hash:
                return False
            return not sealed_intact(path.read_text("utf-8", "replace"))
        except FileNotFoundError:
            return None


def holds(path: Path, data: bytes) -> bool | None:
    """Whether the file holds `data` (None: there is no file), read a piece at a time: a large
    one (index.md, 18 MB at 100,000 pages) is not held beside its new bytes; one of another
    size is not read."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        return None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size != len(data):
            return False
        if size <= PIECE:
            return f.read() == data
        view = memoryview(data)
        return all(f.read(PIECE) == view[at : at + PIECE] for at in range(0, size, PIECE)) and not f.read(1)


def _ours(rel: str) -> bool:
    """A record of a file that wikic may have written: wiki/<plain name>."""
    folder, _, name = rel.partition("/")
    return folder == WIKI and is_safe_file_name(name)
