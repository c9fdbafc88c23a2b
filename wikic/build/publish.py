"""Putting assembled pages into wiki/: atomic writes, removals, log.md, and the
rule that a page changed by hand is never overwritten or deleted silently."""

from __future__ import annotations

import os
import time
from pathlib import Path

from wikic.build.report import Report
from wikic.fsutil import atomic_write, atomic_write_many
from wikic.hashing import bytes_hash
from wikic.state import FileRecord, State
from wikic.wiki.page import is_safe_file_name, sealed_intact

WIKI = "wiki"
LOG = "log.md"


def _record(state: State, rel: str, path: Path, data: bytes) -> None:
    st = path.stat()
    state.set_file(FileRecord(rel, bytes_hash(data), st.st_size, st.st_mtime_ns))


def outputs_intact(state: State, root: Path) -> bool:
    """True when every file wikic wrote is still exactly as it left it (by stat)."""
    base = str(root)
    for rec in state.files().values():
        try:
            st = os.stat(os.path.join(base, rec.path))  # not pathlib: 10,000 of these in a no-op
        except OSError:
            return False
        if st.st_size != rec.size or st.st_mtime_ns != rec.mtime_ns:
            return False
    return True


def publish(
    root: Path,
    outputs: dict[str, str],
    keep: set[str],
    state: State,
    report: Report,
    force: bool = False,
) -> None:
    """Write what changed, remove pages no longer planned (except `keep`), record it all.

    Only plain page names directly in wiki/ are written or removed: a name that
    would reach elsewhere (from a tampered state.db, say) is an error, never a write.
    """
    records = {rel: rec for rel, rec in state.files().items() if _ours(rel)}
    wiki = root / WIKI
    changed: list[tuple[Path, bytes]] = []
    for name, text in sorted(outputs.items()):
        if not is_safe_file_name(name):
            report.error(name, "refused to write a page with this name: it is not a plain file name in wiki/")
            continue
        rel, path, data = f"{WIKI}/{name}", wiki / name, text.encode("utf-8")
        try:
            disk: bytes | None = path.read_bytes()
        except FileNotFoundError:
            disk = None
        rec = records.get(rel)
        if disk == data:
            if rec is None or rec.hash != bytes_hash(data):
                _record(state, rel, path, data)  # adopt a page that is already what we would write
            elif rec.mtime_ns != path.stat().st_mtime_ns:
                _record(state, rel, path, data)
            continue
        if (
            disk is not None
            and not force
            and (rec is None or bytes_hash(disk) != rec.hash)
            and not sealed_intact(disk.decode("utf-8", "replace"))
        ):
            report.conflicts.append(rel)
            continue
        changed.append((path, data))

    def written(path: Path, data: bytes) -> None:
        rel = f"{WIKI}/{path.name}"
        _record(state, rel, path, data)
        report.written.append(rel)

    atomic_write_many(changed, written)
    for rel, rec in sorted(records.items()):
        name = rel.removeprefix(f"{WIKI}/")
        if name in outputs or name == LOG or rel in keep:
            continue
        path = root / rel
        try:
            disk_hash = bytes_hash(path.read_bytes())
        except FileNotFoundError:
            state.remove_file(rel)
            continue
        if disk_hash != rec.hash and not force and not sealed_intact(path.read_text("utf-8", "replace")):
            report.conflicts.append(rel)
            continue
        path.unlink()
        state.remove_file(rel)
        report.removed.append(rel)


def _ours(rel: str) -> bool:
    """A record of a file that wikic may have written: wiki/<plain name>."""
    folder, _, name = rel.partition("/")
    return folder == WIKI and is_safe_file_name(name)


def append_log(root: Path, state: State, report: Report, when: float | None = None) -> None:
    """One entry in log.md for a build that changed the wiki, or that finds a wiki
    without its log (a build killed before it wrote log.md, whose pages this one adopted)."""
    path = root / WIKI / LOG
    changed = report.written or report.removed or report.conflicts or report.errors
    if not changed and (path.exists() or not report.pages):
        return
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
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
    data = (current.rstrip("\n") + "\n" + "\n".join(lines) + "\n").encode("utf-8")
    atomic_write(path, data)
    _record(state, f"{WIKI}/{LOG}", path, data)
