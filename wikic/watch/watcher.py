"""`wikic watch`: build, then rebuild after each burst of changes to sources/,
schema.yaml or the project's prompts/, one build at a time, until Ctrl-C or SIGTERM.

Three parts, each testable alone: `changes.relevant` (which paths can change a
build), `changes.Coalescer` (when a burst of changes has settled, on an injectable
clock), and `Watcher` here (the observer, the loop, and surviving whatever a build
raises).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserver

from wikic.backends import Backend, make_backend
from wikic.build.report import Progress, Report
from wikic.build.run import BuildOptions, build
from wikic.config import Schema
from wikic.errors import WikicError, interrupted, refused
from wikic.fsutil import TMP_MARK
from wikic.project import Project
from wikic.prompts import PROJECT_DIR
from wikic.sources.scan import SOURCES_DIR
from wikic.watch.changes import ChangeQueue, Coalescer, relevant

# Opened and closed-without-writing are left out: the build reads every source.
EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


@dataclass
class WatchOptions:
    build: BuildOptions = field(default_factory=BuildOptions)
    debounce: float = 0.3
    poll: bool = False
    poll_interval: float = 1.0


@dataclass
class Rebuild:
    """One build the watcher ran: what set it off and what came of it."""

    number: int
    changed: list[str]
    report: Report | None = None
    named: str = ""  # the change the line names: one still on disk (not an editor's temporary file)
    error: str | None = None
    exit_code: int = 0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"build": self.number, "changed": self.changed}
        if self.report is not None:
            data.update(self.report.to_json())
        else:
            data.update({"error": self.error, "exit_code": self.exit_code})
        return data

    def line(self) -> str:
        stamp = time.strftime("%H:%M:%S")
        what = _describe(self.changed, self.named) if self.number > 1 else "initial build"
        head = f"{stamp} build {self.number} ({what})"
        report = self.report
        if report is None:
            return f"{head} failed: {(self.error or '').splitlines()[0]}; still watching"
        if not (
            report.ran
            or report.cached
            or report.failed
            or report.written
            or report.removed
            or report.conflicts
            or report.errors
        ):
            return (
                f"{head}: nothing to do ({report.pages} pages up to date); {report.seconds:.2f}s"
                + self._lint()
            )
        text = (
            f"{head}: {report.ran} ran, {report.cached} cached, {report.up_to_date} up to date"
            + (f", {report.failed} failed" if report.failed else "")
            + f"; {len(report.written)} written, {len(report.removed)} removed"
        )
        if report.conflicts:
            text += f", {len(report.conflicts)} conflict(s) kept"
        if report.errors:
            text += f", {len(report.errors)} error(s)"
        return text + f"; {report.calls} model calls, {report.seconds:.2f}s" + self._lint()

    def _lint(self) -> str:
        """The build's closing lint summary, as `wikic build` prints it."""
        return f"; {self.report.lint_line}" if self.report is not None and self.report.lint_line else ""

    def details(self) -> list[str]:
        """The lines `wikic build` would print besides its summary."""
        if self.report is None:
            return [f"wikic: error: {self.error}"] if self.error and "\n" in self.error else []
        r = self.report
        return (
            [f"explain: {e['action']}: {e['reason']}" for e in r.explain]
            + [f"warning: {w}" for w in r.warnings]
            + [
                f"conflict: {rel} was edited by hand; kept (run `wikic build --force` to overwrite)"
                for rel in r.conflicts
            ]
            + [f"error: {e['where']}: {e['message']}" for e in r.errors]
        )


def still_there(root: Path, changed: list[str]) -> str:
    """The first changed path still on disk: sed -i and some editors write a temporary file
    beside the one saved and rename it over, and that file is not what the user changed."""
    return next((rel for rel in changed if (root / rel).exists()), "")


def _describe(changed: list[str], named: str = "") -> str:
    if not changed:
        return "no change"
    more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
    return (named or changed[0]) + more


class _Backends:
    """Keeps one backend across builds while schema.yaml's `model` section is
    unchanged, so that a local model is loaded once, not once per save."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._key = ""
        self._backend: Backend | None = None

    def __call__(self, schema: Schema) -> Backend:
        key = schema.model.model_dump_json()
        if self._backend is None or key != self._key:
            self._backend = make_backend(schema.model, self.root)
            self._key = key
        return self._backend


class _Handler(FileSystemEventHandler):
    def __init__(self, on_event: Callable[[FileSystemEvent], None]) -> None:
        self.on_event = on_event

    def dispatch(self, event: FileSystemEvent) -> None:
        self.on_event(event)


class Watcher:
    """Builds, then rebuilds after each settled burst of relevant changes."""

    def __init__(
        self,
        project: Project,
        options: WatchOptions,
        emit: Callable[[Rebuild], None],
        say: Callable[[str], None],
        progress: Progress,
        native: Callable[[], BaseObserver] = Observer,
    ) -> None:
        self.project, self.options = project, options
        self.native = native
        self.emit, self.say, self.progress = emit, say, progress
        self.queue = ChangeQueue(Coalescer(options.debounce, max_wait=max(5.0, 10 * options.debounce)))
        self.backends = _Backends(project.root)
        self.handler = _Handler(self._on_event)
        self.observer: BaseObserver | None = None
        self.mode = "polling" if options.poll else "native"
        self._watches: dict[str, ObservedWatch] = {}
        self._rewatch = threading.Event()
        self.builds = 0

    # --- the loop -------------------------------------------------------------
    def run(self) -> int:
        """Watch until interrupted; 0 on Ctrl-C or SIGTERM, whatever the builds did."""
        try:
            with _terminate_as_interrupt():
                self._start()
                self.say(f"watching {self.project.root} ({self.mode}); Ctrl-C to stop")
                self._rebuild([])
                while (changed := self.queue.wait()) is not None:
                    self._rebuild(changed)
        except (KeyboardInterrupt, Exception) as exc:
            if not interrupted(exc):  # (a signal while waiting for a change can come out as another error)
                raise
        finally:
            with _signals_ignored():
                self._stop()
        self.say("wikic watch: stopped")
        return 0

    def stop(self) -> None:
        """End `run` from another thread, once the build under way (if any) is done."""
        self.queue.close()

    def _rebuild(self, changed: list[str]) -> None:
        if self._rewatch.is_set():
            self._rewatch.clear()
            self._schedule()
        self.builds += 1
        result = Rebuild(self.builds, changed)
        result.named = still_there(self.project.root, changed)
        try:  # the lock is taken per build: a `wikic build` by hand can run between two of ours
            result.report = build(self.project, self.options.build, self.progress, self.backends, self.say)
        except MemoryError:
            raise
        except Exception as exc:
            if interrupted(exc):  # the stop signal, come out as another error (errors.interrupted)
                raise KeyboardInterrupt from exc
            if isinstance(exc, WikicError):
                result.error, result.exit_code = str(exc), exc.exit_code
            else:  # a bug in wikic must not end a day-long watch; a full disk is not a bug
                said = refused(exc) if isinstance(exc, OSError) else None
                result.error = (
                    str(said)
                    if said
                    else f"internal error (please report it): {exc!r}\n{traceback.format_exc()}"
                )
                result.exit_code = 1
        self.progress.end_line()
        self.emit(result)

    # --- events ---------------------------------------------------------------
    def _on_event(self, event: FileSystemEvent) -> None:
        paths = [event.src_path]
        if isinstance(event, (FileMovedEvent, DirMovedEvent)) and event.dest_path:
            paths.append(event.dest_path)
        changed = [rel for rel in map(self._relative, paths) if rel is not None and relevant(rel)]
        if not changed:
            return
        if any(rel in (SOURCES_DIR, PROJECT_DIR) for rel in changed):
            self._rewatch.set()  # the folder itself came or went: its watch must follow
        self.queue.put(changed)

    def _relative(self, path: str | bytes) -> str | None:
        try:
            return Path(os.fsdecode(path)).relative_to(self.project.root).as_posix()
        except ValueError:
            return None

    # --- the observer ---------------------------------------------------------
    def _start(self) -> None:
        if not self.options.poll:
            try:
                self.observer = self.native()
                self._schedule()
                self.observer.start()
                return
            except OSError as exc:
                self.say(
                    f"warning: cannot watch natively ({exc}); polling every "
                    f"{self.options.poll_interval:g}s instead (use --poll to ask for it)"
                )
                self._stop()
                self.mode = "polling"
        interval = self.options.poll_interval
        coalescer = self.queue.coalescer  # a burst spread over two polls must still read as one
        coalescer.quiet = max(coalescer.quiet, interval * 1.5)
        coalescer.max_wait = max(coalescer.max_wait, 10 * coalescer.quiet)
        self.observer = PollingObserver(timeout=interval)
        self._schedule()
        self.observer.start()

    def _schedule(self) -> None:
        """Watch the root (schema.yaml, and sources/ or prompts/ coming and going),
        all of sources/, and prompts/; never wiki/ or .wikic/, which builds write.
        sources/ and prompts/ are watched afresh each time: a folder deleted and
        made again is a new folder, even if it reuses the old inode number."""
        assert self.observer is not None
        root = self.project.root
        folders = {str(root): False, str(root / SOURCES_DIR): True, str(root / PROJECT_DIR): False}
        for path, recursive in folders.items():
            old = self._watches.pop(path, None)
            if old is not None and path == str(root):
                self._watches[path] = old
                continue
            if old is not None:
                with contextlib.suppress(KeyError, OSError, RuntimeError):
                    self.observer.unschedule(old)
            if not os.path.isdir(path):
                continue
            try:
                self._watches[path] = self.observer.schedule(
                    self.handler, path, recursive=recursive, event_filter=EVENTS
                )
            except OSError as exc:  # gone again already, or out of inotify watches
                if self.observer.is_alive():
                    self.say(
                        f"warning: cannot watch {path}: {exc}; changes there are seen only "
                        "when another change triggers a build (try --poll)"
                    )
                else:
                    raise

    def _stop(self) -> None:
        if self.observer is not None:
            with contextlib.suppress(Exception):
                self.observer.stop()
                if self.observer.is_alive():
                    self.observer.join(timeout=5)
            self.observer = None
        self._watches.clear()
        for tmp in self.project.wiki_dir.glob(f"{TMP_MARK}{os.getpid()}-*"):
            tmp.unlink(missing_ok=True)  # an atomic write cut short by the signal


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM ends the watch the way Ctrl-C does (only the main thread gets signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    """A second Ctrl-C must not cut the clean-up short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
