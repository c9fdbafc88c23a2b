"""The no-op check of `wikic build`: is everything a build (and the lint summary
after it) reads as the last clean build left it? Answered from stats alone.

One stat walk of sources/ and wiki/, schema.yaml's bytes, the prompt templates'
stats and the model file, compared with the mark recorded after the last clean
`wikic build`. It imports only the standard library and wikic's light modules,
so that a build with nothing to do never pays for pydantic, jinja2 or rapidfuzz.
Anything unreadable or unexpected means "not known to be up to date", and the
full build (pipeline.py, whose own no-op check stays the authority) decides.

The mark is at least as strict as pipeline.py's "clean" check: every file under
sources/ (not only those schema.yaml includes), schema.yaml's bytes, the
templates, the model file, every name and stat under wiki/ (not only the names)
and the outputs the state records, which must still have the stats recorded.
It also covers what the lint summary's own cache key covers (lint/runner.py), so its
counts are reused with it. A build that does work forgets the mark first; the
CLI records it again only after a build that left the wiki clean, from stats
taken before that build (inputs) and right after it (wiki/), so that an edit
made meanwhile is seen by the next build.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikic import __version__
from wikic.build.report import Report
from wikic.errors import WikicError
from wikic.hashing import digest
from wikic.project import Project
from wikic.prompts import PACKAGE_DIR as PACKAGE_PROMPTS
from wikic.state import FORMAT

META = "uptodate"  # state meta key: the mark, with the figures a no-op reports


class _Unreadable(Exception):
    """Something could not be stat'ed or read: the check cannot vouch for it."""


def _scan(folder: str, rel: str, lines: list[str], stats: dict[str, tuple[int, int]] | None) -> None:
    """Every entry below `folder` as a `rel/name size mtime_ns` line (folders end in /), in
    directory order: `_digest` sorts. `stats` (when given) gets each file's (size, mtime_ns)."""
    try:
        it = os.scandir(folder)
    except FileNotFoundError:
        lines.append(f"{rel} missing")
        return
    except OSError as exc:
        raise _Unreadable(folder) from exc
    with it:
        for entry in it:
            name = f"{rel}/{entry.name}"
            try:
                if entry.is_dir(follow_symlinks=False):
                    lines.append(name + "/")
                    _scan(entry.path, name, lines, stats)
                    continue
                st = entry.stat()  # through a link: the file it points at, as the build reads it
                link = "\t-> " + os.path.realpath(entry.path) if entry.is_symlink() else ""
            except OSError as exc:
                raise _Unreadable(entry.path) from exc
            lines.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}{link}")
            if stats is not None:
                stats[name] = (st.st_size, st.st_mtime_ns)


def _templates(root: Path) -> list[str]:
    """Stats of every template that can shape a prompt (prompts.template_files, and more)."""
    lines: list[str] = []
    _scan(str(PACKAGE_PROMPTS), str(PACKAGE_PROMPTS), lines, None)
    _scan(str(root / "prompts"), "prompts", lines, None)
    return lines


def _digest(lines: list[str]) -> str:
    lines.sort()
    return digest("\n".join(lines))


@dataclass
class Snapshot:
    """Stats of a project's inputs and of its wiki/, each as one digest."""

    inputs: str = ""
    wiki: str = ""
    wiki_stats: dict[str, tuple[int, int]] | None = None

    @classmethod
    def of_inputs(cls, project: Project) -> Snapshot:
        root = project.root
        try:
            schema = project.schema_path.read_bytes()
        except OSError as exc:
            raise _Unreadable(str(project.schema_path)) from exc
        lines = [f"version {__version__}", "schema " + digest(schema), *_templates(root)]
        _scan(str(root / "sources"), "sources", lines, None)
        return cls(inputs=_digest(lines))

    def take_wiki(self, project: Project) -> None:
        lines: list[str] = []
        self.wiki_stats = {}
        _scan(str(project.wiki_dir), "wiki", lines, self.wiki_stats)
        self.wiki = _digest(lines)


def _model_file(model: dict[str, Any] | None, root: Path) -> list[Any] | None:
    """The llama backend's model file as [path, size, mtime_ns], resolved as the build does."""
    if not model:
        return None
    from wikic.backends.llama_path import resolve_model_path  # light: no pydantic

    path = resolve_model_path(model["name"], root)
    st = path.stat()
    return [str(path), st.st_size, st.st_mtime_ns]


def _connect(project: Project) -> sqlite3.Connection | None:
    if not project.state_path.is_file():
        return None
    db = sqlite3.connect(project.state_path, timeout=30, isolation_level=None)
    row = db.execute("SELECT v FROM meta WHERE k='format'").fetchone()
    if row is None or row[0] != str(FORMAT):
        db.close()
        return None
    return db


def _intact(db: sqlite3.Connection, root: Path, stats: dict[str, tuple[int, int]]) -> bool:
    """Every file the state says wikic wrote is as recorded (publish.outputs_intact, from the walk)."""
    for rel, size, mtime_ns in db.execute("SELECT path, size, mtime_ns FROM files"):
        seen = stats.get(rel)
        if seen is None:
            try:
                st = os.stat(root / rel)
            except OSError:
                return False
            seen = (st.st_size, st.st_mtime_ns)
        if seen != (size, mtime_ns):
            return False
    return True


@dataclass
class Fresh:
    """What a build with nothing to do reports, as recorded after the last clean build."""

    sources: int
    pages: int
    actions: int
    lint: dict[str, int]
    lint_line: str  # lint.counts_line(lint), kept so that printing it needs no lint import
    started: float = 0.0

    def report(self) -> Report:
        return Report(
            sources=self.sources,
            pages=self.pages,
            up_to_date=self.actions,
            nothing_to_do=True,
            seconds=time.monotonic() - self.started,
        )


class Check:
    """The no-op check around one `wikic build`: `fresh()` first; when it says no,
    `before_build()`, the build, `after_build()`, the lint summary, then `record(...)`."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.started = time.monotonic()
        self.snapshot: Snapshot | None = None
        self.model: dict[str, Any] | None = None
        self.model_file: list[Any] | None = None
        self.model_ok = False

    def fresh(self) -> Fresh | None:
        """The recorded figures when nothing changed since the last clean build, else None."""
        try:
            self.snapshot = Snapshot.of_inputs(self.project)
            db = _connect(self.project)
            if db is None:
                return None
            try:
                row = db.execute("SELECT v FROM meta WHERE k=?", (META,)).fetchone()
                saved = json.loads(row[0]) if row and row[0] else None
                if not saved or saved.get("inputs") != self.snapshot.inputs:
                    return None
                self.snapshot.take_wiki(self.project)
                assert self.snapshot.wiki_stats is not None
                if saved.get("wiki") != self.snapshot.wiki or saved.get("model_file") != _model_file(
                    saved.get("model"), self.project.root
                ):
                    return None
                if not _intact(db, self.project.root, self.snapshot.wiki_stats):
                    return None
                return Fresh(**saved["figures"], started=self.started)
            finally:
                db.close()
        except (_Unreadable, OSError, sqlite3.Error, ValueError, KeyError, TypeError, WikicError):
            return None  # e.g. the model file is gone: the build says so

    def before_build(self) -> None:
        """Inputs as the build is about to read them (when `fresh()` did not already take them)."""
        if self.snapshot is None:
            try:
                self.snapshot = Snapshot.of_inputs(self.project)
            except _Unreadable:
                return
        try:
            from wikic.config import load_schema  # the build is about to import it anyway

            cfg = load_schema(self.project.schema_path).model
            self.model = {"name": cfg.name} if cfg.backend == "llama" else None
            self.model_file = _model_file(self.model, self.project.root)
            self.model_ok = True
        except (OSError, WikicError):  # the build itself reports a bad schema or model
            self.model_ok = False

    def after_build(self) -> None:
        if self.snapshot is not None:
            try:
                self.snapshot.take_wiki(self.project)
            except _Unreadable:
                self.snapshot = None

    def record(self, report: Report, lint: dict[str, int] | None, lint_line: str) -> None:
        """After a build that left the wiki clean (and its lint summary), so the next one can skip."""
        snap = self.snapshot
        clean = report.ok and not report.conflicts and not report.dry_run
        if snap is None or snap.wiki_stats is None or not (clean and lint is not None and self.model_ok):
            return
        try:
            db = _connect(self.project)
            if db is None:
                return
            try:
                if not _intact(db, self.project.root, snap.wiki_stats):
                    return
                saved = {
                    "inputs": snap.inputs,
                    "wiki": snap.wiki,
                    "model": self.model,
                    "model_file": self.model_file,
                    "figures": {
                        "sources": report.sources,
                        "pages": report.pages,
                        "actions": report.ran + report.cached + report.up_to_date,
                        "lint": lint,
                        "lint_line": lint_line,
                    },
                }
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (META, json.dumps(saved)))
            finally:
                db.close()
        except sqlite3.Error:
            return


def forget(db: sqlite3.Connection) -> None:
    """A build is about to change things: no build may skip on the old mark."""
    db.execute("DELETE FROM meta WHERE k=?", (META,))
