"""Scanning `sources/`: which files are sources, reading them as normalised text,
and splitting long ones into parts by headings."""

from __future__ import annotations

import codecs
import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from wikic.config import SourcesConfig
from wikic.errors import SourceError
from wikic.hashing import text_hash

SOURCES_DIR = "sources"
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class SourceFile:
    """A file found under sources/: its project-relative posix path and its stat."""

    path: str
    abspath: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Source:
    """A source's normalised text. Line numbers are 1-based, as in citations."""

    path: str
    text: str
    hash: str

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")[:-1] if self.text.endswith("\n") else self.text.split("\n")

    @property
    def title(self) -> str:
        for line in self.lines:
            m = HEADING.match(line)
            if m:
                return m.group(1).strip()[:120]
            if line.strip():
                return line.strip().lstrip("#").strip()[:120]
        return Path(self.path).stem


@dataclass(frozen=True)
class Part:
    """A slice of a source digested on its own: lines start..end, inclusive."""

    index: int
    start: int
    end: int


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
        for name in list(dirnames):
            if (folder / name).is_symlink():  # os.walk would skip it without a word
                dirnames.remove(name)
                rel = f"{SOURCES_DIR}/{(folder / name).relative_to(base).as_posix()}"
                errors.append(
                    SourceError(
                        rel,
                        "is a link to a folder; sources/ is read without following "
                        "folder links, so copy or move the folder in instead",
                    )
                )
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith("~"):
                continue
            full = folder / name
            rel_in = full.relative_to(base).as_posix()
            if not _matches(rel_in, cfg.include) or _matches(rel_in, cfg.exclude):
                continue
            rel = f"{SOURCES_DIR}/{rel_in}"
            try:
                if full.is_symlink() and not full.resolve().is_relative_to(real_base):
                    errors.append(
                        SourceError(rel, "is a link to a file outside sources/; copy the file in instead")
                    )
                    continue
                st = full.stat()
            except OSError as exc:
                errors.append(SourceError(rel, f"cannot read: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
                errors.append(
                    SourceError(
                        rel,
                        "is not a regular file (a pipe, socket or device); only plain text files are read",
                    )
                )
                continue
            found.append(SourceFile(rel, full, st.st_size, st.st_mtime_ns))
    found.sort(key=lambda f: f.path)
    return found, errors


def normalise(text: str) -> str:
    """One form for equal content: LF newlines, no trailing spaces, one final newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def decode(raw: bytes, path: str) -> str:
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    elif raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise SourceError(path, "has a UTF-16 byte-order mark but invalid UTF-16 content") from exc
    if b"\x00" in raw[:8192]:
        raise SourceError(
            path, "is a binary file (it contains NUL bytes); only text sources (.md, .txt) are read"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceError(
            path,
            f"is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "convert it, e.g. `iconv -f latin1 -t utf-8`",
        ) from exc


def read_source(
    file: SourceFile, max_bytes: int, part_lines: int | None = None, max_parts: int | None = None
) -> Source:
    """The source's normalised text, or a SourceError naming the file and what to do.

    With `part_lines` and `max_parts`, a source that would be digested in more
    than `max_parts` parts (one model call each) is refused rather than run.
    """
    if file.size > max_bytes:
        raise SourceError(
            file.path,
            f"is {file.size:,} bytes, over the limit of {max_bytes:,} (sources.max_bytes in schema.yaml)",
        )
    try:
        with open(file.abspath, "rb") as fh:
            raw = fh.read(max_bytes + 1)  # a file growing after the scan cannot exhaust memory
    except FileNotFoundError as exc:
        raise SourceError(file.path, "disappeared while it was being read") from exc
    except OSError as exc:
        raise SourceError(file.path, f"cannot read: {exc.strerror or exc}") from exc
    if len(raw) > max_bytes:
        raise SourceError(file.path, f"is over the limit of {max_bytes:,} bytes (sources.max_bytes)")
    text = normalise(decode(raw, file.path))
    source = Source(file.path, text, text_hash(text))
    if part_lines and max_parts:
        lines = source.lines
        parts = len(split_parts(lines, part_lines))
        if parts > max_parts:
            raise SourceError(
                file.path,
                f"is {len(lines):,} lines long: {parts} parts of up to {part_lines} lines, one model call "
                f"each, over the limit of {max_parts} (sources.max_parts in schema.yaml); split it into "
                "smaller files, or raise the limit",
            )
    return source


def split_parts(lines: list[str], part_lines: int) -> list[Part]:
    """Split at headings into parts of at most `part_lines` lines (longer sections are cut)."""
    n = len(lines)
    if n <= part_lines:
        return [Part(0, 1, max(n, 1))]
    cuts = [i + 1 for i, line in enumerate(lines) if HEADING.match(line)]
    parts: list[Part] = []
    start = 1
    while start <= n:
        limit = min(start + part_lines - 1, n)
        end = limit
        if limit < n:
            inside = [c - 1 for c in cuts if start < c <= limit]
            if inside:
                end = inside[-1]
        parts.append(Part(len(parts), start, end))
        start = end + 1
    return parts
