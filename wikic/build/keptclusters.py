"""The clusters of names of a patched plan (replan.py): the full plan makes them from every
name in the order it meets them (the digests' names by source in path order, then the names
from structure), so the last plan's stand as far as that order is the same. Where every
source whose digest names changed is the first to give the same keys, in the same order, as
the last plan found (Kept.firsts), the digests' part is the kept one as it is and only the
names from structure are matched again; else every name is met again in order.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from wikic.build.candidates import Candidate
from wikic.build.keptplan import Kept
from wikic.build.plan import Run, SourceInfo, _Clusters, topic_key
from wikic.build.sourceplan import SourceFacts

if TYPE_CHECKING:
    from wikic.config import Schema


def kept_clusters(
    schema: Schema,
    sources: list[SourceInfo],
    facts: dict[str, SourceFacts],
    kept: Kept,
    structural: list[Candidate],
    gone: list[str],
    pages: Container[str],
) -> _Clusters | None:
    """The clusters as the full plan makes them, from its names in the order it meets them (the
    digests' by source in path order, then the names from structure): the kept ones as far as
    that order is the same, matched again past it. Where the sources whose names changed give
    first the keys they gave first, in that order, the digests' part is the kept one as it is.
    Each named as the full plan names it (_Clusters.named_by: `pages`, the last plan's page
    ids). None where a name the last plan had is now in another cluster, or its cluster is
    named otherwise. `kept` takes the sources that first give each key (Kept.firsts) where
    they change."""
    clusters = _Clusters(schema)
    pinned = len(clusters.by_key)
    names: Iterable[tuple[str | None, str]]
    if _same_firsts(clusters.by_key, facts, kept, gone):
        clusters.by_key.update(kept.by_key[pinned : pinned + kept.sourced])
        names, order = ((None, cand.name) for cand in structural), kept.by_key[pinned + kept.sourced :]
    else:
        names, order = _names(sources, facts, kept, structural), kept.by_key[pinned:]
        kept.firsts = {}
    at, same = 0, True
    for path, name in names:
        key = topic_key(name) or name.casefold()
        if key in clusters.by_key:
            continue
        if path is not None:
            kept.firsts[key] = path
        if same and at < len(order) and order[at][0] == key:
            clusters.by_key[key] = order[at][1]
            at += 1
            continue
        same = False
        clusters.find(name)
    kept.sourced = len(kept.firsts)
    clusters.named_by(pages)
    before = dict(kept.by_key)
    if any(before.get(key, cid) != cid for key, cid in clusters.by_key.items()):
        return None
    return clusters


def _same_firsts(
    pinned: Mapping[str, str], facts: dict[str, SourceFacts], kept: Kept, gone: list[str]
) -> bool:
    """Whether every source whose digest names changed (or that came or went) is the first to
    give the same keys, in the same order, as the last plan found: then the digests make their
    clusters in the kept order (most sources give names an earlier source gave first)."""
    moved = {path: [name for name, _, _ in f.topics] for path, f in facts.items()}
    moved = {path: names for path, names in moved.items() if names != kept.names.get(path)}
    for path, names in [*moved.items(), *((path, []) for path in gone)]:
        was = _first_keys(kept.names.get(path, []), pinned, kept, path, True)
        if was != _first_keys(names, pinned, kept, path, False):
            return False
    return True


def _first_keys(names: list[str], pinned: Mapping[str, str], kept: Kept, path: str, was: bool) -> list[str]:
    """The keys of these names, each once, in order, not pinned, that this source gave first
    (`was`), or gives first now: no source before it gave them."""
    seen: set[str] = set()
    keys = []
    for name in names:
        key = topic_key(name) or name.casefold()
        given = kept.firsts.get(key)
        first = given == path if was else given is None or given >= path
        if first and key not in seen and key not in pinned:
            keys.append(key)
        seen.add(key)
    return keys


def _names(
    sources: list[SourceInfo], facts: dict[str, SourceFacts], kept: Kept, structural: list[Candidate]
) -> Iterator[tuple[str | None, str]]:
    """Every name the clusters are made of, in order, with the source whose digest gives it
    (None: a name from structure)."""
    for src in sorted(sources, key=lambda s: s.path):
        names = [name for name, _, _ in facts[src.path].topics] if src.path in facts else kept.names[src.path]
        yield from ((src.path, name) for name in names)
    yield from ((None, cand.name) for cand in structural)


def first_givers(run: Run, paths: list[str]) -> dict[str, str]:
    """Each digest name's key (not pinned) and the first source, by path, to give it: the order
    the clusters were made in (Kept.firsts)."""
    seen = set(_Clusters(run.schema).by_key)
    firsts: dict[str, str] = {}
    for path in paths:
        for name in run.names[path]:
            key = topic_key(name) or name.casefold()
            if key not in seen:
                firsts[key] = path
                seen.add(key)
    return firsts
