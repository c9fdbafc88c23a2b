"""Reading a source: decoding its bytes, one normalised form of its text, its
hash, and splitting a long one into parts by headings."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from wikic.errors import SourceError
from wikic.hashing import text_hash
from wikic.sources.extract import Extracted, Limits, TooLong, load
from wikic.sources.formats import format_of

if TYPE_CHECKING:
    from wikic.sources.scan import SourceFile

HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
YAML_LINE = re.compile(r"$|[\w-]+:|\s|- |#")  # a key, an indented or list line, a comment
FRONT_MATTER_LINES = 60


@dataclass(frozen=True)
class Source:
    """A source's normalised text. Line numbers are 1-based, as in citations."""

    path: str
    text: str
    hash: str
    extractor: str = ""  # what extracted the text from a PDF, DOCX, ... (formats.extractor_id)
    pages: tuple[int, ...] = ()  # a PDF's first line of each page, for citations to link to
    stored: str = ""  # its extracted text's name in the store

    @cached_property  # read by every stage (digest keys, plan, assemble): split once
    def lines(self) -> list[str]:
        return self.text.split("\n")[:-1] if self.text.endswith("\n") else self.text.split("\n")

    @cached_property
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


def normalise(text: str) -> str:
    """One form for equal content: LF newlines, no trailing spaces, one final newline."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def blank_front_matter(text: str) -> str:
    """A leading YAML front matter block (a web clip's url, title and date; a note's tags) as
    blank lines: metadata, not prose to digest, and every later line keeps its number."""
    if not text.startswith("---\n"):
        return text
    lines = text.split("\n")
    try:
        end = lines.index("---", 1, FRONT_MATTER_LINES)
    except ValueError:
        return text
    if not all(YAML_LINE.match(line) for line in lines[1:end]):
        return text  # a rule (---) opening a text, not front matter
    return "\n" * end + "\n" + "\n".join(lines[end + 1 :])


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
            path,
            "is a binary file (it contains NUL bytes); sources are text (.md, .txt) or the formats "
            "wikic extracts (.pdf .docx .pptx .xlsx .csv .html .epub)",
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
    file: SourceFile,
    max_bytes: int,
    part_lines: int | None = None,
    max_parts: int | None = None,
    store: Path | None = None,
) -> Source:
    """The source's normalised text, or a SourceError naming the file and what to do.

    With `part_lines` and `max_parts`, a source that would be digested in more
    than `max_parts` parts (one model call each) is refused rather than run.
    A PDF, DOCX, ... is read as its extracted text, kept in `store` (extract.py).
    """
    if format_of(file.path) is not None:
        return _read_extracted(file, max_bytes, part_lines, max_parts, store)
    if file.size > max_bytes:
        raise SourceError(
            file.path,
            f"is {file.size:,} bytes, over the limit of {max_bytes:,} (sources.max_bytes in schema.yaml)",
        )
    try:
        with open(file.full, "rb") as fh:
            raw = fh.read(max_bytes + 1)  # a file growing after the scan cannot exhaust memory
    except FileNotFoundError as exc:
        raise SourceError(file.path, "disappeared while it was being read") from exc
    except OSError as exc:
        raise SourceError(file.path, f"cannot read: {exc.strerror or exc}") from exc
    if len(raw) > max_bytes:
        raise SourceError(file.path, f"is over the limit of {max_bytes:,} bytes (sources.max_bytes)")
    text = blank_front_matter(normalise(decode(raw, file.path)))
    source = Source(file.path, text, text_hash(text))
    if part_lines and max_parts:
        _check_parts(file.path, source.lines, part_lines, max_parts)
    return source


def _check_parts(path: str, lines: list[str], part_lines: int, max_parts: int) -> None:
    parts = len(split_parts(lines, part_lines))
    if parts > max_parts:
        raise SourceError(
            path,
            f"is {len(lines):,} lines long: {parts} parts of up to {part_lines} lines, one model call "
            f"each, over the limit of {max_parts} (sources.max_parts in schema.yaml); split it into "
            "smaller files, or raise the limit",
        )


# --- PDF, DOCX, HTML, ...: their extracted text (sources/extract.py) ------------------------
def source_text(path: str, raw: bytes, store: Path | None, limits: Limits | None = None) -> Extracted:
    """A source's bytes as the text the build reads: decoded, or extracted (from the store)."""
    fmt = format_of(path)
    if fmt is None:
        return Extracted(blank_front_matter(normalise(decode(raw, path))))
    # lint and ask read what a build accepted, normally from the store: no line limit of their own
    out = load(fmt, path, raw, limits or Limits(max_lines=10_000_000), store)
    return Extracted(normalise(out.text), out.pages, out.extractor, out.key)


def _read_extracted(
    file: SourceFile, max_bytes: int, part_lines: int | None, max_parts: int | None, store: Path | None
) -> Source:
    limits = Limits(max_bytes=max_bytes)
    if part_lines and max_parts:  # stop extracting a 2,000-page PDF once it is too long to digest
        limits = Limits(max_lines=part_lines * max_parts, max_bytes=max_bytes)
    if file.size > limits.max_unzipped:
        raise SourceError(
            file.path,
            f"is {file.size:,} bytes, over the limit of {limits.max_unzipped:,} for a PDF or office file "
            "(20 x sources.max_bytes in schema.yaml)",
        )
    try:
        raw = file.abspath.read_bytes()
        out = source_text(file.path, raw, store, limits)
    except OSError as exc:
        raise SourceError(file.path, f"cannot read: {exc.strerror or exc}") from exc
    except TooLong:
        raise SourceError(
            file.path,
            f"extracts to over {limits.max_lines:,} lines: more than {max_parts} parts of {part_lines} "
            "lines, one model call each (sources.max_parts in schema.yaml); split it, or raise the limit",
        ) from None
    source = Source(file.path, out.text, text_hash(out.text), out.extractor, out.pages, out.key)
    if part_lines and max_parts:
        _check_parts(file.path, source.lines, part_lines, max_parts)
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
