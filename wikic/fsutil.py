"""Writing files so that a killed process leaves each one old or new, never half."""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

TMP_MARK = ".wikic-tmp-"
TMP_SUFFIX = ".part"  # not .md: nothing that lists pages (lint, ask, Obsidian) mistakes one for a page


def temp_path(path: Path) -> Path:
    """The temporary file beside `path` that this process writes before the rename."""
    return path.with_name(f"{TMP_MARK}{os.getpid()}-{path.name}{TMP_SUFFIX}")


def atomic_write(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, fsync, then rename over it.

    A process killed at any moment leaves `path` as it was or as `data`; what
    it can leave besides is a temporary file, which `remove_stale_temps` clears.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def remove_stale_temps(folder: Path) -> None:
    """Temporary files left by a killed process are never anybody's work."""
    if folder.is_dir():
        for tmp in folder.rglob(f"{TMP_MARK}*"):
            tmp.unlink(missing_ok=True)


def bytes_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def file_hash(path: Path) -> str | None:
    try:
        return bytes_hash(path.read_bytes())
    except FileNotFoundError:
        return None
