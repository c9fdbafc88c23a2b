"""The plan patched (no model): an edit plans again only the topics its sources give names or
notes to, and takes every other page as the last plan made it. A topic's page is made from
the sources that give to it and what every source shares (the clusters of names, the names and
terms from structure, the sources' titles), so the pages an edit can change are those of the
topics its changed sources gave to before or give to now, of the names from structure whose
lines changed, and of the titles it changed; the sources whose pages change are those that
give to these topics. A topic's page is made again from what
its givers gave before where that is exact (keptsums.py), else from them all planned again;
of the givers, those whose own pages the new notes change are planned again.

What the last plan went by is kept in state.db beside its pages (Kept): each source's facts
key, title, line count, digest names (and their page types) and the topics it gives to; the
clusters' keys in the order they were made; the names from structure; the notes each topic
page left out. Where anything else changed (schema.yaml,
wikic, a name now in another cluster, a quarter of the sources) the plan is made in full
(plan.py), which stays what the patch must equal (tests/test_replan.py).
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import ne
from typing import TYPE_CHECKING

from wikic import __version__
from wikic.build import merge, sourceplan
from wikic.build.candidates import Candidate, searched
from wikic.build.digest import forget_words
from wikic.build.keptclusters import first_givers, kept_clusters
from wikic.build.keptlines import Named
from wikic.build.keptplan import (
    SINCE,
    VERSION,
    Entry,
    EveryRow,
    Kept,
    Note,
    Pages,
    Rows,
    Unreadable,
    claims_of,
    pages_of,
    row_of,
)
from wikic.build.keptsources import Titles, retitled, taken, title_key_of
from wikic.build.keptsums import Sums, sums_of
from wikic.build.plan import (
    PagePlan,
    Run,
    SourceInfo,
    Trace,
    _Clusters,
    _Lines,
    _shown,
    planned,
    slugs_for,
    topic_key,
)
from wikic.build.sourceplan import Memo, SourceFacts
from wikic.hashing import fingerprint

if TYPE_CHECKING:
    from wikic.config import Schema

SHARE = 4  # more than one source in this many changed (and more than FEW): the full plan
FEW = 16
Sticky = dict[str, str] | Callable[[], dict[str, str]]  # the sticky slugs, or how to read them


@dataclass
class Keep:
    """What to keep of a plan for the next: what it went by, and of its pages (each a row of its
    own) those new or changed since the last plan kept them (`every`: all of them). `same`:
    the pages planned as the last plan (its `basis` token) planned them, slugs and all, where
    no page moved to another slug: what assemble made of them then stands where nothing else
    it reads changed (assemble.py). `since`: the blob to keep beside the base (Kept), which
    then stays as it is; None: `blob` is the new base."""

    blob: bytes
    every: bool
    token: str
    pages: Mapping[str, bytes] = field(default_factory=dict)  # EveryRow, for a full plan
    gone: list[str] = field(default_factory=list)
    same: set[str] = field(default_factory=set)
    basis: str = ""
    since: bytes | None = None
    before: dict[str, bytes] = field(default_factory=dict)  # the rows the last plan kept of `pages`
    dropped: list[str] | None = None  # the sources gone since the last plan (None: a full plan)
    sticky: str = ""  # its token, where its pages' slugs are the sticky slugs it read, page for page
    # the sticky slugs it read made its pages' (new or moved, and gone), where its heads are
    # those: patched so (pipeline._save), they are marked as its heads again (Rows.heads_are_slugs)
    slugs_patch: tuple[dict[str, str], list[str]] | None = None


def settings_of(schema: Schema) -> str:
    """Everything a plan reads besides the sources: schema.yaml, and wikic's own make."""
    versions = [VERSION, __version__, sourceplan.VERSION, merge.VERSION]
    return fingerprint([versions, schema.model_dump(mode="json")])


def plan_kept(
    sources: list[SourceInfo],
    schema: Schema,
    sticky: Sticky,
    made: Memo,
    blob: bytes | None,
    rows: Rows,
    planned_keys: Callable[[], dict[str, str]] | None = None,
    since: bytes | None = None,
) -> tuple[Mapping[str, PagePlan], Keep]:
    """The page set (plan.plan()), patched from the last plan kept (`blob`, and `since` beside
    it; its pages `rows`) where it can be, and what to keep of it for the next. `planned_keys`:
    the facts keys the planned rows hold, which must be those the kept plan went by (a plan of
    another wikic in between, which changes the rows without letting the kept plan go: the
    full plan); None where the rows say so themselves (state.db's triggers on them). `sticky`:
    read only where the kept heads are not known to be them (Rows.heads_are_slugs)."""
    settings = settings_of(schema)
    if callable(sticky):  # read once, where the patch reads them and then plans in full
        sticky = functools.cache(sticky)
    kept = Kept.loads(blob, settings, since) if blob else None
    blob = since = None  # 50 MB at 100,000 sources: let go once loaded
    if kept is not None and planned_keys is not None and planned_keys() != kept.keys:
        kept = None
    try:
        done = patched(sources, schema, sticky, made, kept, rows) if kept is not None else None
    except Unreadable:  # a kept page not as a plan wrote it: planned in full, and kept anew
        done = None
    if kept is None or done is None:
        slugs = _read(sticky)
        trace = planned(sources, schema, slugs, made)
        forget_words()  # the lines' words the plan asked about: let go before its blob is made
        mine = _kept(trace, made)
        keep = Keep(mine.dumps(settings), True, mine.token, EveryRow(trace.pages))
        keep.sticky = mine.token if mine.heads == slugs else ""
        return trace.pages, keep
    trace, changed, gone, read, rows_before, dropped = done
    basis = kept.token
    mine = _kept_since(trace, made, kept, read, dropped)
    pages = {pid: row_of(trace.pages[pid]) for pid in changed}
    moved_heads = {
        pid: trace.pages[pid].slug for pid in changed if trace.pages[pid].slug != mine.heads.get(pid)
    }
    mine.update_heads(moved_heads | dict.fromkeys(gone, None))
    moved = any(trace.pages[pid].slug != kept_slug for pid, kept_slug in changed.items() if kept_slug)
    same = set() if moved else {pid for pid in trace.pages if pid not in changed}
    keep = Keep(
        b"", False, mine.token, pages, gone, same, basis, mine.dumps_since(settings), rows_before, dropped
    )
    if isinstance(trace.pages, Pages):
        keep.sticky = mine.token if trace.pages.sticky else ""
        if trace.pages.slugs_patch is not None and mine.heads == trace.pages.slugs:
            keep.slugs_patch = trace.pages.slugs_patch
    # a source deleted: no byte of it is left in state.db (privacy/forget.py), so not in the base
    most = max(FEW, len(sources) // SINCE)
    if len(mine.since) > most or len(mine.heads_since) > most or None in mine.since.values():
        keep.blob, keep.since = mine.dumps(settings), None
    return trace.pages, keep


def patched(
    sources: list[SourceInfo], schema: Schema, sticky: Sticky, made: Memo, kept: Kept, rows: Rows
) -> tuple[Trace, dict[str, str], list[str], dict[str, SourceInfo], dict[str, bytes], list[str]] | None:
    """The last plan (`kept`, its pages `rows`) patched by what changed, with the pages it may
    have changed (and the slug each had, "" for a new one), those gone, the sources whose
    facts it took (read, or planned again), the rows the last plan kept of the pages planned
    again, and the sources gone since; None where it cannot be patched."""
    facts, changed, unsettled, named_by_path = taken(sources, made, kept)
    gone = sorted(kept.keys.keys() - {src.path for src in sources})
    if len(changed) + len(gone) > max(FEW, len(sources) // SHARE):
        return None
    named = _Lines(named_by_path)
    packed = _Packed(named, facts, made)
    structural = made.candidates(named, packed)
    # the sticky slugs: the kept heads where they are known to be them (Rows.heads_are_slugs)
    slugs_were = kept.heads if rows.heads_are_slugs(kept.token) else _read(sticky)
    clusters = kept_clusters(schema, sources, facts, kept, structural, gone, slugs_were)
    if clusters is None or made.merge is None:
        return None
    # which names from structure a source names: from its packed names, not every name's lines
    index = Named(made.merge.keyed, packed)
    topics, paths = _touched(changed, gone, facts, kept, clusters, structural, index)
    # the topics patched from their kept givers (keptsums.py); the others' givers planned again
    sums = Sums(kept, rows, clusters, topics, schema.min_topic_sources)
    quick = sums.take(paths | set(gone))
    replanned = paths | kept.givers(topics - quick)
    subset = _planned_again(sources, replanned, facts, made)
    # the names of the sources read but not planned again, which from_structure lets go: a
    # patched topic's giver among them may have its own page planned again (below)
    spare = {path: f.structure for path, f in facts.items() if path not in replanned}
    run = Run(schema, made, clusters)
    own = run.source_pages(subset, facts)
    sums.counts(run, replanned, gone)
    run.from_structure(subset, facts, structural, own, index.index(src.path for src in subset))
    run.pinned(subset, facts)
    sums.add_notes(run, replanned, gone)
    new = run.topic_pages(Titles(kept, unsettled, gone), only=topics)
    # of the givers, only those whose own pages these topics change are planned again
    mine = paths | _moved(rows, topics, new, own, sums.notes)
    subset = [src for src in subset if src.path in mine]
    own = {pid: page for pid, page in own.items() if page.sources[0] in mine}
    more = _planned_again(sources, mine - replanned, facts, made)  # a patched topic's givers
    if more:
        _givers_planned(run, more, facts, spare, structural, own, index)
        subset += more
    pages, before, rows_before = pages_of(kept.heads, rows, gone, mine, topics, own, new)
    for page in own.values():
        page.topics = [t for t in page.topics if t in pages]
    # their notes are on the pages of the topics they give to
    shows = {f"topic:{cid}" for path in mine for cid in [*run.gives.get(path, ()), *kept.gives.get(path, ())]}
    pages.load(shows)
    run.other_notes(subset, pages, _shown({pid: pages[pid] for pid in shows if pid in pages} | own, mine))
    made.flush()
    moved = _slugged(pages, before, slugs_were)
    pages.sources = sources
    redone = {pid: before.get(pid, "") for pid in [*own, *new]} | moved
    gone_pages = sorted(pid for pid in rows_before if pid not in pages.slugs)  # every other page stays
    read = unsettled | {src.path: src for src in subset}  # a giver whose page stands: as kept
    return Trace(run, sources, structural, pages), redone, gone_pages, read, rows_before, gone


def _givers_planned(
    run: Run,
    more: list[SourceInfo],
    facts: dict[str, SourceFacts],
    spare: dict[str, str],
    structural: list[Candidate],
    own: dict[str, PagePlan],
    index: Named,
) -> None:
    """A patched topic's givers whose own pages it changes, planned on a side run: their pages
    join `own`, their names, kinds and gives `run`'s (their packed names taken back from
    `spare`: from_structure let them go)."""
    for src in more:
        facts[src.path].structure = spare.get(src.path, facts[src.path].structure)
    side = Run(run.schema, run.made, run.clusters)
    own |= side.source_pages(more, facts)
    side.from_structure(more, facts, structural, own, index.index(src.path for src in more))
    side.pinned(more, facts)
    run.names |= side.names
    run.kinds |= side.kinds
    run.gives.update(side.gives)


def _slugged(pages: Pages, before: dict[str, str], slugs_were: dict[str, str]) -> dict[str, str]:
    """Every page's slug (`before`: the kept heads' slugs), sticky where it can be (`slugs_were`:
    the sticky slugs, `before` itself where the kept heads are them); the pages whose slug
    moved, with the slug each had. The pages stay undecoded where they can: a title is asked
    only of a page without a sticky slug."""
    pages.slugs = slugs_for(pages, slugs_were, pages.__getitem__)
    pages.sticky = pages.slugs == slugs_were
    if not pages.sticky:  # a page came, went or moved: what makes the sticky slugs these
        gone = sorted(slugs_were.keys() - pages.slugs.keys())
        pages.slugs_patch = _new_slugs(pages.slugs, slugs_were), gone
    for pid, page in pages.decoded.items():
        page.slug = pages.slugs[pid]
    # not a set of 100,000 pairs made to find them; none where the slugs equal those kept
    # (compared above, in C: the loop took 67 ms at 100,000 sources)
    if pages.sticky and slugs_were is before:
        return {}
    slugs = pages.slugs  # a page gone has none
    return dict(sorted((pid, slug) for pid, slug in before.items() if slugs.get(pid, slug) != slug))


def _new_slugs(slugs: dict[str, str], were: dict[str, str]) -> dict[str, str]:
    """The slugs not as they were (new, or moved), found in C (100,000 pairs compared as sets
    of items: 70 ms)."""
    ids, now = list(slugs), list(slugs.values())
    moved = list(map(ne, map(were.get, ids), now))
    return dict(zip(compress(ids, moved), compress(now, moved), strict=True))


def _planned_again(
    sources: list[SourceInfo], paths: set[str], facts: dict[str, SourceFacts], made: Memo
) -> list[SourceInfo]:
    """These sources, with their facts."""
    if not paths:
        return []
    subset = [src for src in sources if src.path in paths]
    if hasattr(made.rows, "load"):
        made.rows.load([src.path for src in subset])  # a few hundred rows at once, not a window each
    facts.update({src.path: made.facts(src) for src in subset if src.path not in facts})
    return subset


def _read(sticky: Sticky) -> dict[str, str]:
    return sticky() if callable(sticky) else sticky


def _moved(
    rows: Rows,
    topics: set[str],
    new: dict[str, PagePlan],
    own: dict[str, PagePlan],
    read: dict[str, list[Note]],
) -> set[str]:
    """The sources whose own pages the topics planned again change: those whose notes on one
    of these topic pages are not as the last plan kept them there (what the source page shows
    of its lines is what no topic page shows), and those giving to a topic page made or let go
    (the topics a source page lists). Every other giver's page stands as the last plan made it.
    `read`: the notes of kept pages read already (keptsums.Sums)."""
    ids = [f"topic:{cid}" for cid in topics]
    old: dict[str, bytes | list[Note]] = {**rows.kept_rows(pid for pid in ids if pid not in read), **read}
    moved: set[str] = set()
    for pid in ids:
        try:
            was_notes = old.get(pid, [])
            notes = claims_of(was_notes) if isinstance(was_notes, bytes) else was_notes
            was = _by_source((c[1], c[2], c[3], c[0]) for c in notes) if pid in old else {}
        except (EOFError, ValueError, TypeError, IndexError) as exc:
            raise Unreadable(pid) from exc
        now = _by_source((c.source, c.start, c.end, c.text) for c in new[pid].claims) if pid in new else {}
        moved |= {src for src in was.keys() | now.keys() if was.get(src) != now.get(src)}
    flipped = old.keys() ^ new.keys()
    return moved | {page.sources[0] for page in own.values() if not flipped.isdisjoint(page.topics)}


def _by_source(claims: Iterator[tuple[str, int, int, str]]) -> dict[str, list[tuple[int, int, str]]]:
    found: dict[str, list[tuple[int, int, str]]] = {}
    for source, start, end, text in claims:
        found.setdefault(source, []).append((start, end, text))
    return found


def _touched(
    changed: list[SourceInfo],
    gone: list[str],
    facts: dict[str, SourceFacts],
    kept: Kept,
    clusters: _Clusters,
    structural: list[Candidate],
    index: Named,
) -> tuple[set[str], set[str]]:
    """The topics whose pages the edit can change (a few more do no harm: made again from all
    their givers, they come out as they were), and the sources whose pages it can change
    besides those topics' givers."""
    before = dict(kept.by_key)
    topics: set[str] = set()
    paths = {src.path for src in changed}
    for path in [*paths, *gone]:
        topics.update(kept.gives.get(path, ()))
    old = {(name, kind): lines for name, kind, lines in kept.structural}
    new = {(c.name, c.kind): c.lines for c in structural}
    for key in old.keys() | new.keys():
        # a name from structure found, lost or with other lines (most are the same bytes, undecoded)
        was, now = old.get(key), new.get(key)
        if was != now:
            if was is not None:
                topics.add(before[topic_key(key[0]) or key[0].casefold()])
            if now is not None:
                topics.add(clusters.find(key[0]))
            if was is not None and now is not None:  # a name still found: the sources whose lines moved
                paths |= {path for path in {*was, *now} if was.get(path) != now.get(path)}
            else:
                paths |= set(was or {}) | set(now or {})
    for src in changed:  # what it gives to now
        f = facts[src.path]
        topics.update(clusters.find(name) for name, _, _ in f.topics)
        topics.update(clusters.find(structural[i].name) for i in index.of(src.path))
        topics.update(cid for cid, mentions in zip(clusters.pinned, f.mentions, strict=True) if mentions)
        topics.add(clusters.by_key.get(topic_key(src.title), ""))
    topics |= retitled([*changed], gone, kept)
    topics.discard("")
    return topics, paths


def _kept(trace: Trace, made: Memo) -> Kept:
    """What to keep of a full plan: what it found of every source."""
    run = trace.run
    keys = {src.path: made.keys[src.path] for src in trace.sources}
    topic_ids = [pid for pid in trace.pages if not pid.startswith("source:")]
    title_keys = {pid: run.title_keys.get(pid, "") for pid in topic_ids}
    firsts = first_givers(run, sorted(keys))
    kept = Kept(
        keys,
        {src.path: (src.title, src.count, src.fallback, topic_key(src.title)) for src in trace.sources},
        {p: run.names[p] for p in keys},
        {p: sorted(run.gives.get(p, ())) for p in keys},
        {p: run.kinds[p] for p in keys},
        list(run.clusters.by_key.items()),
        [(c.name, c.kind, c.lines) for c in trace.structural],
        {pid: key for pid, key in title_keys.items() if key},
        firsts,
        len(firsts),
        secrets.token_hex(8),
    )
    kept.base = kept.token
    kept.heads = {pid: page.slug for pid, page in trace.pages.items()}
    sums = sums_of(run, run.clusters, run.dropped)
    kept.sums = {pid: notes for pid, notes in sums.items() if notes is not None}
    return kept


def _kept_since(trace: Trace, made: Memo, kept: Kept, read: dict[str, SourceInfo], gone: list[str]) -> Kept:
    """`kept` as _kept() would make it anew, changed in place: the entries of the sources
    this plan took the facts of (`read`: read, or planned again), and of those `gone` (every
    other source's is as kept)."""
    run = trace.run
    entries: dict[str, Entry | None] = dict.fromkeys(gone)
    for path, src in read.items():
        names = run.names[path] if path in run.names else kept.names[path]
        gives = sorted(run.gives.get(path, ())) if path in run.names else kept.gives.get(path, [])
        kinds = run.kinds[path] if path in run.names else kept.kinds[path]
        meta = (src.title, src.count, src.fallback, title_key_of(src, kept))
        entry = (made.keys[path], meta, names, gives, kinds)
        if kept.entry(path) != entry:
            entries[path] = entry
    # the topic pages planned again take their titles' keys anew, the others keep theirs
    title_keys = {pid: key for pid, key in kept.title_keys.items() if pid in trace.pages}
    title_keys.update({pid: key for pid, key in run.title_keys.items() if key and pid in trace.pages})
    kept.update(entries)
    kept.by_key = list(run.clusters.by_key.items())
    structural = [(c.name, c.kind, c.lines) for c in trace.structural]
    if structural != kept.structural:
        kept.structural, kept.moved = structural, True
    kept.title_keys = title_keys
    # the topic pages planned again: what each left out, and none for those gone
    sums = sums_of(run, run.clusters, run.dropped)
    sums |= {pid: None for pid in kept.sums if pid not in trace.pages}
    kept.update_sums({pid: notes for pid, notes in sums.items() if kept.sums.get(pid) != notes})
    kept.token = secrets.token_hex(8)
    return kept


class _Packed(Mapping[str, str]):
    """Each named source's packed names and terms (candidates.source_names): from its facts
    where the plan has them, else from its row, as the merge asks (merge.py: few)."""

    def __init__(self, named: Mapping[str, list[str]], facts: dict[str, SourceFacts], made: Memo) -> None:
        self.named, self.facts, self.made = named, facts, made

    def __getitem__(self, path: str) -> str:
        if path in self.facts:
            return self.facts[path].structure
        return self.made.rows[path].facts.partition("\n")[2]

    def __contains__(self, path: object) -> bool:
        return path in self.named

    def having(self, keys: Iterable[str]) -> set[str] | None:
        """The named sources whose packed names may hold one of these keys (their facts hold
        it as text), where the rows can be searched so (None: they cannot): a key newly picked
        is looked for in every source, and 100,000 rows read one window at a time took 1.3 s."""
        rows = self.made.rows  # state.db's (PlannedRows), or a plan's own
        holding, name_rows = getattr(rows, "holding", None), getattr(rows, "name_rows", None)
        if holding is None:
            return None
        if name_rows is not None and self.made.save is not None:  # not --dry-run: once, the rows
            name_rows(searched)  # without their names given them
        keys = list(keys)
        found = holding(keys)  # as last planned: a source planned anew is asked of as it is now
        found |= {path for path, f in self.facts.items() if any(key in f.structure for key in keys)}
        return {path for path in found if path in self.named}

    def __iter__(self) -> Iterator[str]:
        return iter(self.named)

    def __len__(self) -> int:
        return len(self.named)
