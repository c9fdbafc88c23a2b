"""wiki/log.md: an entry for each build that changed the wiki, appended where the log is as
wikic left it (its size and mtime as state.db recorded them, ending as wikic ends it), else
read and written again whole (atomically), which keeps whatever else is there: a person's
edit, or the entry of a build killed while appending it, closed with a line saying so.

An append costs its entry: a rewrite cost the whole log, read, written and fsynced again on
every build (bench/README.md: 2,000 builds' entries). Either way the bytes are the same.
The log's record in state.db: its stat as wikic left it (what the next append trusts) and
the hash of what wikic last wrote there (the whole log, or the entry it appended; nothing
compares log.md's bytes with it)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from wikic.build.report import Report
from wikic.fsutil import atomic_write
from wikic.hashing import bytes_hash
from wikic.state import FileRecord, State

REL = "wiki/log.md"
HEAD = "# Build log\n\nWhat each `wikic build` changed, newest last.\n"
ENTRY = b"\n## "  # how every entry starts: a blank line, then its heading
CUT = "- (cut short: the build that wrote this entry was stopped while writing it)"
SHOWN = 20  # names listed per line of an entry


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
    path = root / REL
    changed = bool(report.written or report.removed or report.conflicts or report.errors)
    rec = state.files_of([REL]).get(REL)
    if scrub is None and rec is not None and _as_left(path, rec):
        if not changed:
            return False
        data = entry(report, when).encode("utf-8")
        _append(path, data)
        _record(state, path, data)
        return True
    return _rewrite(path, state, report, rec, changed, when, scrub)


def _rewrite(
    path: Path,
    state: State,
    report: Report,
    rec: FileRecord | None,
    changed: bool,
    when: float | None,
    scrub: Callable[[str], str] | None,
) -> bool:
    """The log read whole, its torn entry closed, this build's entry added where due, and written
    again whole where that changed it; a log edited by hand and left as it is, recorded as it is."""
    try:
        raw: bytes | None = path.read_bytes()
    except FileNotFoundError:
        raw = None
    if raw is None and not (changed or report.pages):
        return False
    # surrogateescape: bytes that are not UTF-8 (a hand edit's) are written back as they were
    current = None if raw is None else raw.decode("utf-8", "surrogateescape")
    text = HEAD if current is None else current
    if raw is not None and rec is not None and _torn(raw, rec.size):
        text += "\n" + CUT + "\n"
    if changed or current is None:
        text = text.rstrip("\n") + "\n" + entry(report, when)
    if scrub is not None:
        text = scrub(text)
    if text == current:
        assert raw is not None
        if rec is None or _stat(path) != (rec.size, rec.mtime_ns):
            _record(state, path, raw)  # a hand edit adopted: the next build appends after it
        return False
    data = text.encode("utf-8", "surrogateescape")
    atomic_write(path, data)
    _record(state, path, data)
    return True


def entry(report: Report, when: float | None) -> str:
    """This build's entry, from the blank line before its heading to its last line's end."""
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
            shown = ", ".join(p.removeprefix("wiki/") for p in items[:SHOWN])
            more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
            lines.append(f"- {label}: {shown}{more}")
    for err in report.errors[:SHOWN]:
        lines.append(f"- error: {err['where']}: {err['message'].splitlines()[0]}")
    return "\n".join(lines) + "\n"


def _as_left(path: Path, rec: FileRecord) -> bool:
    """log.md has the size and mtime wikic recorded, and ends with one line end, as wikic ends it
    (so that an append makes the bytes a rewrite would)."""
    if _stat(path) != (rec.size, rec.mtime_ns) or rec.size < 2:
        return False
    try:
        with path.open("rb") as f:
            f.seek(-2, os.SEEK_END)
            end = f.read(2)
    except OSError:
        return False
    return end[1:] == b"\n" and end[:1] != b"\n"


def _torn(raw: bytes, size: int) -> bool:
    """Bytes after what wikic recorded that start an entry and stop short of a line's end: an
    append killed midway (a whole entry left unrecorded is kept as it is)."""
    return len(raw) > size and raw[size:].startswith(ENTRY) and not raw.endswith(b"\n")


def _append(path: Path, data: bytes) -> None:
    """`data` at the end of the file, synced: one write call, which a kill does not split."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _record(state: State, path: Path, data: bytes) -> None:
    st = path.stat()
    state.set_file(FileRecord(REL, bytes_hash(data), st.st_size, st.st_mtime_ns))
