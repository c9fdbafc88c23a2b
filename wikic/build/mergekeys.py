"""The keys of the facts a kept merge merged, one per source (merge.py): kept as two lists,
the paths and their keys, not as a dict. At 100,000 sources a dict took 60 ms to decode and as
long again to compare with the plan's keys path by path; the lists decode in two thirds of that
and compare in C, where the plan has the same sources in the same order (an edit's)."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping
from itertools import compress
from typing import Any

FEW = 64  # paths looked up one by one (list.index, in C); more: an index of every path


class Listed(Mapping[str, str]):
    """Paths and their keys as two lists, with what changed since laid over them (`over`:
    a path's key now, or None where it is gone). In the base's order, then the paths added
    since."""

    def __init__(self, paths: list[str], keys: list[str]) -> None:
        self.paths, self.key_list = paths, keys
        self.over: dict[str, str | None] = {}
        self._at: dict[str, int] | None = None
        self._asked = 0

    def _index(self, path: str) -> int | None:
        self._asked += 1
        if self._at is None and self._asked > FEW:
            self._at = dict(zip(self.paths, range(len(self.paths)), strict=True))
        if self._at is not None:
            return self._at.get(path)
        try:
            return self.paths.index(path)
        except ValueError:
            return None

    def __getitem__(self, path: str) -> str:
        if path in self.over:
            key = self.over[path]
            if key is None:
                raise KeyError(path)
            return key
        i = self._index(path)
        if i is None:
            raise KeyError(path)
        return self.key_list[i]

    def __iter__(self) -> Iterator[str]:
        over = self.over
        for path in self.paths:
            if over.get(path, "") is not None:
                yield path
        for path, key in over.items():
            if key is not None and self._index(path) is None:
                yield path

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __setitem__(self, path: str, key: str) -> None:
        if self.over.get(path, "") is None:  # gone, and back: last among those added, as in a dict
            del self.over[path]
        self.over[path] = key

    def pop(self, path: str, default: Any = None) -> Any:
        if path not in self:
            return default
        key = self[path]
        self.over[path] = None
        return key


def changes(old: Mapping[str, str], new: dict[str, str]) -> tuple[list[str], list[str]]:
    """The paths of `new` whose key is not `old`'s (new to it, or changed), in `new`'s order,
    and the paths of `old` that `new` has not, in `old`'s order."""
    if isinstance(old, Listed) and len(old.over) <= FEW and old.paths == list(new):
        return _listed_changes(old, new)
    changed = [path for path, key in new.items() if old.get(path) != key]
    gone = [path for path in old if path not in new]
    return changed, gone


def _listed_changes(old: Listed, new: dict[str, str]) -> tuple[list[str], list[str]]:
    """changes() where `new` has the base's paths in its order: the keys compared in C, then
    the few paths changed since the base looked at one by one."""
    paths, over = old.paths, old.over
    differ = compress(range(len(paths)), map(operator.ne, old.key_list, new.values()))
    at = {i for i in differ if paths[i] not in over}
    for path, key in over.items():
        if path in new and key != new[path]:
            i = old._index(path)  # in the base's paths, as every path of `new` is
            assert i is not None
            at.add(i)
    gone = [path for path, key in over.items() if key is not None and path not in new]
    return [paths[i] for i in sorted(at)], gone


def packed(keys: Mapping[str, str]) -> list[list[str]]:
    """The keys as a kept merge holds them (Listed's two lists)."""
    paths = list(keys)
    return [paths, [keys[path] for path in paths]]
