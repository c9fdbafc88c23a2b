"""Whether state.db needs its full check when opened: `PRAGMA quick_check` reads every
page of the database (0.3-0.5 s at 10,000 sources, seconds at 100,000), and every build
that does work opened it. A process that checked the database (or found it as such a
process left it) and then closed it cleanly records the file's stat beside it, in
`state.db.checked`; the next open skips the check while the file is exactly as that left
it, with no WAL or journal beside it (another writer, or one killed mid-write). Anything
else, and any damage SQLite finds while the database is in use, means the full check."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

SUFFIX = ".checked"


def _record_path(path: Path) -> str:
    return f"{path}{SUFFIX}"


def _stat_line(path: Path) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"1 {st.st_dev} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n"


def _sidecars(path: Path) -> bool:
    return any(os.path.exists(f"{path}{side}") for side in ("-wal", "-journal"))


def as_left(path: Path) -> bool:
    """True when state.db is as a process that had checked it left it. Ask before opening
    it: a connection in WAL mode makes the -wal file beside it."""
    if _sidecars(path):
        return False
    try:
        with open(_record_path(path), encoding="ascii") as fh:
            recorded = fh.read()
    except (OSError, ValueError):
        return False
    return recorded == _stat_line(path)


def record(path: Path) -> None:
    """After closing a database this process checked (or trusted): its stat, for the next open.
    While another connection keeps a WAL beside it, the file alone is not the database: forget."""
    line = None if _sidecars(path) else _stat_line(path)
    if line is None:
        forget(path)
        return
    try:
        with open(_record_path(path), "w", encoding="ascii") as fh:
            fh.write(line)
    except OSError:
        forget(path)


def forget(path: Path) -> None:
    """The next open checks in full (damage found, the database moved aside or replaced)."""
    with contextlib.suppress(OSError):
        os.unlink(_record_path(path))
