"""The sources as a patched plan takes them from the last plan kept (replan.py): a settled
source's key, title, line count and fallback flag as that plan found them, and the titles of
the few topics planned again, asked per key of the kept titles rather than found by sorting
every source.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from wikic.build.keptplan import Kept
from wikic.build.plan import SourceInfo, topic_key
from wikic.build.sourceplan import Memo, SourceFacts

Columns = tuple[dict[str, int], list[str], list[int], list[bool], Mapping[str, Any]]  # Kept.meta_columns()


def taken(
    sources: list[SourceInfo], made: Memo, kept: Kept
) -> tuple[dict[str, SourceFacts], list[SourceInfo], dict[str, SourceInfo], dict[str, SourceInfo]]:
    """The facts of the sources this plan takes anew (every source not settled since the last
    plan, settled.py: those take their title, line count and key as it kept them), those of
    them whose facts' key changed, and the sources themselves by path; and every source whose
    digest the model made (not a fallback), by path."""
    taken = Taken({}, [], {}, {})
    cols = kept.meta_columns()
    at, titles, counts, fallbacks, since = cols
    rows, keys = (kept.columns.paths, kept.columns.cols[0]) if kept.columns is not None else ([], [])
    if len(rows) == len(sources) and rows == [src.path for src in sources]:  # none came or went since base
        made.keys.update(zip(rows, keys, strict=True))  # the base's: those changed since, below
        named = taken.named  # a pass over 100,000 sources: kept tight
        for src, path, title, count, fell in zip(sources, rows, titles, counts, fallbacks, strict=True):
            if src.settled and path not in since:  # settled, as the base has it: its row's
                src.title, src.count, src._fallback = title, count, fell
                if not fell:
                    named[path] = src
            else:
                taken.take(src, made, kept, cols)
    else:  # sources came or went: each settled one, as the base has it, found by its row
        named = taken.named
        for src in sources:
            path = src.path
            i = at.get(path) if src.settled and path not in since else None
            if i is None or keys[i] is None:
                taken.take(src, made, kept, cols)
                continue
            made.keys[path] = keys[i]
            src.title, src.count, src._fallback = titles[i], counts[i], fallbacks[i]
            if not src._fallback:
                named[path] = src
    return taken.facts, taken.changed, taken.unsettled, taken.named


class Taken(NamedTuple):
    facts: dict[str, SourceFacts]
    changed: list[SourceInfo]
    unsettled: dict[str, SourceInfo]
    named: dict[str, SourceInfo]

    def take(self, src: SourceInfo, made: Memo, kept: Kept, cols: Columns) -> None:
        """One source, as _taken() takes it (`cols`: Kept.meta_columns())."""
        path = src.path
        key = kept.keys.get(path)
        if src.digest is None and key is not None:  # settled, as the last plan found it
            made.keys[path] = key
            at, titles, counts, fallbacks, since = cols
            i = at.get(path) if path not in since else None
            if i is None:
                src.title, src.count, src._fallback, _ = kept.meta[path]
            else:
                src.title, src.count, src._fallback = titles[i], counts[i], fallbacks[i]
            if not src._fallback:
                self.named[path] = src
            return
        self.facts[path], self.unsettled[path] = made.facts(src), src
        if made.keys[path] != key:
            self.changed.append(src)
        if not src.fallback:
            self.named[path] = src


def retitled(changed: list[SourceInfo], gone: list[str], kept: Kept) -> set[str]:
    """The topics titled by a name that a changed source's title wrote, or no longer writes,
    first among the sources (plan.titles: "Canon law", the article, not "The Canon Law")."""
    keys = {topic_key(kept.meta[p][0]) for p in [*(s.path for s in changed), *gone] if p in kept.meta}
    keys |= {topic_key(src.title) for src in changed}
    if not keys:
        return set()
    return {pid.removeprefix("topic:") for pid, key in kept.title_keys.items() if key in keys}


class Titles(Mapping[str, str]):
    """plan.titles(), with the keys of the titles the last plan had, for the few topics planned
    again: each key asked finds the first source (by path) titled by it, from the kept titles
    of the sources settled and the titles of the others, not from a pass sorting 100,000."""

    def __init__(self, kept: Kept, unsettled: dict[str, SourceInfo], gone: list[str]) -> None:
        self.kept, self.unsettled, self.gone = kept, unsettled, set(gone)
        self.found: dict[str, str | None] = {}

    def __getitem__(self, key: str) -> str:
        if key not in self.found:
            unsettled, gone = self.unsettled, self.gone
            hits = [
                (path, src.title) for path, src in unsettled.items() if title_key_of(src, self.kept) == key
            ]
            hits += self.kept.titled(key, unsettled.keys() | gone)
            self.found[key] = min(hits)[1] if hits else None
        title = self.found[key]
        if title is None:
            raise KeyError(key)
        return title

    def __iter__(self) -> Iterator[str]:
        raise NotImplementedError("asked by key only")

    def __len__(self) -> int:
        raise NotImplementedError("asked by key only")


def title_key_of(src: SourceInfo, kept: Kept | None) -> str:
    meta = kept.meta.get(src.path) if kept is not None else None
    return meta[3] if meta is not None and meta[0] == src.title else topic_key(src.title)
