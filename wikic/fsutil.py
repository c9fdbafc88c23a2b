"""Writing files so that a killed process leaves each one old or new, never half."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from wikic.pool import run_all

TMP_MARK = ".wikic-tmp-"
TMP_SUFFIX = ".part"  # not .md: nothing that lists pages (lint, ask, Obsidian) mistakes one for a page
SYNC_THREADS = 16  # fsyncs in flight at once: they wait on the disk, whose journal commits them together
# From this many files at once, one syncfs per file system syncs them all, not an fsync each (a
# fresh 10,000-source build: 35.3-35.5 s of CPU against 37.6-39.2 s); below, it would also wait
# for whatever else is dirty on that file system, more than the few files' own fsyncs.
SYNC_ALL = 64


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
    synced first (SYNC_ALL or more: all written, then one syncfs per file system;
    fewer: fsynced SYNC_THREADS at a time, as one after another each fsync waits a
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
        elif len(files) >= SYNC_ALL and _syncfs is not None:
            for tmp, (_, data) in zip(temps, files, strict=True):
                _write(tmp, data)
            _sync_file_systems({tmp.parent for tmp in temps})
        else:
            pairs = [(tmp, data) for tmp, (_, data) in zip(temps, files, strict=True)]
            run_all(lambda pair: _write_synced(*pair), pairs, SYNC_THREADS)
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


def _write(tmp: Path, data: bytes) -> None:
    with open(tmp, "wb") as fh:
        fh.write(data)


def _load_syncfs() -> Callable[[int], int] | None:
    """Linux's syncfs(2), or None where there is none (each file is then fsynced)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        call = libc.syncfs
    except (OSError, AttributeError):
        return None
    call.argtypes, call.restype = [ctypes.c_int], ctypes.c_int
    return call


_syncfs = _load_syncfs()


def _sync_file_systems(folders: set[Path]) -> None:
    """Every file written in `folders` on disk: one syncfs per file system they are on. A
    write-back error (EIO, ENOSPC) is raised as OSError, as fsync raises it."""
    assert _syncfs is not None
    devices: dict[int, Path] = {}
    for folder in sorted(folders):
        devices.setdefault(folder.stat().st_dev, folder)
    for folder in devices.values():
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if _syncfs(fd) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"syncfs: {os.strerror(err)}", str(folder))
        finally:
            os.close(fd)


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
