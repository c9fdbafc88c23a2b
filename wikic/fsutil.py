"""Writing files so that a killed process leaves each one old or new, never half."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TMP_MARK = ".wikic-tmp-"
TMP_SUFFIX = ".part"  # not .md: nothing that lists pages (lint, ask, Obsidian) mistakes one for a page
SYNC_THREADS = 16  # fsyncs in flight at once: they wait on the disk, whose journal commits them together


def temp_path(path: Path) -> Path:
    """The temporary file beside `path` that this process writes before the rename."""
    return path.with_name(f"{TMP_MARK}{os.getpid()}-{path.name}{TMP_SUFFIX}")


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, fsync, then rename over it.

    A process killed at any moment leaves `path` as it was or as `data`; what
    it can leave besides is a temporary file, which `remove_stale_temps` clears.
    """
    atomic_write_many([(path, data)])


def atomic_write_many(
    files: list[tuple[Path, bytes]], renamed: Callable[[Path, bytes], None] | None = None
) -> None:
    """`atomic_write` for many files at once: every temporary file is written and
    fsynced first, SYNC_THREADS at a time (one after another, each fsync waits a
    journal commit: 3-4 ms here, 37 s for 10,000 pages; together they share
    commits), then each is renamed over its file in order, `renamed` called after
    each. A failure before the renames changes no file."""
    if not files:
        return
    for path in {path.parent for path, _ in files}:
        path.mkdir(parents=True, exist_ok=True)
    temps = [temp_path(path) for path, _ in files]
    try:
        if len(files) == 1:
            _write_synced(temps[0], files[0][1])
        else:
            with ThreadPoolExecutor(min(SYNC_THREADS, len(files))) as pool:
                list(pool.map(_write_synced, temps, [data for _, data in files]))
        for tmp, (path, data) in zip(temps, files, strict=True):
            os.replace(tmp, path)
            if renamed is not None:
                renamed(path, data)
    except BaseException:
        for tmp in temps:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise


def _write_synced(tmp: Path, data: bytes) -> None:
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def remove_stale_temps(folder: Path, listed: Iterable[str] | None = None) -> None:
    """Temporary files left by a killed process are never anybody's work. `listed`: every
    entry below `folder` as a walk just named them, relative to its parent (snapshot.walk's
    lines): only those of a temporary file's name are looked at, not the folder again."""
    if listed is None:
        if folder.is_dir():
            for tmp in folder.rglob(f"{TMP_MARK}*"):
                tmp.unlink(missing_ok=True)
        return
    for line in listed:
        if TMP_MARK in line and (rel := line.partition("\t")[0]).rpartition("/")[2].startswith(TMP_MARK):
            (folder.parent / rel).unlink(missing_ok=True)
