"""What `wikic watch` reacts to: which paths can change a build (`relevant`, editor
temporary files never), and when a burst of changes has settled (`Coalescer`, on an
injectable clock; `ChangeQueue` shares it between the observer's thread and the loop)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from wikic.project import SCHEMA_FILE
from wikic.prompts import PROJECT_DIR
from wikic.sources.scan import SOURCES_DIR

TEMP_SUFFIXES = (
    ".swp",
    ".swo",
    ".swx",
    ".swn",
    "~",
    ".tmp",
    ".temp",
    ".part",
    ".crdownload",
    ".bak",
    ".orig",
)
TEMP_NAMES = {"4913", "5036"}  # vim's probe files for whether a folder is writable


def is_temp_name(name: str) -> bool:
    """Editor swap, backup, lock and probe files: never a source."""
    return (
        name.startswith(".")
        or name in TEMP_NAMES
        or name.endswith(TEMP_SUFFIXES)
        or (name.startswith("#") and name.endswith("#"))
    )


def relevant(rel: str) -> bool:
    """Can a change at this project-relative posix path change what a build makes?"""
    parts = PurePosixPath(rel).parts
    if not parts or parts[0] in ("..", "/"):
        return False
    if parts == (SCHEMA_FILE,):
        return True
    if parts[0] == SOURCES_DIR:
        return not any(is_temp_name(p) for p in parts[1:])
    if parts[0] == PROJECT_DIR:
        return len(parts) == 1 or (
            len(parts) == 2 and parts[1].endswith(".j2") and not is_temp_name(parts[1])
        )
    return False  # wiki/, .wikic/, .git/, anything else in the root


class Coalescer:
    """Collects changed paths and says when the burst has settled: `quiet`
    seconds after the last change, or `max_wait` after the first, if changes
    never stop (a log file appended to inside sources/)."""

    def __init__(self, quiet: float, max_wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self.max_wait = max(max_wait, quiet)
        self.clock = clock
        self._paths: dict[str, None] = {}
        self._first: float | None = None
        self._last = 0.0

    def add(self, paths: Iterable[str]) -> None:
        now = self.clock()
        if self._first is None:
            self._first = now
        self._last = now
        self._paths.update(dict.fromkeys(paths))

    def due_in(self) -> float | None:
        """Seconds until a build is due; 0 when due now; None when nothing changed."""
        if self._first is None:
            return None
        now = self.clock()
        return max(0.0, min(self._last + self.quiet, self._first + self.max_wait) - now)

    def take(self) -> list[str]:
        """The changed paths, sorted, and start afresh."""
        paths = sorted(self._paths)
        self._paths.clear()
        self._first = None
        return paths


class ChangeQueue:
    """A Coalescer shared between the observer's thread (put) and the loop (wait)."""

    def __init__(self, coalescer: Coalescer) -> None:
        self.coalescer = coalescer
        self._cond = threading.Condition()
        self._closed = False

    def put(self, paths: list[str]) -> None:
        with self._cond:
            self.coalescer.add(paths)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def wait(self) -> list[str] | None:
        """Block until a burst has settled, then return its paths; None once closed."""
        with self._cond:
            while not self._closed:
                due = self.coalescer.due_in()
                if due == 0.0:
                    return self.coalescer.take()
                # A bounded wait, so that a signal is never held up for long.
                self._cond.wait(1.0 if due is None else min(due, 1.0))
            return None
