"""Extracting a non-text source to Markdown, and the store of extracted texts under
.wikic/extracted/, keyed by the file's bytes and the extractor's id: a file is
extracted again only when either changes. The extracted text is the source of
record: the build digests it, citations count its lines, lint and ask read it."""

from __future__ import annotations

import importlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

from wikic.errors import SourceError
from wikic.fsutil import atomic_write
from wikic.hashing import bytes_hash, fingerprint
from wikic.project import Project
from wikic.sources.formats import Format, extractor_id, missing_extra

STORE = "extracted"  # under .wikic/


@dataclass(frozen=True)
class Limits:
    """Bounds an extractor keeps to, whatever the file claims.

    max_lines: stop and refuse past this many lines (sources.part_lines x max_parts);
    max_bytes: of the extracted text (sources.max_bytes), and 20 times that of all
    members of a zip file (DOCX, PPTX, XLSX, EPUB) once uncompressed; max_rows: rows
    read of each sheet or CSV file."""

    max_lines: int = 12_000
    max_bytes: int = 5_000_000
    max_rows: int = 1_000

    @property
    def max_unzipped(self) -> int:
        return 20 * self.max_bytes


@dataclass(frozen=True)
class Extracted:
    """Markdown text; for a paged format, the first line of each page (1-based)."""

    text: str
    pages: tuple[int, ...] = ()
    extractor: str = ""
    key: str = ""  # its name in the store

    def page_of(self, line: int) -> int | None:
        """The page a line is on, or None for a format without pages."""
        page = None
        for n, first in enumerate(self.pages, 1):
            if first > line:
                break
            page = n
        return page


class TooLong(SourceError):
    """An extractor passed Limits.max_lines; read.py turns it into the max_parts message."""


class Lines:
    """Collects an extractor's Markdown lines, refusing to grow past the limits."""

    def __init__(self, path: str, limits: Limits) -> None:
        self.path, self.limits = path, limits
        self.lines: list[str] = []
        self.pages: list[int] = []
        self.size = 0

    def page(self) -> None:
        self.pages.append(len(self.lines) + 1)

    def add(self, text: str) -> None:
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            line = line.rstrip()
            if not line and (not self.lines or not self.lines[-1]):
                continue  # one blank line between blocks
            self.lines.append(line)
            self.size += len(line) + 1
        if len(self.lines) > self.limits.max_lines:
            raise TooLong(self.path, f"extracts to over {self.limits.max_lines:,} lines")
        if self.size > self.limits.max_bytes:
            raise SourceError(
                self.path, f"extracts to over {self.limits.max_bytes:,} bytes of text (sources.max_bytes)"
            )

    def gap(self) -> None:
        self.add("")

    def result(self) -> Extracted:
        while self.lines and not self.lines[-1]:
            self.lines.pop()
        text = "\n".join(self.lines) + "\n" if self.lines else ""
        return Extracted(text, tuple(p for p in self.pages if p <= max(len(self.lines), 1)))


def extract(fmt: Format, path: str, raw: bytes, limits: Limits) -> Extracted:
    """The file's Markdown, from its format's extractor (imported here, not before).

    The boundary with the parsing libraries: whatever a damaged or hostile file makes
    them raise becomes a SourceError naming the file, and the rest of the build goes on."""
    ident = extractor_id(fmt, path)
    try:
        module = importlib.import_module(fmt.module)
    except ImportError as exc:  # installed once, broken or removed since
        raise missing_extra(path, exc.name or fmt.libraries[0]) from exc
    try:
        out: Extracted = module.extract(fmt.name, path, raw, limits)
    except (SourceError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - any parser failure is the file's, not wikic's
        detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise SourceError(path, f"cannot be read as {fmt.name.upper()} (damaged?): {detail}") from exc
    return Extracted(out.text, out.pages, ident)


def open_zip(path: str, raw: bytes, limits: Limits) -> zipfile.ZipFile:
    """A zip container (DOCX, PPTX, XLSX, EPUB) whose members, uncompressed, stay within
    limits.max_unzipped: checked before a byte is inflated. zipfile never inflates a
    member past the size the archive declares, so declared sizes bound the reading."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise SourceError(
            path, f"is not a valid zip container (damaged or not what its name says): {exc}"
        ) from exc
    total = sum(info.file_size for info in archive.infolist())
    if total > limits.max_unzipped:
        raise SourceError(
            path,
            f"would unpack to {total:,} bytes, over the limit of {limits.max_unzipped:,} "
            "(20 x sources.max_bytes): a zip bomb, or raise sources.max_bytes",
        )
    return archive


def store_dir(root: Path) -> Path:
    """Where a project's extracted texts are kept."""
    return Project(root).state_dir / STORE


def load(fmt: Format, path: str, raw: bytes, limits: Limits, store: Path | None) -> Extracted:
    """The extracted text from the store, or extracted now and stored."""
    ident = extractor_id(fmt, path)
    # not the limits: past them an extraction fails and is not stored, and the reader
    # checks the stored text against its own limits again
    key = f"{bytes_hash(raw)}-{fingerprint(ident)}"
    if store is not None:
        found = _stored(store, key, ident)
        if found is not None:
            return found
    out = extract(fmt, path, raw, limits)
    if store is not None:
        store.mkdir(parents=True, exist_ok=True)
        # the page map first: a text without its map is never taken as complete
        atomic_write(store / f"{key}.json", json.dumps({"pages": list(out.pages)}).encode())
        atomic_write(store / f"{key}.md", out.text.encode("utf-8"))
    return Extracted(out.text, out.pages, ident, key)


def prune(store: Path, keep: set[str]) -> None:
    """Remove the texts of files no source has any more (edited, removed)."""
    if not store.is_dir():
        return
    for path in store.iterdir():
        if path.name.split(".", 1)[0] not in keep:
            path.unlink(missing_ok=True)


def _stored(store: Path, key: str, ident: str) -> Extracted | None:
    try:
        text = (store / f"{key}.md").read_text(encoding="utf-8")
        pages = json.loads((store / f"{key}.json").read_text(encoding="utf-8"))["pages"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    return Extracted(text, tuple(int(p) for p in pages), ident, key)
