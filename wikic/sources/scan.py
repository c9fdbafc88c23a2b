"""Scanning `sources/`: which files are sources (the include and exclude patterns,
no hidden or backup files, no links out of the folder), each with its stat."""

from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wikic.errors import SourceError

if TYPE_CHECKING:  # not at run time: listing sources needs no pydantic
    from wikic.config import SourcesConfig

SOURCES_DIR = "sources"


@dataclass(frozen=True)
class SourceFile:
    """A file found under sources/: its project-relative posix path and its stat."""

    path: str
    abspath: Path
    size: int
    mtime_ns: int


def _matches(rel: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.removeprefix("**/")) for p in patterns)


def list_sources(root: Path, cfg: SourcesConfig) -> tuple[list[SourceFile], list[SourceError]]:
    """Every source file, sorted; links that leave sources/ and unreadable entries are errors."""
    base = root / SOURCES_DIR
    found: list[SourceFile] = []
    errors: list[SourceError] = []
    if not base.is_dir():
        return found, errors
    real_base = base.resolve()
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        folder = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        errors += _drop_folder_links(folder, dirnames, base)
        for name in sorted(filenames):
            rel_in = (folder / name).relative_to(base).as_posix()
            if _skipped(name, rel_in, cfg):
                continue
            entry = _source_file(folder / name, f"{SOURCES_DIR}/{rel_in}", real_base)
            if isinstance(entry, SourceError):
                errors.append(entry)
            else:
                found.append(entry)
    found.sort(key=lambda f: f.path)
    return found, errors


def _drop_folder_links(folder: Path, dirnames: list[str], base: Path) -> list[SourceError]:
    """Takes links to folders out of `dirnames` (os.walk would skip them without a word)."""
    errors = []
    for name in list(dirnames):
        if (folder / name).is_symlink():
            dirnames.remove(name)
            rel = f"{SOURCES_DIR}/{(folder / name).relative_to(base).as_posix()}"
            errors.append(
                SourceError(
                    rel,
                    "is a link to a folder; sources/ is read without following "
                    "folder links, so copy or move the folder in instead",
                )
            )
    return errors


def _skipped(name: str, rel_in: str, cfg: SourcesConfig) -> bool:
    """Hidden and backup files, and those the include and exclude patterns leave out."""
    if name.startswith(".") or name.endswith("~"):
        return True
    return not _matches(rel_in, cfg.include) or _matches(rel_in, cfg.exclude)


def _source_file(full: Path, rel: str, real_base: Path) -> SourceFile | SourceError:
    """The file with its stat, or why it cannot be a source."""
    try:
        if full.is_symlink() and not full.resolve().is_relative_to(real_base):
            return SourceError(rel, "is a link to a file outside sources/; copy the file in instead")
        st = full.stat()
    except OSError as exc:
        return SourceError(rel, f"cannot read: {exc.strerror or exc}")
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
        return SourceError(
            rel, "is not a regular file (a pipe, socket or device); only plain text files are read"
        )
    return SourceFile(rel, full, st.st_size, st.st_mtime_ns)
