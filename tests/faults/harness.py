"""What the fault tests share: projects, running `wikic` in a subprocess, counting the
model calls it made, and looking at what it left on disk."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wikic.fsutil import TMP_MARK
from wikic.project import Project, init_project

# Every sentence long enough to make a paragraph; headings and bold terms make topics
# (the scripted backend's rules), and some topics are shared, so pages have several sources.
SHARED = ["Caching", "Hashing", "Scheduling"]


def note(i: int, version: int = 1) -> str:
    shared = SHARED[i % len(SHARED)]
    return (
        f"# Note {i}\n\n"
        f"This note number {i} describes part {i} of the build system in some detail.\n\n"
        f"## Topic {i}\n\n"
        f"Topic {i} is explained here with enough words to make a paragraph (version {version}).\n"
        f"It relies on **{shared}** to avoid repeated work between runs.\n\n"
        f"## {shared}\n\n"
        f"{shared} as seen from note {i}: it keeps results that were already computed.\n"
    )


def notes(count: int, version: int = 1) -> dict[str, str]:
    return {f"note{i:02d}.md": note(i, version) for i in range(count)}


SCHEMA = """\
title: Fault wiki
scope: notes for fault tests
model:
  backend: scripted
  name: faults
  latency: {latency}
"""


def make_project(root: Path, files: dict[str, str | bytes], latency: float = 0.0, extra: str = "") -> Project:
    project = init_project(root)
    project.schema_path.write_text(SCHEMA.format(latency=latency) + extra, encoding="utf-8")
    write_sources(project, files)
    return project


def write_sources(project: Project, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = project.sources_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


# --- running wikic -----------------------------------------------------------------


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out.pop("WIKIC_SCRIPTED_RESPONSES", None)
    out.update(extra)
    return out


def spawn(project: Path, *args: str, log: Path | None = None, **extra_env: str) -> subprocess.Popen[str]:
    """`python -m wikic -C project ARGS` in the background, its output captured."""
    extra = dict(extra_env)
    if log is not None:
        extra["WIKIC_SCRIPTED_LOG"] = str(log)
    return subprocess.Popen(
        [sys.executable, "-m", "wikic", "-C", str(project), *args],
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> dict:  # type: ignore[type-arg]
        return json.loads(self.out)


def wikic(project: Path, *args: str, log: Path | None = None, timeout: float = 120, **extra_env: str) -> Run:
    proc = spawn(project, *args, log=log, **extra_env)
    out, err = proc.communicate(timeout=timeout)
    return Run(proc.returncode, out, err)


def calls(log: Path) -> list[dict[str, object]]:
    """The model calls the scripted backend logged (one JSON line each)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


# --- what is on disk -------------------------------------------------------------------

LOG_ENTRY = re.compile(r"\n## \d{4}-\d\d-\d\d \d\d:\d\d:\d\d build\n\n(- [^\n]*\n)+")


def wiki_snapshot(project: Project, with_log: bool = False) -> dict[str, bytes]:
    """Every file in wiki/ (temporary files included, so that a test sees them)."""
    wiki = project.wiki_dir
    if not wiki.is_dir():
        return {}
    return {
        p.name: p.read_bytes()
        for p in sorted(wiki.iterdir())
        if p.is_file() and (with_log or p.name != "log.md")
    }


def temp_files(project: Project) -> list[str]:
    return sorted(p.name for p in project.wiki_dir.glob(f"{TMP_MARK}*")) if project.wiki_dir.is_dir() else []


def log_is_well_formed(text: str) -> bool:
    """log.md: its header, then whole entries only (no entry cut short)."""
    head = "# Build log\n\nWhat each `wikic build` changed, newest last.\n"
    if not text.startswith(head):
        return False
    rest = text[len(head) :]
    pos = 0
    for m in LOG_ENTRY.finditer(rest):
        if m.start() != pos:
            return False
        pos = m.end()
    return pos == len(rest)


def integrity(project: Project) -> str:
    """PRAGMA integrity_check of state.db, opened as any SQLite client would ("absent" if none)."""
    path = project.state_path
    if not path.exists():
        return "absent"
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def tree(root: Path, skip: tuple[str, ...] = ()) -> dict[str, bytes | str]:
    """Every file under root (symlinks as their target text), for 'nothing else changed' checks."""
    found: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        dirnames[:] = [d for d in dirnames if (rel_dir / d).as_posix() not in skip]
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            path = Path(dirpath) / name
            rel = (rel_dir / name).as_posix()
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                found[rel] = path.read_bytes()
    return found


def copy_project(src: Path, dst: Path) -> Project:
    shutil.copytree(src, dst, symlinks=True)
    return Project(dst)


# --- waiting for a moment in another process ------------------------------------------------


def wait_until(predicate: object, timeout: float = 30, interval: float = 0.0005) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(interval)
    return False


def stamps(folder: Path) -> dict[str, int]:
    try:
        return {e.name: e.stat().st_mtime_ns for e in os.scandir(folder)}
    except FileNotFoundError:
        return {}


@dataclass
class Tally:
    """Counts for the report's table."""

    runs: dict[str, int] = field(default_factory=dict)

    def add(self, key: str) -> None:
        self.runs[key] = self.runs.get(key, 0) + 1

    def items(self) -> Iterator[tuple[str, int]]:
        return iter(sorted(self.runs.items()))
