"""Putting assembled pages into wiki/: atomic writes, removals, log.md, and the
rule that a page changed by hand is never overwritten or deleted silently."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from wikic.build.report import Report
from wikic.fsutil import atomic_write, atomic_write_many
from wikic.hashing import bytes_hash
from wikic.state import FileRecord, State
from wikic.wiki.page import is_safe_file_name, sealed_intact

WIKI = "wiki"
LOG = "log.md"
BATCH = 1000  # pages written (and fsynced together) at a time


def _record(state: State, rel: str, path: Path, data: bytes) -> None:
    st = path.stat()
    state.set_file(FileRecord(rel, bytes_hash(data), st.st_size, st.st_mtime_ns))


def publish(
    root: Path,
    outputs: dict[str, str],
    keep: set[str],
    state: State,
    report: Report,
    force: bool = False,
    records: dict[str, FileRecord] | None = None,
    prune: bool = True,
) -> None:
    """Write what changed, remove pages no longer planned (except `keep`; none without `prune`:
    an edit's outputs, no page gone), record it all.

    Only plain page names directly in wiki/ are written or removed: a name that
    would reach elsewhere (from a tampered state.db, say) is an error, never a write.
    `records`: state.files() (of `outputs` at least, without `prune`), where the caller has
    just read them.
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


class _Publish:
    """One publish: the records of what wikic wrote, and the rule for hand edits."""

    def __init__(
        self, root: Path, state: State, report: Report, force: bool, records: dict[str, FileRecord] | None
    ) -> None:
        self.root, self.state, self.report, self.force = root, state, report, force
        self.records = {rel: rec for rel, rec in (records or state.files()).items() if _ours(rel)}

    def changed(self, outputs: dict[str, str]) -> Iterator[tuple[Path, bytes]]:
        """The pages to write: new or different from disk, and not edited by hand (unless forced)."""
        wiki = self.root / WIKI
        for name, text in sorted(outputs.items()):
            if not is_safe_file_name(name):
                self.report.error(
                    name, "refused to write a page with this name: it is not a plain file name in wiki/"
                )
                continue
            rel, path, data = f"{WIKI}/{name}", wiki / name, text.encode("utf-8")
            try:
                disk: bytes | None = path.read_bytes()
            except FileNotFoundError:
                disk = None
            rec = self.records.get(rel)
            if disk == data:
                if rec is None or rec.hash != bytes_hash(data) or rec.mtime_ns != path.stat().st_mtime_ns:
                    _record(self.state, rel, path, data)  # adopt a page that is already what we would write
                continue
            if disk is not None and self._hand_edited(rec, disk, partial(disk.decode, "utf-8", "replace")):
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

    def remove_unplanned(self, outputs: dict[str, str], keep: set[str]) -> None:
        """Remove the pages wikic wrote that are no longer planned, unless edited by hand."""
        # by set difference: the common case is 10,000 records and none to remove
        planned = {f"{WIKI}/{name}" for name in outputs} | keep | {f"{WIKI}/{LOG}"}
        for rel in sorted(self.records.keys() - planned):
            rec = self.records[rel]
            path = self.root / rel
            try:
                disk = path.read_bytes()
            except FileNotFoundError:
                self.state.remove_file(rel)
                continue
            if self._hand_edited(rec, disk, partial(path.read_text, "utf-8", "replace")):
                self.report.conflicts.append(rel)
                continue
            path.unlink()
            self.state.remove_file(rel)
            self.report.removed.append(rel)

    def _hand_edited(self, rec: FileRecord | None, disk: bytes, text: Callable[[], str]) -> bool:
        """Not as wikic last wrote it, nor sealed intact: a person's edit, kept unless forced."""
        if self.force or (rec is not None and bytes_hash(disk) == rec.hash):
            return False
        return not sealed_intact(text())


def _ours(rel: str) -> bool:
    """A record of a file that wikic may have written: wiki/<plain name>."""
    folder, _, name = rel.partition("/")
    return folder == WIKI and is_safe_file_name(name)


def append_log(
    root: Path,
    state: State,
    report: Report,
    when: float | None = None,
    scrub: Callable[[str], str] | None = None,
) -> bool:
    """One entry in log.md for a build that changed the wiki, or that finds a wiki
    without its log (a build killed before it wrote log.md, whose pages this one adopted).
    `scrub` (a build that forgot sources) edits the whole log, earlier entries too, in the
    same atomic write: a kill leaves the old log.md or the new one, never a half-scrubbed one.
    True when it wrote log.md."""
    path = root / WIKI / LOG
    try:
        current: str | None = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    text = _with_entry(current, report, when)
    if scrub is not None and text is not None:
        text = scrub(text)
    if text is None or text == current:
        return False
    data = text.encode("utf-8")
    atomic_write(path, data)
    _record(state, f"{WIKI}/{LOG}", path, data)
    return True


def _with_entry(current: str | None, report: Report, when: float | None) -> str | None:
    """log.md's text with this build's entry added, if one is due; else as it is (None: no log)."""
    changed = report.written or report.removed or report.conflicts or report.errors
    if not changed and (current is not None or not report.pages):
        return current
    if current is None:
        current = "# Build log\n\nWhat each `wikic build` changed, newest last.\n"
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when or time.time()))
    lines = [
        "",
        f"## {stamp} build",
        "",
        f"- {report.ran} model actions ran, {report.cached} cached, {report.up_to_date} up to date"
        + (f", {report.failed} failed" if report.failed else ""),
    ]
    for label, items in (
        ("written", report.written),
        ("removed", report.removed),
        ("conflicts kept", report.conflicts),
    ):
        if items:
            shown = ", ".join(p.removeprefix(f"{WIKI}/") for p in items[:20])
            more = f" and {len(items) - 20} more" if len(items) > 20 else ""
            lines.append(f"- {label}: {shown}{more}")
    for err in report.errors[:20]:
        lines.append(f"- error: {err['where']}: {err['message'].splitlines()[0]}")
    return current.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
