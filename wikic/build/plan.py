"""The plan stage (no model): merge the topics of all digests into the page set.

One summary page per source, one page per merged topic. Names are merged by
normalisation, the aliases pinned in schema.yaml and fuzzy matching (rapidfuzz).
A page's claims are the source lines the digests pointed at, so the plan is the
dependency graph: page <- the sources and lines that feed it.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from rapidfuzz import fuzz, process

from wikic import forked
from wikic.build.candidates import Candidate
from wikic.build.notes import is_text, notes_of
from wikic.build.sourceplan import Claim as Claim
from wikic.build.sourceplan import Memo, Save, Settings, SourceFacts, claim_at
from wikic.build.sourceplan import SourceInfo as SourceInfo
from wikic.spill import Spilled
from wikic.state import Planned
from wikic.wiki.page import slugify, unique_slug

if TYPE_CHECKING:
    from wikic.config import Schema

T = TypeVar("T")

FUZZY_CUTOFF = 92
# sources whose facts are made together, by every CPU (forked.py): what the children send back
# of 5,000 sources is held at once (about 7 MB)
ROUND = 5000
SMALL_MODELS = ("smollm2", "135m", "360m")  # model names known to write unfaithful prose


@dataclass(slots=True)  # 100,000 source pages and more: no dict each
class PagePlan:
    id: str
    title: str
    type: str
    slug: str = ""
    aliases: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)  # source pages: the lines no other page carries
    summary: str = ""
    topics: list[str] = field(default_factory=list)  # source pages: the topic page ids it feeds
    in_text: int = 0  # topic pages: the first this many claims are written into the text, the rest listed
    summary_lines: list[tuple[str, list[list[int]]]] = field(default_factory=list)  # source pages


@functools.lru_cache(maxsize=1 << 16)  # the same names recur in every source
def topic_key(name: str) -> str:
    """The form under which names count as the same topic."""
    key = re.sub(r"[^\w]+", " ", name.casefold()).strip()
    key = re.sub(r"^(the|a|an) ", "", key)
    words = [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in key.split()]
    return " ".join(words)


def _digits(text: str) -> list[str]:
    return re.findall(r"\d+", text)


class _Clusters:
    """Topic names grouped into clusters, deterministic for a given input order."""

    def __init__(self, schema: Schema) -> None:
        self.by_key: dict[str, str] = {}
        self.pinned: dict[str, Any] = {}
        for topic in schema.topics:
            cid = topic_key(topic.name)
            self.pinned[cid] = topic
            for name in [topic.name, *topic.aliases]:
                self.by_key.setdefault(topic_key(name), cid)

    def find(self, name: str) -> str:
        key = topic_key(name)
        if not key:
            key = name.casefold()
        if key in self.by_key:
            return self.by_key[key]
        match = process.extractOne(
            key, list(self.by_key), scorer=fuzz.token_sort_ratio, score_cutoff=FUZZY_CUTOFF
        )
        # "Section 5" and "Section 59", "GPT-3" and "GPT-4": close strings, different things.
        cid = self.by_key[match[0]] if match and _digits(match[0]) == _digits(key) else key
        self.by_key[key] = cid
        return cid

    def named_by(self, pages: Container[str]) -> dict[str, str]:
        """Each cluster named, once every name is in, by its first key that names a topic page
        already (`pages`: the last plan's page ids, as the sticky slugs hold them), else by its
        first key, as find() names it: a typo in the first name given of a topic keeps its page
        (the name had been its id, and a new id is a page gone and one new). by_key renamed so;
        returns the ids changed (was -> now)."""
        first: dict[str, str] = {}
        paged: dict[str, str] = {}
        for key, cid in self.by_key.items():
            first.setdefault(cid, key)
            if cid not in paged and f"topic:{key}" in pages:
                paged[cid] = key
        named = {cid: paged.get(cid, key) for cid, key in first.items() if cid not in self.pinned}
        renamed = {cid: now for cid, now in named.items() if now != cid}
        if renamed:  # none, mostly: a name first given with a typo is
            self.by_key = {key: renamed.get(cid, cid) for key, cid in self.by_key.items()}
        return renamed


def write_mode(schema: Schema) -> str:
    """prose or notes, for every topic page of this build (and source summaries: in notes mode
    a source's page opens with its own lead, not the model's summary)."""
    if schema.write.mode != "auto":
        return schema.write.mode
    name = schema.model.name.casefold()
    small = schema.model.backend == "llama" and any(tag in name for tag in SMALL_MODELS)
    return "notes" if small else "prose"


def _pick_claims(claims: list[Claim], in_text: int) -> tuple[list[Claim], list[Claim]]:
    """Deduplicated; the first `in_text` picked round-robin over sources, so that every source
    is heard in the text, then the rest; each group in source order. With the notes left out
    (the duplicates: an edit's patch takes them back, keptsums.py)."""
    seen: set[str] = set()
    lines: set[tuple[str, int]] = set()
    by_source: dict[str, list[Claim]] = defaultdict(list)
    dropped: list[Claim] = []
    for c in sorted(claims, key=lambda c: (c.source, c.start, -c.end)):
        if c.text and c.text not in seen and (c.source, c.start) not in lines:
            seen.add(c.text)
            lines.update((c.source, n) for n in range(c.start, c.end + 1))
            by_source[c.source].append(c)
        else:
            dropped.append(c)
    picked: list[Claim] = []
    queues = [by_source[s] for s in sorted(by_source)]
    while len(picked) < in_text and any(queues):
        for q in queues:
            if q and len(picked) < in_text:
                picked.append(q.pop(0))
    rest = [c for q in queues for c in q]
    order = lambda c: (c.source, c.start, c.end)  # noqa: E731
    return sorted(picked, key=order) + sorted(rest, key=order), dropped


@dataclass
class _Topics:
    """Topics as the digests and the structure find them, by cluster id: the names they go
    by (with counts), the page types proposed for them, and their notes."""

    names: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    types: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    claims: dict[str, list[Claim]] = field(default_factory=lambda: defaultdict(list))


def _feeds(page: PagePlan, cid: str) -> None:
    tid = sys.intern(f"topic:{cid}")  # one string for every source page it feeds (500,000 at 100,000)
    if tid not in page.topics:
        page.topics.append(tid)


class Run:
    """A plan's steps over a set of sources: every source (plan()), or the sources whose pages
    an edit changes (replan.py), with the clusters and the names from structure of them all.
    `gives`: the topics each source gives a name or notes to, which the next plan's patch
    reads to find the pages an edit touches."""

    def __init__(self, schema: Schema, made: Memo, clusters: _Clusters) -> None:
        self.schema, self.made, self.clusters = schema, made, clusters
        self.found = _Topics()
        self.gives: dict[str, set[str]] = defaultdict(set)
        self.title_keys: dict[str, str] = {}  # topic page id -> the key of its most used name
        self.names: dict[str, list[str]] = {}  # source path -> its digest's topic names, in order
        self.kinds: dict[str, list[str]] = {}  # source path -> the page type of each of those names
        self._kinds: dict[tuple[str, ...], list[str]] = {}
        self.dropped: dict[str, list[Claim]] = {}  # topic page id -> its notes left out (_pick_claims)

    def source_pages(self, sources: list[SourceInfo], facts: dict[str, SourceFacts]) -> dict[str, PagePlan]:
        """One page per source, with its summary; the topics its digest names go into `found`."""
        pages: dict[str, PagePlan] = {}
        found = self.found
        for src in sorted(sources, key=lambda s: s.path):
            said = facts[src.path].said
            summary = " ".join(text for text, _ in said)
            page = PagePlan(f"source:{src.path}", src.title, "source", sources=[src.path], summary=summary)
            page.summary_lines = said
            pages[page.id] = page
            self.names[src.path] = [name for name, _, _ in facts[src.path].topics]
            kinds = tuple(
                kind for _, kind, _ in facts[src.path].topics
            )  # a few lists, shared: not held per source
            self.kinds[src.path] = self._kinds.setdefault(kinds, list(kinds))
            for name, kind, claims in facts[src.path].topics:
                cid = self.clusters.find(name)
                found.names[cid][name] += 1
                found.types[cid][kind] += 1
                found.claims[cid] += claims
                self.gives[src.path].add(cid)
                _feeds(page, cid)
        return pages

    def from_structure(
        self,
        sources: list[SourceInfo],
        facts: dict[str, SourceFacts],
        structural: list[Candidate],
        pages: dict[str, PagePlan],
        named: Mapping[int, list[tuple[str, list[int]]]] | None = None,
    ) -> None:
        """Names and terms two or more sources mention (merge.py) join the topics, as new pages or
        as more notes for the pages the model found, from the sources whose digest did not name
        them (where it did, its lines stand: a source's notes do not depend on the other
        sources). Of the sources named, those with a page in `pages`. `named`: each candidate (by
        position) with these sources naming it and their lines, where known (keptlines.Named:
        a patched plan's few sources, without every name's lines decoded)."""
        clusters, found, types = self.clusters, self.found, self.schema.type_names()
        by_path = {src.path: src for src in sources}
        fed = {(c.source, cid) for cid, notes in found.claims.items() for c in notes}
        for f in facts.values():
            f.structure = ""  # merged: not held through the rest of the plan (170 MB at 100,000 sources)
        wanted: dict[str, list[tuple[str, str, list[int]]]] = defaultdict(list)  # by source, in order
        for i, cand in enumerate(structural):
            cid = clusters.find(cand.name)
            if cid not in found.names:
                found.types[cid][cand.kind if cand.kind in types else types[0]] += 1
            found.names[cid][cand.name] += 0
            lines = named.get(i, []) if named is not None else sorted(cand.lines.items())
            for path, numbers in lines:
                if (path, cid) not in fed and path in by_path:
                    wanted[path].append((cand.name, cid, numbers))
                    _feeds(pages[f"source:{path}"], cid)
                    self.gives[path].add(cid)
        for path, items in wanted.items():  # the order of a topic's notes is the plan's (_pick_claims)
            for (_, cid, _), notes in zip(items, self.made.structure(by_path[path], items), strict=True):
                found.claims[cid] += notes
            by_path[path].release()
        for src in sources:  # a source titled like a pinned topic is about it: all its lines are notes
            pinned = clusters.by_key.get(topic_key(src.title))
            if pinned is not None and pinned in clusters.pinned:
                numbers = [n for n, line in enumerate(src.lines, start=1) if is_text(line) and n > 1]
                spans = notes_of(src.lines, numbers)
                found.claims[pinned] += [claim_at(src.lines, src.path, a, b) for a, b in spans]
                _feeds(pages[f"source:{src.path}"], pinned)
                self.gives[src.path].add(pinned)

    def rename(self, renamed: Mapping[str, str], pages: Mapping[str, PagePlan]) -> None:
        """The clusters renamed (_Clusters.named_by) in what this run found of them, and in the
        topics its source `pages` feed."""
        _rename(self.found.names, renamed)
        _rename(self.found.types, renamed)
        _rename(self.found.claims, renamed)
        for gives in self.gives.values():
            if not gives.isdisjoint(renamed):
                was = gives & renamed.keys()
                gives -= was
                gives |= {renamed[cid] for cid in was}
        ids = {f"topic:{cid}": sys.intern(f"topic:{now}") for cid, now in renamed.items()}
        for page in pages.values():
            if not ids.keys().isdisjoint(page.topics):
                page.topics = [ids.get(tid, tid) for tid in page.topics]

    def pinned(self, sources: list[SourceInfo], facts: dict[str, SourceFacts]) -> None:
        """The topics pinned in schema.yaml, with every line that names them."""
        for i, (cid, topic) in enumerate(self.clusters.pinned.items()):
            self.found.names[cid][topic.name] += 0
            self.found.types[cid][topic.type] += 1000
            for src in sources:
                mentions = facts[src.path].mentions[i]
                if mentions:
                    self.found.claims[cid] += mentions
                    self.gives[src.path].add(cid)

    def topic_pages(self, by_title: Mapping[str, str], only: set[str] | None = None) -> dict[str, PagePlan]:
        """A page per topic fed by enough sources (or pinned in schema.yaml), titled by its most
        used name (a source titled like it names it best), its notes picked for the text; of
        the topics `only` names, where it is given."""
        schema, clusters, found = self.schema, self.clusters, self.found
        pages: dict[str, PagePlan] = {}
        for cid in sorted(found.names if only is None else only & found.names.keys()):
            names, claims = found.names[cid], found.claims[cid]
            feeding = sorted({c.source for c in claims})
            if cid not in clusters.pinned and len(feeding) < schema.min_topic_sources:
                continue
            if cid in clusters.pinned:
                pinned = clusters.pinned[cid]
                title, aliases = pinned.name, list(pinned.aliases)
            else:
                title = sorted(names.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0][0]
                self.title_keys[f"topic:{cid}"] = topic_key(title)
                title = by_title.get(topic_key(title), title)
                aliases = []
            folded = {title.casefold()} | {a.casefold() for a in aliases}
            aliases += sorted({n for n in names if n.casefold() not in folded})
            types = found.types[cid]
            kind = types.most_common(1)[0][0] if types else schema.type_names()[0]
            picked, self.dropped[f"topic:{cid}"] = _pick_claims(claims, schema.write.max_notes)
            page = PagePlan(f"topic:{cid}", title, kind, aliases=aliases, sources=feeding, claims=picked)
            page.in_text = min(len(picked), schema.write.max_notes)
            pages[page.id] = page
        return pages

    def other_notes(
        self, sources: list[SourceInfo], pages: Mapping[str, PagePlan], shown: dict[str, dict[int, int]]
    ) -> None:
        """Each source page's notes of the lines no other page shows (those of each ROUND but a
        first share made by forked children: forked.py)."""
        made, none = self.made, dict[int, int]()
        items = [
            (src, pages[f"source:{src.path}"].summary_lines, shown.get(src.path, none)) for src in sources
        ]
        for at, end in itertools.pairwise(forked.rounds(len(items), ROUND)):
            some = items[at:end]
            with forked.Ahead(lambda item: made.notes_apart(*item), some, weight=_lines_of) as ahead:
                for i, (src, said, seen) in enumerate(some):
                    pages[f"source:{src.path}"].claims = made.other_notes(src, said, seen, ahead.done(i))
                    src.release()  # 100,000 sources' lines are not all split at once


def _rename(by_cid: dict[str, T], renamed: Mapping[str, str]) -> None:
    moved = {renamed[cid]: by_cid.pop(cid) for cid in renamed if cid in by_cid}  # at once: ids may swap
    by_cid.update(moved)


def memo_for(
    schema: Schema,
    rows: Mapping[str, Planned],
    save: Save | None = None,
    kept: bytes | None = None,
    since: bytes | None = None,
    folder: Path | None = None,
) -> Memo:
    """What the last plan made of each source (`rows`, from state.db), for plan() to reuse
    where a source's key is the same, and its merge of names and terms (`kept`, and what
    changed `since`: merge.py); what the plan makes anew goes to `save`; `folder`: where it
    may spill (wikic/spill.py)."""
    return Memo(rows, settings_for(schema), save, kept, since, folder)


def settings_for(schema: Schema) -> Settings:
    """What of schema.yaml one source's facts read."""
    pinned = [[t.name, *t.aliases] for t in _Clusters(schema).pinned.values()]
    return Settings(write_mode(schema), schema.lint.citation_threshold, pinned)


def plan(
    sources: list[SourceInfo], schema: Schema, sticky: dict[str, str], memo: Memo | None = None
) -> dict[str, PagePlan]:
    """The page set, keyed by page id, with slugs kept from earlier builds where possible;
    with `memo` (memo_for), each source's own part is planned again only where it changed."""
    pages = planned(sources, schema, sticky, memo).pages
    assert isinstance(pages, dict)  # planned in full
    return pages


@dataclass
class Trace:
    """A plan and what it went by, for the next plan to patch (replan.py)."""

    run: Run
    sources: list[SourceInfo]
    structural: list[Candidate]
    pages: Mapping[str, PagePlan]  # a dict, or replan.Pages


def planned(
    sources: list[SourceInfo], schema: Schema, sticky: dict[str, str], memo: Memo | None = None
) -> Trace:
    """plan(), with what it went by."""
    made = memo or memo_for(schema, {})
    clusters = _Clusters(schema)
    facts: dict[str, SourceFacts] = {}
    with Spilled(made.folder) as packed:  # the sources' packed names, held till merged: not in memory
        for at, end in itertools.pairwise(forked.rounds(len(sources), ROUND)):
            some = sources[at:end]
            with forked.Ahead(made.apart, some, weight=made.cost) as ahead:  # all but a first share: children
                for i, src in enumerate(some):  # its digest and lines let go once its facts are made
                    f = facts[src.path] = made.facts(src, ahead.done(i))
                    packed.add(src.path, f.structure)
                    f.structure = ""
                    src.release()
        run = Run(schema, made, clusters)
        pages = run.source_pages(sources, facts)
        named = _Lines({src.path: src for src in sources if not src.fallback})
        structural = made.candidates(named, packed.only(named))
    made.let_go_merge()
    run.from_structure(sources, facts, structural, pages)
    if renamed := clusters.named_by(sticky):  # every name in: the clusters named
        run.rename(renamed, pages)
    run.pinned(sources, facts)
    del facts  # what of them the pages need, they hold
    pages.update(run.topic_pages(titles(sources)))
    for page in pages.values():
        page.topics = [t for t in page.topics if t in pages]
    run.other_notes(sources, pages, _shown(pages))
    made.flush()
    _assign_slugs(pages, sticky)
    return Trace(run, sources, structural, pages)


def _lines_of(item: tuple[SourceInfo, Any, Any]) -> int:
    return item[0].count + 20


def titles(sources: Iterable[SourceInfo]) -> dict[str, str]:
    """A source about a topic names it best: "Canon law" (the article), not "The Canon Law"."""
    by_title: dict[str, str] = {}
    for src in sorted(sources, key=lambda s: s.path):
        by_title.setdefault(topic_key(src.title), src.title)
    return by_title


def _shown(pages: dict[str, PagePlan], only: set[str] | None = None) -> dict[str, dict[int, int]]:
    """How many characters of each source line (by source, then line) some topic page already
    shows as it is: a note cut short shows only its start. Of the sources `only` names, where
    given (their pages have no notes yet)."""
    shown: dict[str, dict[int, int]] = defaultdict(dict)
    topics = [p for pid, p in pages.items() if not pid.startswith("source:")]
    quoted = chain(  # not listed: 400,000 notes at 100,000 sources
        (
            (c.source, c.start, c.end, c.text)
            for p in topics
            for c in p.claims
            if only is None or c.source in only  # a few sources' notes on topics of thousands
        ),
        (
            (p.sources[0], a, b, t)
            for pid, p in pages.items()
            if pid.startswith("source:") and (only is None or p.sources[0] in only)
            for t, r in p.summary_lines
            for a, b in r
        ),
    )
    for source, start, end, text in quoted:
        size = len(text) - text.endswith("…") if start == end else 1 << 30
        lines = shown[source]
        for n in range(start, end + 1):
            lines[n] = max(lines.get(n, 0), size)
    return shown


class _Lines(Mapping[str, list[str]]):
    """Sources' lines by path, each read when asked for: candidates() reads few of them, and a
    settled source's are not read at all unless asked (sourceplan.SourceInfo)."""

    def __init__(self, sources: dict[str, SourceInfo]) -> None:
        self.sources = sources

    def __getitem__(self, path: str) -> list[str]:
        return self.sources[path].lines

    def __iter__(self) -> Iterator[str]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)

    def __contains__(self, path: object) -> bool:
        return path in self.sources  # its lines not read to tell


def _assign_slugs(pages: dict[str, PagePlan], sticky: dict[str, str]) -> None:
    """Slugs from titles; topic pages first, so a source titled like a topic gets `-source`."""
    for pid, slug in slugs_for(pages, sticky, lambda pid: pages[pid]).items():
        pages[pid].slug = slug


def slugs_for(ids: Iterable[str], sticky: dict[str, str], page: Callable[[str], PagePlan]) -> dict[str, str]:
    """Each page's slug: its sticky one where no page before it (by id) took it, else one from
    its title (`page`: asked only of those), topic pages first, so that a source titled like a
    topic gets `-source`."""
    ordered = sorted(ids)
    found = list(map(sticky.get, ordered))  # in C: an edit's plan asks for 100,000, most sticky
    slugs: dict[str, str]
    if all(found):
        slugs = dict(zip(ordered, cast("list[str]", found), strict=True))
    else:
        slugs = {pid: slug for pid, slug in zip(ordered, found, strict=True) if slug}
    taken = set(slugs.values())
    if len(taken) != len(slugs):  # a slug sticky to two pages: the first (by id) keeps it
        taken, slugs = set(), {}
        for pid in ordered:
            slug = sticky.get(pid)
            if slug and slug not in taken:
                slugs[pid] = slug
                taken.add(slug)
    # else none taken by a page before it: each keeps its own (an edit's plan: every page, most likely)
    unslugged = [pid for pid in ordered if pid not in slugs]
    for pid in sorted(unslugged, key=lambda pid: (pid.startswith("source:"), pid)):
        plan = page(pid)
        wanted = slugify(plan.title)
        if plan.type == "source" and wanted in taken:
            wanted = slugify(f"{plan.title} source")
        slugs[pid] = unique_slug(wanted, taken)
        taken.add(slugs[pid])
    return slugs
