"""The lines of the names and terms from structure (merge.py) as a kept merge and a kept plan
hold them: marshalled, and decoded only where read (12 MB at 100,000 sources, of which an edit
reads few); and which of them each source names, found from the source's packed names (what
the merge read them from), so that an edit's plan asks no name for every source naming it.
"""

from __future__ import annotations

import marshal
import zlib
from collections.abc import Iterable, Iterator, Mapping

from wikic.build.candidates import unpack
from wikic.build.phrases import lines_of, unjoin

Where = dict[str, list[int]]  # source path -> line numbers, in the sources' order
LINES = {"names": "name_lines", "phrases": "phrase_lines"}  # the picked keys' lines, by kind


class Lines(Mapping[str, list[int]]):
    """A picked key's lines by source (Where) as a kept merge holds them: marshalled, decoded
    when first read. An edit among 100,000 sources reads few of them (8 MB in all); the plan
    keeps the same bytes (keptplan.Kept), so that most compare equal without being decoded."""

    __slots__ = ("packed", "_where")

    def __init__(self, packed: bytes, where: Where | None = None) -> None:
        self.packed, self._where = packed, where

    @classmethod
    def of(cls, where: Where) -> Lines:
        """These lines (a dict no one changes after) marshalled."""
        return cls(_pack(where), where)

    @property
    def where(self) -> Where:
        """The lines, decoded (not to be changed: a Lines is shared)."""
        if self._where is None:
            self._where = marshal.loads(zlib.decompress(self.packed))
        return self._where

    def __getitem__(self, path: str) -> list[int]:
        return self.where[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.where)

    def __len__(self) -> int:
        return len(self.where)

    def __contains__(self, path: object) -> bool:
        return path in self.where

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Lines) and other.packed == self.packed:
            return True  # marshal reads the same bytes back as the same lines
        if isinstance(other, Mapping):
            return self.where == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Lines({self.where!r})"


def packed_lines(lines: Where | Lines) -> bytes:
    return lines.packed if isinstance(lines, Lines) else _pack(lines)


def _pack(where: Where) -> bytes:
    # compressed: each key's lines repeat the paths another key's hold (12 MB at 100,000 sources, 3 MB so)
    return zlib.compress(marshal.dumps(where), 1)


def as_lines(lines: Mapping[str, list[int]]) -> Lines:
    """A candidate's lines as Lines (a merge's are already)."""
    return lines if isinstance(lines, Lines) else Lines.of(dict(lines))


class Named:
    """Which of the candidates (a merge's, `keyed`: the (kind, key) of each, Merge.keyed) each
    source names, and on which lines, read from its packed names (`packed`: of the sources the
    merge merged): exactly the lines the merge holds for it, without decoding any name's lines."""

    def __init__(self, keyed: list[tuple[str, str]], packed: Mapping[str, str]) -> None:
        self.at = {at: i for i, at in enumerate(keyed)}
        self.wanted = {kind: {key for k, key in keyed if k == kind} for kind in LINES}
        self.packed = packed
        self.found: dict[str, dict[int, list[int]]] = {}

    def of(self, path: str) -> dict[int, list[int]]:
        """The candidates (by position) the source names, with its lines naming each."""
        if path not in self.found:
            hits: dict[int, list[int]] = {}
            if path in self.packed:  # else a source the merge has none of (a fallback digest's)
                parts = unpack(self.packed[path])
                for kind, lines in LINES.items():
                    named = lines_of(unjoin(parts[kind]), parts[lines], self.wanted[kind])
                    hits.update((self.at[kind, key], numbers) for key, numbers in named.items())
            self.found[path] = hits
        return self.found[path]

    def index(self, paths: Iterable[str]) -> dict[int, list[tuple[str, list[int]]]]:
        """Each candidate (by position) with the sources of `paths` naming it, by path, and their lines."""
        found: dict[int, list[tuple[str, list[int]]]] = {}
        for path in sorted(paths):
            for i, numbers in self.of(path).items():
                found.setdefault(i, []).append((path, numbers))
        return found
