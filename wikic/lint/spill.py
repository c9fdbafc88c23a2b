"""Byte strings written one after another to an unnamed temporary file and read back in the
same order: what a lint over every page needs of each page again only at its end (what the
rules across pages read, the rows it stores) waits there, not in memory (100,000 pages of
facts are about 170 MB as Python strings)."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import IO


class Spill:
    """Append-then-read-once storage for byte strings, in a temporary file that is gone when
    closed (or when the process ends)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._file: IO[bytes] = _temporary(folder)
        self._sizes = array("Q")  # 8 bytes per string held in memory, not the string

    def __len__(self) -> int:
        return len(self._sizes)

    def add(self, data: bytes) -> None:
        self._file.write(data)
        self._sizes.append(len(data))

    def __iter__(self) -> Iterator[bytes]:
        """Every string added, in order (once: the file is read from its start)."""
        self._file.flush()
        self._file.seek(0)
        read = self._file.read
        for size in self._sizes:
            yield read(size)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _temporary(folder: Path | None) -> IO[bytes]:
    """Beside the build state where it can be (a disk; the system's temporary folder may be
    memory), else in the system's temporary folder."""
    if folder is not None and folder.is_dir():
        try:
            return tempfile.TemporaryFile(dir=folder, prefix=".lint-")
        except OSError:
            pass
    return tempfile.TemporaryFile(prefix="wikic-lint-")
