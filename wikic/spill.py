"""Strings that a long pass over every source or page makes early and needs again only later,
written to an unnamed temporary file and not held in memory: Spill, byte strings read back once
in the order written (what a lint over every page needs of each page at its end: the rules
across pages, the rows it stores; 100,000 pages of facts are about 170 MB as Python strings);
Spilled, texts by key read back in any order (each source's packed names and terms, which a
full plan merges after making every source's facts: 170 MB at 100,000 sources)."""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import IO, TypeVar

T = TypeVar("T", bound="_Temporary")


class _Temporary:
    """An unnamed temporary file, gone when closed (by hand, or once let go, or when the
    process ends). Flushed before this process forks: a child reading it (wikic/forked.py)
    must find what was written, and never flush this process's buffer a second time."""

    def __init__(self, folder: Path | None) -> None:
        self._file: IO[bytes] = temporary(folder)
        weakref.finalize(self, self._file.close)
        _open[id(self)] = self

    def close(self) -> None:
        self._file.close()

    def flushed(self) -> None:
        if not self._file.closed:
            self._file.flush()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Spill(_Temporary):
    """Append-then-read-once storage for byte strings."""

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__(folder)
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


class Spilled(_Temporary, Mapping[str, str]):
    """Texts (or bytes: put, raw) by key, each written once to a temporary file as it is added
    (in memory: its key, offset and size) and read from there each time it is asked for, in
    any order. As a mapping it holds the keys `only` names, where given."""

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__(folder)
        self._at: dict[str, tuple[int, int]] = {}
        self._end = 0  # bytes written
        self._flushed = 0  # of which the file has (the rest may wait in its buffer)
        self._only: Collection[str] | None = None

    def add(self, key: str, text: str) -> None:
        self.put(key, text.encode())

    def put(self, key: str, data: bytes) -> None:
        """Bytes by key, read back by raw() (not as a text)."""
        self._file.write(data)
        self._at[key] = (self._end, len(data))
        self._end += len(data)

    def only(self, keys: Collection[str]) -> Spilled:
        """This mapping, holding `keys` (each added) and no other."""
        self._only = keys
        return self

    def __getitem__(self, key: str) -> str:
        if self._only is not None and key not in self._only:
            raise KeyError(key)
        return self.raw(key).decode()

    def flushed(self) -> None:
        super().flushed()
        self._flushed = self._end

    def raw(self, key: str) -> bytes:
        at, size = self._at[key]
        if at + size > self._flushed:
            self._file.flush()
            self._flushed = self._end
        return os.pread(self._file.fileno(), size, at)

    def __contains__(self, key: object) -> bool:
        return key in self._at if self._only is None else key in self._only

    def __iter__(self) -> Iterator[str]:
        return iter(self._at if self._only is None else self._only)

    def __len__(self) -> int:
        return len(self._at if self._only is None else self._only)


_open: weakref.WeakValueDictionary[int, _Temporary] = weakref.WeakValueDictionary()  # by id: a
# Mapping is not hashable


def _flush_open() -> None:
    for temporary in list(_open.values()):
        temporary.flushed()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(before=_flush_open)


def temporary(folder: Path | None) -> IO[bytes]:
    """Beside the build state where it can be (a disk; the system's temporary folder may be
    memory), else in the system's temporary folder."""
    if folder is not None and folder.is_dir():
        try:
            return tempfile.TemporaryFile(dir=folder, prefix=".spill-")
        except OSError:
            pass
    return tempfile.TemporaryFile(prefix="wikic-spill-")
