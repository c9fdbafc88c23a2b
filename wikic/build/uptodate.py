"""The no-op check of a build: is everything a build (and the lint summary after
it) reads as the last clean build left it? Answered from stats alone.

The project's stat fingerprint (wikic/snapshot.py: sources/, schema.yaml's
bytes, the templates, wiki/) and the model file, compared with the mark recorded
after the last clean build. It imports only the standard library and wikic's
light modules, so that a build with nothing to do never pays for pydantic, jinja2
or rapidfuzz. Anything unreadable or unexpected means "not known to be up to
date", and the full build (pipeline.py, whose own clean check stays the
authority) decides.

The mark is at least as strict as the pipeline's "clean" check, and also covers
what the lint summary's cache key covers, so its counts are reused with it. A
build that does work forgets the mark first; it is recorded again only after a
build that left the wiki clean, from stats taken before that build (inputs) and
right after it (wiki/), so that an edit made meanwhile is seen by the next build.
"""

from __future__ import annotations

import contextlib
import gc
import json
import marshal
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikic import forked, snapshot
from wikic.errors import WikicError
from wikic.project import Project
from wikic.state.connection import peek_meta
from wikic.state.schema import Meta

if TYPE_CHECKING:  # not at run time: the no-op path loads neither dataclasses nor the tables
    from wikic.build.report import Report
    from wikic.state import State


def _model_file(model: dict[str, Any] | None, root: Path) -> list[Any] | None:
    """The llama backend's model file as [path, size, mtime_ns], resolved as the build does."""
    if not model:
        return None
    from wikic.backends.llama_path import resolve_model_path  # light: no pydantic

    path = resolve_model_path(model["name"], root)
    st = path.stat()
    return [str(path), st.st_size, st.st_mtime_ns]


class Fresh:
    """What a build with nothing to do reports, as recorded after the last clean build.

    It answers what `wikic build` prints of a report (`to_json`, `summary`, the lists of
    notes, all empty) without loading `Report`, a dataclass: the CLI prints a no-op from
    it. `report()` is the same as a `Report`, for Python callers (a test keeps both equal)."""

    ok = True
    dry_run = False
    waiting = 0
    explain: tuple[dict[str, str], ...] = ()
    would_run: tuple[dict[str, Any], ...] = ()
    warnings: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    errors: tuple[dict[str, str], ...] = ()

    def __init__(
        self,
        sources: int,
        pages: int,
        actions: int,
        lint: dict[str, int],
        lint_line: str,  # lint.counts_line(lint), kept so that printing it needs no lint import
        started: float = 0.0,
    ) -> None:
        self.sources = sources
        self.pages = pages
        self.actions = actions
        self.lint = lint
        self.lint_line = lint_line
        self.seconds = time.monotonic() - started

    def to_json(self) -> dict[str, Any]:
        """`Report.to_json()` of a build that found nothing to do."""
        return {
            "sources": self.sources,
            "pages": self.pages,
            "actions": {"ran": 0, "cached": 0, "up_to_date": self.actions, "failed": 0},
            "llm": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0},
            "written": [],
            "removed": [],
            "conflicts": [],
            "errors": [],
            "warnings": [],
            "seconds": round(self.seconds, 3),
            "nothing_to_do": True,
            "lint": self.lint,
        }

    def summary(self) -> str:
        """`Report.summary()` of a build that found nothing to do."""
        return f"wikic: no work to do ({self.pages} pages up to date, {self.seconds:.2f}s)"

    def report(self) -> Report:
        from wikic.build.report import Report

        return Report(
            sources=self.sources,
            pages=self.pages,
            up_to_date=self.actions,
            nothing_to_do=True,
            seconds=self.seconds,
            lint=self.lint,
            lint_line=self.lint_line,
        )


class WikiDigest:
    """wiki/'s digest by stat (None: some entry could not be stat'ed), walked in a forked
    child while this process walks the inputs: the two walks are most of a no-op build and
    each is mostly waiting on stat calls, so on two cores the no-op takes half as long.
    Forks only where that is safe (Linux, no other thread); else `result()` walks here.
    The child says the digest, then, asked for it (`tree()`), the whole walk with its stats: a
    build that does work takes wiki/ as the child found it rather than walking it again."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.pid: int | None = None
        self.pipe: int | None = None
        self.ask: int | None = None  # a byte written here asks the child for its walk
        self.said = b""  # what the child said so far
        self.ask_sent = False
        if sys.platform != "linux" or forked.threads() > 1:
            return
        try:
            read, write = os.pipe()
            asked, ask = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:  # no process to spare: walked here
            for fd in (read, write, asked, ask):
                os.close(fd)
            return
        if pid == 0:  # the child: walk, say the digest, the walk if asked, leave without cleanup
            try:
                gc.disable()  # never a finalizer of the parent's garbage (a temp folder's, say)
                os.close(read)
                os.close(ask)
                _child(project, write, asked)
            finally:
                os._exit(0)
        os.close(write)
        os.close(asked)
        self.pid, self.pipe, self.ask = pid, read, ask

    def result(self, keep: bool = False) -> str | None:
        """The digest; the child stopped unless asked to `keep` it for `tree()`."""
        if self.pid is None or self.pipe is None:
            tree = snapshot.wiki(self.project, keep_stats=False)  # only its digest is compared
            return tree.digest() if tree.complete else None
        self._read(DIGEST)
        if not keep:
            self.cancel()
        answer = self.said[:DIGEST].decode("ascii", "replace")
        return answer if len(answer) == DIGEST and answer != "-" * DIGEST else None  # or it failed

    def asked(self) -> bool:
        """Asks the child for its walk, to be read by `tree()`: it reads its stats back and
        sends them while this process goes on (imports the build, opens the state). False
        where there is no child to ask (it is stopped then)."""
        if self.pid is None or self.pipe is None or self.ask is None:
            return False
        try:
            os.write(self.ask, b"1")
        except OSError:
            self.cancel()
            return False
        self.ask_sent = True
        return True

    def tree(self) -> snapshot.Tree | None:
        """wiki/ as the child walked it (None: no child, it failed, or a line of its walk cannot
        be read back without doubt: walk it again). Stops it."""
        if self.pid is None or self.pipe is None or self.ask is None:
            return None
        try:
            if not self.ask_sent:
                os.write(self.ask, b"1")
            self._read(None)
            lines, plain, complete = marshal.loads(self.said[DIGEST:])
            digest = self.said[:DIGEST].decode("ascii")
        except (OSError, ValueError, EOFError, TypeError):
            return None
        finally:
            self.cancel()
        if not plain:  # a line whose stat cannot be read back without doubt (a link's)
            return None
        return snapshot.Tree(lines, None, complete, None if digest == "-" * DIGEST else digest, lazy=True)

    def _read(self, upto: int | None) -> None:
        """What the child says, up to `upto` bytes in all (None: all of it)."""
        assert self.pipe is not None
        chunks = [self.said]  # joined once: 10 MB of a walk at 100,000 pages come in 64 kB pieces
        got = len(self.said)
        while upto is None or got < upto:
            chunk = os.read(self.pipe, 1 << 20 if upto is None else upto - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        self.said = b"".join(chunks)

    def cancel(self) -> None:
        """Stop the child (when its answer is not needed) and reap it."""
        for fd in (self.pipe, self.ask):
            if fd is not None:
                os.close(fd)
        self.pipe = self.ask = None
        if self.pid is not None:
            pid, self.pid = self.pid, None
            with contextlib.suppress(ProcessLookupError):  # gone already once it answered
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _child(project: Project, write: int, asked: int) -> None:
    """The child's part: the walk as the no-op check takes it (no stats kept: that is the no-op's
    time), its digest, and only when the parent asks, the walk with its stats read back."""
    tree = snapshot.wiki(project, keep_stats=False)
    # sorted here, as the digest sorts them anyway: the build patches this walk (snapshot.restat,
    # a few lines out and in) and digests it again, and a list nearly in order sorts in one pass
    tree.lines.sort()
    _write_all(write, (tree.digest() if tree.complete else "-" * DIGEST).encode())
    if os.read(asked, 1):  # nothing: the parent stopped without asking
        # its stats made from the lines where the build asks (snapshot.Tree.stat): the lines only
        _write_all(write, marshal.dumps((tree.lines, snapshot.plain(tree.lines), tree.complete)))


DIGEST = 64  # characters of a walk's digest (hashing.digest)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Check:
    """The no-op check around one build: `fresh()` first; when it says no,
    `before_build()`, the build, `after_build()`, the lint summary, then `record(...)`."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.started = time.monotonic()
        self.inputs: snapshot.Tree | None = None
        self.found: snapshot.Tree | None = None  # wiki/ as walked beside the inputs, for the build
        self.wiki: snapshot.Tree | None = None
        self.model: dict[str, Any] | None = None
        self.model_file: list[Any] | None = None
        self.model_ok = False
        self.saved: dict[str, Any] | None = None  # the mark the last clean build recorded
        self.aside: WikiDigest | None = None  # the child asked for its walk of wiki/ (walked())

    def fresh(self) -> Fresh | None:
        """The recorded figures when nothing changed since the last clean build, else None
        (and the child that walked wiki/ meanwhile asked for its walk, for `walked()`)."""
        aside = WikiDigest(self.project)  # wiki/ walked beside the inputs where it can be
        try:
            answer = self._fresh(aside)
            if answer is None and aside.asked():
                # the build walks wiki/ next: the child's walk instead, read back only when the
                # build needs it (walked()), its stats sent meanwhile (0.25 s at 100,000 pages)
                self.aside = aside
            return answer
        except (OSError, sqlite3.Error, ValueError, KeyError, TypeError, WikicError):
            return None  # e.g. the model file is gone: the build says so
        finally:
            if self.aside is not aside:
                aside.cancel()

    def walked(self) -> snapshot.Tree | None:
        """wiki/ as the child walked it beside the inputs (`found`; None: walk it again)."""
        if self.aside is not None:
            aside, self.aside = self.aside, None
            self.found = aside.tree()
        return self.found

    def close(self) -> None:
        """Stops the child if its walk was never read (the build failed before it needed it)."""
        if self.aside is not None:
            aside, self.aside = self.aside, None
            aside.cancel()

    def _fresh(self, aside: WikiDigest) -> Fresh | None:
        self.inputs = snapshot.inputs(self.project)
        if not self.inputs.complete:
            return None
        saved = self.saved = json.loads(peek_meta(self.project.state_path, Meta.UPTODATE) or "null")
        if not saved or saved.get("inputs") != self.inputs.digest():
            return None
        wiki = aside.result(keep=True)  # its walk: for the build, where it finds a change
        if (
            wiki is None
            or saved.get("wiki") != wiki
            or saved.get("model_file") != _model_file(saved.get("model"), self.project.root)
        ):
            return None
        # wiki/ by stat is as it was when the mark was recorded, and record() found every
        # file wikic wrote as it left it in that very walk: no need to read them all again
        return Fresh(**saved["figures"], started=self.started)

    def before_build(self) -> None:
        """Inputs as the build is about to read them (when `fresh()` did not already take them)."""
        if self.inputs is None:
            try:
                self.inputs = snapshot.inputs(self.project)
            except OSError:
                return
        try:
            from wikic.settings import load_schema  # the build is about to import it anyway

            cfg = load_schema(self.project.schema_path).model
            self.model = {"name": cfg.name} if cfg.backend == "llama" else None
            self.model_file = _model_file(self.model, self.project.root)
            self.model_ok = True
        except (OSError, WikicError):  # the build itself reports a bad schema or model
            self.model_ok = False

    def after_build(self, report: Report) -> None:
        """wiki/ as the build left it: walked by the build itself when it recorded a clean one."""
        self.wiki = report.wiki or snapshot.wiki(self.project)

    def record(self, report: Report) -> None:
        """After a build that left the wiki clean (and its lint summary), so the next one can skip."""
        inputs, wiki = self.inputs, self.wiki
        clean = report.ok and not report.conflicts and not report.dry_run and report.lint is not None
        if not (clean and self.model_ok and inputs and inputs.complete and wiki and wiki.complete):
            return
        saved = {
            "inputs": inputs.digest(),
            "wiki": wiki.digest(),
            "model": self.model,
            "model_file": self.model_file,
            "figures": {
                "sources": report.sources,
                "pages": report.pages,
                "actions": report.ran + report.cached + report.up_to_date,
                "lint": report.lint,
                "lint_line": report.lint_line,
            },
        }
        from wikic.state import State

        try:
            state = State.peek(self.project.state_path)
            if state is None:
                return
            with state:
                if snapshot.outputs_intact(self.project.root, self._written(state, report), wiki.stat):
                    state.set_meta(Meta.UPTODATE, json.dumps(saved))
        except (sqlite3.Error, WikicError):
            return

    def _written(self, state: State, report: Report) -> list[tuple[str, int, int]]:
        """The records of the files wikic wrote that may not be as it left them: all of them,
        unless wiki/ was, before this build, as the last mark left it (when every one was
        intact, and only a build writes them), or as it left it but for pages changed by hand
        (Report.hand: build/handmade.py): then those this build wrote or removed, and those
        pages."""
        saved, found = self.saved, self.found
        if not (saved and found is not None and found.complete):
            return state.file_stats()
        hand = report.hand if report.hand is not None and report.hand_left == saved.get("wiki") else None
        if saved.get("wiki") != found.digest() and hand is None:
            return state.file_stats()
        touched = [*report.written, *report.removed, "wiki/log.md", *(hand or ())]
        return [(r.path, r.size, r.mtime_ns) for r in state.files_of(touched).values()]
