"""Each source's facts made ahead, while the build goes on: a full build reads and digests its
sources a chunk at a time (intake.py), and each chunk's facts (sourceplan.Memo.apart) need only
its own sources and their digests. A forked child makes them while this process digests the
next chunk, and writes them to an unnamed temporary file; the plan takes them from there as it
reaches each source (Memo.facts), the child waited for then. A file, not forked.py's pipe: a
child leaves as soon as its chunk is written, where one writing to a pipe nobody reads before
the plan would wait with what it made (100,000 sources: 24 children at once). Where no child can start (not on
Linux, another thread, one CPU, a chunk too small: forked.py) or one fails, the plan makes the
facts itself: the same rows in every case.

Half of a source's facts is its names and terms (candidates.source_names), made from its
lines alone: another child makes a chunk's while this process digests it (the first chunk), or
the chunk before it (the others), so that the child making its facts, or the plan for the last
chunk's, finds them made (sourceplan.source_facts). Made a chunk ahead, it also makes the hints
each part's digest request offers (digest.part_hints), and the requests themselves with their
keys (digest.part_requests), which this process would otherwise make as it digests.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import os
import signal
from collections.abc import Callable, Collection
from functools import partial
from pathlib import Path
from typing import IO, Any

from wikic import forked
from wikic.build.candidates import source_names
from wikic.build.digest import Made as Requests
from wikic.build.digest import part_hints
from wikic.build.sourceplan import Settings, SourceInfo, made_apart, split_lines
from wikic.spill import temporary

Made = dict[str, tuple[str, str]]  # source path -> its facts' key and text, as Memo.apart makes them
# a source's digest requests made ahead, of its path and its parts' hints (digest.part_requests)
Requesting = Callable[[str, list[list[str]]], Requests | None]


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
        self._naming: list[_Child] = []  # the children making chunks' names (hints, requests)
        # source path -> its names (source_names), made ahead, of the sources whose facts are
        # not made yet: the chunks' being digested, the last chunk's for the plan
        self.names: dict[str, str] = {}
        self.hints: dict[str, list[list[str]]] = {}  # source path -> digest.part_hints, made ahead
        self.requests: dict[str, Requests] = {}  # source path -> digest.part_requests, made ahead

    def name(
        self,
        paths: list[str],
        texts: list[str],
        part_lines: int | None = None,
        requests: Requesting | None = None,
    ) -> None:
        """A child making these sources' names (their texts), and with `part_lines` their
        digests' hints (digest.part_hints) and `requests` of them (digest.part_requests), where
        one can start and is worth it."""
        if forked.shares(len(paths)) >= 2:
            made = partial(_names, part_lines, requests)
            child = _fork(made, (paths, texts), set(paths), self.folder)
            if child is not None:
                self._naming.append(child)

    def named(self, paths: Collection[str] | None = None) -> None:
        """The names (and hints and requests) made of these sources (None: of all), their
        children waited for (once)."""
        for child in [c for c in self._naming if paths is None or not c.paths.isdisjoint(paths)]:
            self._naming.remove(child)
            for path, (names, hints, requests) in _collect(child).items():
                self.names[path] = names
                if hints is not None:
                    self.hints[path] = hints
                if requests is not None:
                    self.requests[path] = requests

    def start(self, infos: list[SourceInfo]) -> None:
        """A child making these sources' facts (with the names made of them), where one can
        start and is worth it."""
        self.named({src.path for src in infos})
        if forked.shares(len(infos)) < 2:
            return
        names = {src.path: self.names.pop(src.path, None) for src in infos}
        made = partial(made_apart, settings=self.settings, settings_fp=self.settings_fp)
        facts = partial(_facts, made, names)
        child = _fork(facts, infos, {src.path for src in infos}, self.folder)
        if child is None:
            self.names.update((path, n) for path, n in names.items() if n is not None)  # the plan's
        else:
            self._children.append(child)

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
        for child in [*self._children, *self._naming]:
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGKILL)
            _reap(child.pid)
            child.file.close()
        self._children, self._naming = [], []
        self._made, self.names, self.hints, self.requests = {}, {}, {}, {}

    def __enter__(self) -> FactsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _facts(
    made: Callable[..., tuple[str, str] | None], names: dict[str, str | None], infos: list[SourceInfo]
) -> dict[str, tuple[str, str] | None]:
    return {src.path: made(src, names=names[src.path]) for src in infos}


def _names(
    part_lines: int | None, requests: Requesting | None, chunk: tuple[list[str], list[str]]
) -> dict[str, tuple[str, list[list[str]] | None, Requests | None]]:
    """A chunk's (its paths and texts) names, each source's with its parts' hints where
    `part_lines` is given and its requests where `requests` makes them (else None): what
    FactsAhead.named takes apart."""
    made = {}
    for path, text in zip(*chunk, strict=True):
        lines = split_lines(text)
        hints = None if part_lines is None else part_hints(lines, part_lines)
        asked = None if hints is None or requests is None else requests(path, hints)
        made[path] = (source_names(lines), hints, asked)
    return made


def _fork(
    fn: Callable[[Any], dict[str, Any]], arg: Any, paths: set[str], folder: Path | None
) -> _Child | None:
    """A child writing fn(arg) (a dict) marshalled to a temporary file, leaving without cleanup;
    None where none could start."""
    file = temporary(folder)
    try:
        pid = os.fork()
    except OSError:
        file.close()
        return None
    if pid == 0:  # the child
        try:
            gc.disable()  # never a finalizer of the parent's garbage
            data = marshal.dumps(fn(arg))
            view = memoryview(data)
            while view:
                view = view[os.write(file.fileno(), view) :]
            os._exit(0)
        finally:
            os._exit(1)
    return _Child(pid, file, paths)


def _collect(child: _Child) -> dict[str, Any]:
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
