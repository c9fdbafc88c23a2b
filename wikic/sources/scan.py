"""Scanning `sources/`: which files are sources (the include and exclude patterns,
no hidden or backup files, no links out of the folder), each with its stat."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterable
from itertools import filterfalse
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from wikic.errors import SourceError
from wikic.snapshot import KIND

if TYPE_CHECKING:  # not at run time: listing sources needs no pydantic
    from wikic.config import SourcesConfig

SOURCES_DIR = "sources"


class SourceFile(NamedTuple):  # a tuple: 100,000 are made by every build
    """A file found under sources/: its project-relative posix path and its stat."""

    path: str
    full: str  # its path on disk, as listed (a Path only when asked: 100,000 files are listed)
    size: int
    mtime_ns: int

    @property
    def abspath(self) -> Path:
        return Path(self.full)


def _pattern(patterns: list[str]) -> re.Pattern[str]:
    """One regular expression for a list of glob patterns ("**/x" also matching "x" at the top)."""
    globs = [g for p in patterns for g in (p, p.removeprefix("**/"))]
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs) or "(?!)")


_SUFFIX = re.compile(r"(?:\*\*/)?\*(\.[A-Za-z0-9_-]+)")  # "*.md", "**/*.md": any name ending so


class Globs:
    """Whether a name matches any of some glob patterns, as `_pattern` matches it. A pattern
    that only says how names end ("**/*.md", as schema.yaml's include list does) is tested by
    `endswith`: one regular expression of 22 alternatives tried on each of 100,000 names is
    most of the listing of sources/."""

    def __init__(self, patterns: list[str]) -> None:
        suffixes = [m.group(1) for p in patterns if (m := _SUFFIX.fullmatch(p))]
        self.suffixes = tuple(suffixes)
        rest = [p for p in patterns if not _SUFFIX.fullmatch(p)]
        self.rest = _pattern(rest) if rest else None

    def match(self, name: str) -> bool:
        if name.endswith(self.suffixes):  # (fnmatch's * matches / too: "*.md" is "ends in .md")
            return True
        return self.rest is not None and self.rest.match(name) is not None


def list_sources(root: Path, cfg: SourcesConfig) -> tuple[list[SourceFile], list[SourceError]]:
    """Every source file, sorted; links that leave sources/ and unreadable entries are errors."""
    base = root / SOURCES_DIR
    found: list[SourceFile] = []
    errors: list[SourceError] = []
    if not base.is_dir():
        return found, errors
    include, exclude = Globs(cfg.include), Globs(cfg.exclude)
    real_base = base.resolve()
    folders = [""]  # relative to sources/, "" or ending in "/"
    while folders:
        rel_dir = folders.pop()
        try:
            entries = sorted(os.scandir(base / rel_dir), key=lambda e: e.name)
        except OSError as exc:
            errors.append(SourceError(f"{SOURCES_DIR}/{rel_dir}".rstrip("/"), f"cannot read: {exc.strerror}"))
            continue
        for entry in entries:
            rel_in = rel_dir + entry.name
            if entry.name.startswith("."):  # hidden files and folders
                continue
            if entry.is_dir(follow_symlinks=False):
                folders.append(rel_in + "/")
            elif entry.is_symlink() and entry.is_dir():  # os.walk would skip it without a word
                errors.append(SourceError(f"{SOURCES_DIR}/{rel_in}", FOLDER_LINK))
            elif not entry.name.endswith("~") and include.match(rel_in) and not exclude.match(rel_in):
                file = _source_file(entry, f"{SOURCES_DIR}/{rel_in}", real_base)
                if isinstance(file, SourceError):
                    errors.append(file)
                else:
                    found.append(file)
    found.sort(key=lambda f: f.path)
    errors.sort(key=lambda e: e.path)
    return found, errors


def listed(
    root: Path, cfg: SourcesConfig, lines: Iterable[str]
) -> tuple[list[SourceFile], list[SourceError]] | None:
    """list_sources() from the lines of a walk of sources/ just taken (snapshot.walk, as the
    no-op check takes it): the same files and errors, without a second stat of every file.
    None where the walk could not read some entry: list_sources() says why."""
    base = root / SOURCES_DIR
    include, exclude = Globs(cfg.include), Globs(cfg.exclude)
    ends, rest = include.suffixes, include.rest  # Globs.match, unrolled: called 100,000 times
    excluded = exclude.match if exclude.suffixes or exclude.rest is not None else None
    real_base, head, folder = "", SOURCES_DIR + "/", f"{base}/"
    found: list[SourceFile] = []
    errors: list[SourceError] = []
    for line in lines:  # 100,000 of them: the plain file is the case to make fast
        if not line.startswith(head):  # other inputs, or sources/ itself: missing, unreadable
            if line == SOURCES_DIR + "\tunreadable":
                return None
            continue
        fields = line.split("\t")
        if len(fields) < 3:  # a folder ("name/"), or "name<TAB>unreadable"
            if len(fields) == 1:
                continue
            return None
        name, size, mtime = fields[0], fields[1], fields[2]
        rel = name[len(head) :]
        if rel[0] == "." or "/." in rel:  # hidden files and folders, and what they hold
            continue
        target = kind = None
        for field_ in fields[3:] if len(fields) > 3 else ():
            if field_.startswith("-> "):
                target = field_[3:]
            elif field_.startswith(KIND):
                kind = field_
        if target is not None and kind == FOLDER:
            errors.append(SourceError(name, FOLDER_LINK))
        elif (
            not rel.endswith("~")
            and (rel.endswith(ends) or (rest is not None and rest.match(rel) is not None))
            and not (excluded is not None and excluded(rel))
        ):
            real_base = real_base or os.path.realpath(base)
            if target is not None and not (target == real_base or target.startswith(real_base + "/")):
                errors.append(SourceError(name, OUTSIDE))
            elif kind is not None:
                errors.append(SourceError(name, NOT_REGULAR))
            else:
                found.append(SourceFile(name, folder + rel, int(size), int(mtime)))
    found.sort()  # by path: each path once, so no tuple is compared past it
    errors.sort(key=lambda e: e.path)
    return found, errors


class Walked:
    """sources/ as a build lists it: from the lines of a walk just taken (the no-op check's,
    snapshot.inputs), or listed anew where there is none or it cannot be read back. A build
    that knows which lines it listed before (build/settled.py) lists only the others."""

    def __init__(self, root: Path, cfg: SourcesConfig, lines: list[str] | None) -> None:
        self.root, self.cfg, self.lines = root, cfg, lines
        self._all: tuple[list[SourceFile], list[SourceError]] | None = None

    def all(self) -> tuple[list[SourceFile], list[SourceError]]:
        """Every source file, sorted, and the errors (list_sources())."""
        if self._all is None:
            walked = listed(self.root, self.cfg, self.lines) if self.lines is not None else None
            self._all = walked or list_sources(self.root, self.cfg)
        return self._all

    def besides(self, known: set[str]) -> tuple[list[SourceFile], list[SourceError]] | None:
        """listed() of the walk's lines not in `known` (lines of this walk's form, each of a
        source listed before); None where there is no walk, or it cannot be read back."""
        if self.lines is None:
            return None
        return listed(self.root, self.cfg, filterfalse(known.__contains__, self.lines))


FOLDER = f"{KIND} {stat.S_IFDIR:o}"  # a walk's mark of a folder reached through a link
OUTSIDE = "is a link to a file outside sources/; copy the file in instead"
NOT_REGULAR = "is not a regular file (a pipe, socket or device); only plain text files are read"
FOLDER_LINK = (
    "is a link to a folder; sources/ is read without following "
    "folder links, so copy or move the folder in instead"
)


def _source_file(entry: os.DirEntry[str], rel: str, real_base: Path) -> SourceFile | SourceError:
    """The file with its stat, or why it cannot be a source."""
    try:
        if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(real_base):
            return SourceError(rel, OUTSIDE)
        st = entry.stat()
    except OSError as exc:
        return SourceError(rel, f"cannot read: {exc.strerror or exc}")
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
        return SourceError(rel, NOT_REGULAR)
    return SourceFile(rel, entry.path, st.st_size, st.st_mtime_ns)
