"""A topic's page patched from what its givers gave before (replan.py), not from every giver
planned again: at 100,000 sources a one-source edit touches three topics of about 1,300
givers each, and planning those again (their facts decoded, their names clustered, their
notes from structure found) took 0.3-0.45 s.

A topic page is made from its givers' names (counted: its title and aliases), the page types
their digests gave those names (counted, the first given first: its type) and their notes
(deduplicated: _pick_claims). For each giver not planned again these stand as the last plan
made them: its names and types are kept with its entry (Kept.names, Kept.kinds), its notes
are those on the kept page and those the page left out (Kept.sums). The order a source's
notes come in decides nothing (_pick_claims sorts them by their lines, and a source's notes
on the same lines are the same note: sourceplan.claim_at). A topic is patched so only where
that is exact: not pinned in schema.yaml (a pinned topic takes every line that names it, and
sources titled like it), a page the last plan made, and with enough givers left unchanged
that the page stays (its sources, less those planned again, at least min_topic_sources).
Every other topic is made from all its givers planned again.
"""

from __future__ import annotations

import marshal
from collections import Counter
from collections.abc import Iterable

from wikic.build.keptplan import Kept, Note, Rows, Unreadable
from wikic.build.plan import Run, _Clusters
from wikic.build.sourceplan import Claim


class Sums:
    """The topics of an edit to patch from their kept givers, with the notes their kept pages
    hold (`notes`, by page id, as kept: text, source, start, end, section) and their sources."""

    def __init__(self, kept: Kept, rows: Rows, clusters: _Clusters, topics: set[str], least: int) -> None:
        self.kept = kept
        ids = [f"topic:{cid}" for cid in sorted(topics)]
        wanted = [
            pid for pid in ids if pid in kept.sums and pid in kept.heads and pid[6:] not in clusters.pinned
        ]
        self.rows = rows.kept_rows(wanted)
        self.notes: dict[str, list[Note]] = {}
        self.sources: dict[str, list[str]] = {}
        for pid, row in self.rows.items():
            try:
                flat = marshal.loads(row[row.index(b"\n") + 1 :])
                self.notes[pid], self.sources[pid] = flat[6], flat[5]
            except (EOFError, ValueError, TypeError, IndexError) as exc:
                raise Unreadable(pid) from exc
        self.least = least
        self.topics: set[str] = set()

    def take(self, replanned: set[str]) -> set[str]:
        """The topics to patch, where these sources are planned again: those whose pages
        stay whatever these give now."""
        self.topics = {
            pid[6:]
            for pid, sources in self.sources.items()
            if len(sources) - len(replanned.intersection(sources)) >= self.least
        }
        return self.topics

    def counts(self, run: Run, replanned: set[str], gone: Iterable[str]) -> None:
        """Each topic's names and page types, as the full plan counts them (Run.source_pages):
        its givers' digest names, by path, those planned again as `run` found them now, the
        others as kept. Before Run.from_structure, which adds a type only to a topic no digest names."""
        kept, clusters, found = self.kept, run.clusters, run.found
        cids: dict[str, str] = {}
        left = set(gone)
        for cid in self.topics:
            givers = (self.kept.givers({cid}) - replanned - left) | (replanned & run.names.keys())
            names: Counter[str] = Counter()
            types: Counter[str] = Counter()
            for path in sorted(givers):
                if path in replanned:
                    given, kinds = run.names[path], run.kinds[path]
                else:
                    given, kinds = kept.names[path], kept.kinds[path]
                for name, kind in zip(given, kinds, strict=True):
                    got = cids.get(name)
                    if got is None:
                        got = cids[name] = clusters.find(name)
                    if got == cid:
                        names[name] += 1
                        types[kind] += 1
            found.names.pop(cid, None)
            found.types.pop(cid, None)
            if names:
                found.names[cid], found.types[cid] = names, types

    def add_notes(self, run: Run, replanned: set[str], gone: Iterable[str]) -> None:
        """Each topic's notes from the givers not planned again: those on its kept page and
        those the page left out."""
        left = replanned | set(gone)
        for cid in self.topics:
            pid = f"topic:{cid}"
            notes = self.notes[pid] + self.kept.sums[pid]
            run.found.claims[cid] += [Claim._make(c) for c in notes if c[1] not in left]


def sums_of(run: Run, clusters: _Clusters, ids: Iterable[str]) -> dict[str, list[Note] | None]:
    """What to keep of these topic pages (made by `run`): the notes each left out; None for a
    page not to patch (pinned: made from its givers planned again)."""
    sums: dict[str, list[Note] | None] = {}
    for pid in ids:
        notes = None if pid[6:] in clusters.pinned else run.dropped[pid]
        sums[pid] = None if notes is None else [tuple(c) for c in notes]  # type: ignore[misc]
    return sums
