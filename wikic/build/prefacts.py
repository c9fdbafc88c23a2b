"""Each source's facts made ahead, while the build goes on: a full build reads and digests its
sources a chunk at a time (intake.py), and each chunk's facts (sourceplan.Memo.apart) need only
its own sources and their digests. A forked child makes them while this process digests the
next chunk, and writes them to an unnamed temporary file; the plan takes them from there as it
reaches each source (Memo.facts), the child waited for then. A file, not forked.py's pipe: a
child leaves as soon as its chunk is written, where one writing to a pipe nobody reads before
the plan would wait with what it made (100,000 sources: 24 children at once). Where no child can start (not on
Linux, another thread, one CPU, a chunk too small: forked.py) or one fails, the plan makes the
facts itself: the same rows in every case.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import signal
from functools import partial
from pathlib import Path
from typing import IO

from wikic import forked
from wikic.build.sourceplan import Settings, SourceInfo, made_apart
from wikic.spill import temporary

Made = dict[str, tuple[str, str]]  # source path -> its facts' key and text, as Memo.apart makes them


class _Child:
    """A child making a chunk's facts, and the file it writes them to."""

    def __init__(self, pid: int, file: IO[bytes], paths: set[str]) -> None:
        self.pid, self.file, self.paths = pid, file, paths


class FactsAhead:
    """Children making the facts of the chunks started, and what they made, taken once each."""

    def __init__(self, settings: Settings, folder: Path | None = None) -> None:
        self.settings, self.settings_fp = settings, settings.fingerprint()
        self.folder = folder  # where the children's files go (spill.temporary)
        self._children: list[_Child] = []
        self._made: Made = {}  # of the children waited for, not taken yet

    def start(self, infos: list[SourceInfo]) -> None:
        """A child making these sources' facts, where one can start and is worth it."""
        if forked.shares(len(infos)) < 2:
            return
        made = partial(made_apart, settings=self.settings, settings_fp=self.settings_fp)
        file = temporary(self.folder)
        try:
            pid = os.fork()
        except OSError:
            file.close()
            return
        if pid == 0:  # the child: the chunk's facts written, leaving without cleanup
            try:
                gc.disable()  # never a finalizer of the parent's garbage
                data = marshal.dumps({src.path: made(src) for src in infos})
                view = memoryview(data)
                while view:
                    view = view[os.write(file.fileno(), view) :]
                os._exit(0)
            finally:
                os._exit(1)
        self._children.append(_Child(pid, file, {src.path for src in infos}))

    def has(self, path: str) -> bool:
        """Whether a child makes (or made) the facts of this source, not taken yet."""
        return path in self._made or any(path in child.paths for child in self._children)

    def take(self, path: str) -> tuple[str, str] | None:
        """The source's facts as a child made them (its key, its text), once; None where no
        child made them (or it failed)."""
        if path not in self._made:
            for child in self._children:
                if path in child.paths:
                    self._made.update(_collect(child))  # interrupted: still listed, close() stops it
                    self._children.remove(child)
                    break
        return self._made.pop(path, None)

    def close(self) -> None:
        """Children still at work stopped, their files closed."""
        for child in self._children:
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGKILL)
            _reap(child.pid)
            child.file.close()
        self._children = []
        self._made = {}

    def __enter__(self) -> FactsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _collect(child: _Child) -> Made:
    """What the child made (nothing where it failed), the child waited for, its file closed."""
    try:
        _, status = _reap(child.pid)
        if status != 0:
            return {}
        child.file.seek(0)
        got = marshal.loads(child.file.read())
    except (EOFError, ValueError, TypeError, OSError):
        return {}
    finally:
        child.file.close()
    if not isinstance(got, dict):
        return {}
    return {path: made for path, made in got.items() if path in child.paths and made is not None}


def _reap(pid: int) -> tuple[int, int]:
    try:
        return os.waitpid(pid, 0)
    except ChildProcessError:
        return pid, -1
