"""The plan stage (no model): merge the topics of all digests into the page set.

One summary page per source, one page per merged topic. Names are merged by
normalisation, the aliases pinned in schema.yaml and fuzzy matching (rapidfuzz).
A page's claims are the source lines the digests pointed at, so the plan is the
dependency graph: page <- the sources and lines that feed it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from wikic.build.candidates import candidates, is_topic_name
from wikic.build.digest import says_more, supporting_lines
from wikic.build.notes import chunks, claim_text, is_text, notes_of, section_of, shorten
from wikic.config import Schema
from wikic.wiki.overlap import content_words
from wikic.wiki.page import slugify, unique_slug
from wikic.wiki.support import check_against, sentences

FUZZY_CUTOFF = 92
MIN_FACT_WORDS = 3  # content words a line needs to count as stating a fact
SMALL_MODELS = ("smollm2", "135m", "360m")  # model names known to write unfaithful prose


@dataclass(frozen=True)
class Claim:
    text: str
    source: str
    start: int
    end: int
    section: str = ""  # the heading over its lines: a note under "## Content hashing" defines it


def _claim(lines: list[str], path: str, a: int, b: int) -> Claim:
    return Claim(claim_text(lines, a, b), path, a, b, section_of(lines, a))


@dataclass
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


@dataclass
class SourceInfo:
    path: str
    title: str
    lines: list[str]
    digest: dict[str, Any]


# "William Winter (politician)": the subject, then what tells it apart
DISAMBIGUATED = re.compile(r"\s*\([^()]*\)\s*$")


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


def _claims(name: str, ranges: list[list[int]], src: SourceInfo) -> list[Claim]:
    """The digest's lines for a topic as claims, a note per line. A line that only repeats the
    name (a text file's title line, which digests cached before this check may point at) is no
    claim; when nothing else is left, the source's lines that name the topic are, or, for the
    source's own subject, its lead."""
    numbers = [n for a, b in ranges for n in range(a, b + 1)]
    found = [_claim(src.lines, src.path, a, b) for a, b in notes_of(src.lines, numbers)]
    found = [c for c in found if says_more(c.text, name)]
    if not found:
        spans = notes_of(src.lines, supporting_lines(name, src.lines))
        found = [_claim(src.lines, src.path, a, b) for a, b in spans]
    if not found and topic_key(name) == topic_key(DISAMBIGUATED.sub("", src.title)):
        # "William Winter", the subject of "William Winter (politician)", whose lead says
        # "William Forrest Winter (born 1923) is ...": the lead is about it
        lead = [n for n, line in enumerate(src.lines, 1) if is_text(line) and line.strip() != src.title]
        found = [_claim(src.lines, src.path, a, b) for a, b in notes_of(src.lines, lead[:1])]
    return found


def _summary(src: SourceInfo, threshold: int) -> list[tuple[str, list[list[int]]]]:
    """The digest's summary sentences with the lines that support them; a summary cached as
    plain text is checked against the whole source's best lines. When none is left, the
    source's own lead (after its title), cited to its lines."""
    raw = src.digest.get("summary") or []
    kept = [(str(s["text"]), s["lines"]) for s in raw if isinstance(s, dict) and s.get("lines")]
    if isinstance(raw, str) and sum(ch.isalpha() for ch in raw) >= 20:
        numbers = [n for n, line in enumerate(src.lines, 1) if is_text(line) and line.strip() != src.title]
        picked, verdict = check_against(raw, [src.lines[n - 1] for n in numbers], threshold, limit=3)
        kept = [(raw, [[numbers[i], numbers[i]] for i in picked])] if verdict.ok else []
    return kept or _lead(src)


def _lead(src: SourceInfo) -> list[tuple[str, list[list[int]]]]:
    """The source's own first sentences (after its title), cited to their lines."""
    lead = [n for n, line in enumerate(src.lines, 1) if is_text(line) and line.strip() != src.title]
    for a, b in notes_of(src.lines, lead[:1]):
        said = sentences(claim_text(src.lines, a, b))[:2]
        return [(shorten(" ".join(said), 400), [[a, b]])] if said else []
    return []


def write_mode(schema: Schema) -> str:
    """prose or notes, for every topic page of this build (and source summaries: in notes mode
    a source's page opens with its own lead, not the model's summary)."""
    if schema.write.mode != "auto":
        return schema.write.mode
    name = schema.model.name.casefold()
    small = schema.model.backend == "llama" and any(tag in name for tag in SMALL_MODELS)
    return "notes" if small else "prose"


def _mentions(names: list[str], sources: list[SourceInfo]) -> list[Claim]:
    """Lines of any source that name a pinned topic: pinned topics are grounded by code too."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names if n) + r")\b", re.IGNORECASE)
    found = []
    for src in sources:
        numbers = [n for n, line in enumerate(src.lines, start=1) if pattern.search(line) and is_text(line)]
        found += [_claim(src.lines, src.path, a, b) for a, b in notes_of(src.lines, numbers)]
    return found


def _pick_claims(claims: list[Claim], in_text: int) -> list[Claim]:
    """Deduplicated; the first `in_text` picked round-robin over sources, so that every source
    is heard in the text, then the rest; each group in source order."""
    seen: set[str] = set()
    lines: set[tuple[str, int]] = set()
    by_source: dict[str, list[Claim]] = defaultdict(list)
    for c in sorted(claims, key=lambda c: (c.source, c.start, -c.end)):
        if c.text and c.text not in seen and (c.source, c.start) not in lines:
            seen.add(c.text)
            lines.update((c.source, n) for n in range(c.start, c.end + 1))
            by_source[c.source].append(c)
    picked: list[Claim] = []
    queues = [by_source[s] for s in sorted(by_source)]
    while len(picked) < in_text and any(queues):
        for q in queues:
            if q and len(picked) < in_text:
                picked.append(q.pop(0))
    rest = [c for q in queues for c in q]
    order = lambda c: (c.source, c.start, c.end)  # noqa: E731
    return sorted(picked, key=order) + sorted(rest, key=order)


@dataclass
class _Topics:
    """Topics as the digests and the structure find them, by cluster id: the names they go
    by (with counts), the page types proposed for them, and their notes."""

    names: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    types: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    claims: dict[str, list[Claim]] = field(default_factory=lambda: defaultdict(list))


def _feeds(page: PagePlan, cid: str) -> None:
    if f"topic:{cid}" not in page.topics:
        page.topics.append(f"topic:{cid}")


def _from_structure(
    sources: list[SourceInfo],
    schema: Schema,
    clusters: _Clusters,
    found: _Topics,
    pages: dict[str, PagePlan],
) -> None:
    """Names and terms two or more sources mention (candidates.py) join the topics, as new pages or as
    more notes for the pages the model found, from the sources whose digest did not name them
    (where it did, its lines stand: a source's notes do not depend on the other sources)."""
    by_path = {src.path: src for src in sources}
    fed = {(c.source, cid) for cid, notes in found.claims.items() for c in notes}
    named = {src.path: src.lines for src in sources if not src.digest.get("fallback")}
    for cand in candidates(named):
        cid = clusters.find(cand.name)
        if cid not in found.names:
            found.types[cid][cand.kind if cand.kind in schema.type_names() else schema.type_names()[0]] += 1
        found.names[cid][cand.name] += 0
        for path, numbers in sorted(cand.lines.items()):
            if (path, cid) in fed:
                continue
            src = by_path[path]
            spans = notes_of(src.lines, numbers)
            notes = [_claim(src.lines, path, a, b) for a, b in spans]
            found.claims[cid] += [c for c in notes if says_more(c.text, cand.name)]
            _feeds(pages[f"source:{path}"], cid)
    for src in sources:  # a source titled like a pinned topic is about it: all its lines are notes
        pinned = clusters.by_key.get(topic_key(src.title))
        if pinned is not None and pinned in clusters.pinned:
            numbers = [n for n, line in enumerate(src.lines, start=1) if is_text(line) and n > 1]
            spans = notes_of(src.lines, numbers)
            found.claims[pinned] += [_claim(src.lines, src.path, a, b) for a, b in spans]
            _feeds(pages[f"source:{src.path}"], pinned)


def plan(sources: list[SourceInfo], schema: Schema, sticky: dict[str, str]) -> dict[str, PagePlan]:
    """The page set, keyed by page id, with slugs kept from earlier builds where possible."""
    clusters = _Clusters(schema)
    found = _Topics()
    pages = _source_pages(sources, schema, clusters, found)
    _from_structure(sources, schema, clusters, found, pages)
    for cid, topic in clusters.pinned.items():
        found.names[cid][topic.name] += 0
        found.types[cid][topic.type] += 1000
        found.claims[cid] += _mentions([topic.name, *topic.aliases], sources)
    pages.update(_topic_pages(sources, schema, clusters, found))
    for page in pages.values():
        page.topics = [t for t in page.topics if t in pages]
    _other_notes(sources, pages)
    _assign_slugs(pages, sticky)
    return pages


def _source_pages(
    sources: list[SourceInfo], schema: Schema, clusters: _Clusters, found: _Topics
) -> dict[str, PagePlan]:
    """One page per source, with its summary; the topics its digest names go into `found`."""
    mode = write_mode(schema)
    pages: dict[str, PagePlan] = {}
    for src in sorted(sources, key=lambda s: s.path):
        said = _summary(src, schema.lint.citation_threshold) if mode == "prose" else _lead(src)
        summary = " ".join(text for text, _ in said)
        page = PagePlan(f"source:{src.path}", src.title, "source", sources=[src.path], summary=summary)
        page.summary_lines = said
        pages[page.id] = page
        for topic in src.digest.get("topics", []):
            if not is_topic_name(topic["name"]):
                continue  # its lines stay on the source's page
            cid = clusters.find(topic["name"])
            found.names[cid][topic["name"]] += 1
            found.types[cid][topic["type"]] += 1
            found.claims[cid] += _claims(topic["name"], topic["lines"], src)
            _feeds(page, cid)
    return pages


def _topic_pages(
    sources: list[SourceInfo], schema: Schema, clusters: _Clusters, found: _Topics
) -> dict[str, PagePlan]:
    """A page per topic fed by enough sources (or pinned in schema.yaml), titled by its most
    used name (a source titled like it names it best), its notes picked for the text."""
    # A source about a topic names it best: "Canon law" (the article), not "The Canon Law".
    by_title: dict[str, str] = {}
    for src in sorted(sources, key=lambda s: s.path):
        by_title.setdefault(topic_key(src.title), src.title)
    pages: dict[str, PagePlan] = {}
    for cid in sorted(found.names):
        names, claims = found.names[cid], found.claims[cid]
        feeding = sorted({c.source for c in claims})
        if cid not in clusters.pinned and len(feeding) < schema.min_topic_sources:
            continue
        if cid in clusters.pinned:
            pinned = clusters.pinned[cid]
            title, aliases = pinned.name, list(pinned.aliases)
        else:
            title = sorted(names.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0][0]
            title = by_title.get(topic_key(title), title)
            aliases = []
        folded = {title.casefold()} | {a.casefold() for a in aliases}
        aliases += sorted({n for n in names if n.casefold() not in folded})
        types = found.types[cid]
        kind = types.most_common(1)[0][0] if types else schema.type_names()[0]
        picked = _pick_claims(claims, schema.write.max_notes)
        page = PagePlan(f"topic:{cid}", title, kind, aliases=aliases, sources=feeding, claims=picked)
        page.in_text = min(len(picked), schema.write.max_notes)
        pages[page.id] = page
    return pages


def _shown(pages: dict[str, PagePlan]) -> dict[tuple[str, int], int]:
    """How many characters of each source line some topic page already shows as it is: a
    note cut short shows only its start."""
    shown: dict[tuple[str, int], int] = {}
    quoted = [(c.source, c.start, c.end, c.text) for p in pages.values() for c in p.claims]
    quoted += [
        (p.sources[0], a, b, t)
        for p in pages.values()
        if p.type == "source"
        for t, r in p.summary_lines
        for a, b in r
    ]
    for source, start, end, text in quoted:
        size = len(text) - text.endswith("…") if start == end else 1 << 30
        for n in range(start, end + 1):
            shown[(source, n)] = max(shown.get((source, n), 0), size)
    return shown


def _other_notes(sources: list[SourceInfo], pages: dict[str, PagePlan]) -> None:
    """A source page lists what of the source's lines no other page shows: lines no topic page
    and not its lead carries, and the rest of a line shown cut short. Every fact of a source
    is somewhere in the wiki's text."""
    shown = _shown(pages)
    for src in sources:
        for text, ranges in pages[f"source:{src.path}"].summary_lines:  # the lead, as it is
            for a, b in ranges:
                if a == b and claim_text(src.lines, a, a, limit=1 << 30).startswith(text):
                    shown[(src.path, a)] = max(shown.get((src.path, a), 0), len(text))
        whole: list[int] = []
        rests: list[Claim] = []
        for n, line in enumerate(src.lines, start=1):
            if not is_text(line) or len(content_words(line)) < MIN_FACT_WORDS:
                continue
            full = claim_text(src.lines, n, n, limit=1 << 30)
            size = shown.get((src.path, n), 0)
            if size == 0:
                whole.append(n)
            elif size < len(full) and len(content_words(full[size:])) >= MIN_FACT_WORDS:
                rests += [Claim(t, src.path, n, n) for t in chunks(full[size:].strip())]
        notes = []
        for a, b in notes_of(src.lines, whole):
            notes += [Claim(t, src.path, a, b) for t in chunks(claim_text(src.lines, a, b, limit=1 << 30))]
        pages[f"source:{src.path}"].claims = sorted(notes + rests, key=lambda c: (c.start, c.end))


def _assign_slugs(pages: dict[str, PagePlan], sticky: dict[str, str]) -> None:
    """Slugs from titles; topic pages first, so a source titled like a topic gets `-source`."""
    taken: set[str] = set()
    for pid in sorted(pages):
        slug = sticky.get(pid)
        if slug and slug not in taken:
            pages[pid].slug = slug
            taken.add(slug)
    for pid in sorted(pages, key=lambda pid: (pid.startswith("source:"), pid)):
        page = pages[pid]
        if not page.slug:
            wanted = slugify(page.title)
            if page.type == "source" and wanted in taken:
                wanted = slugify(f"{page.title} source")
            page.slug = unique_slug(wanted, taken)
            taken.add(page.slug)
