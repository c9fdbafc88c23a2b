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

from wikic.build.digest import says_more, supporting_lines
from wikic.config import Schema
from wikic.wiki.overlap import content_words, support
from wikic.wiki.page import slugify, unique_slug

FUZZY_CUTOFF = 92
MAX_CLAIMS = 10
MAX_CLAIM_CHARS = 400


@dataclass(frozen=True)
class Claim:
    text: str
    source: str
    start: int
    end: int


@dataclass
class PagePlan:
    id: str
    title: str
    type: str
    slug: str = ""
    aliases: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    summary: str = ""
    topics: list[str] = field(default_factory=list)  # source pages: the topic page ids it feeds


@dataclass
class SourceInfo:
    path: str
    title: str
    lines: list[str]
    digest: dict[str, Any]


def topic_key(name: str) -> str:
    """The form under which names count as the same topic."""
    key = re.sub(r"[^\w]+", " ", name.casefold()).strip()
    key = re.sub(r"^(the|a|an) ", "", key)
    words = [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in key.split()]
    return " ".join(words)


def claim_text(lines: list[str], start: int, end: int) -> str:
    text = " ".join(line.strip().lstrip("#>-*").strip() for line in lines[start - 1 : end])
    text = " ".join(text.split())
    return text[:MAX_CLAIM_CHARS].rstrip() + ("…" if len(text) > MAX_CLAIM_CHARS else "")


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
    """The digest's lines for a topic as claims. A line that only repeats the name (a text
    file's title line, which digests cached before this check may point at) is no claim;
    when nothing else is left, the source's lines that name the topic are."""
    found = [Claim(claim_text(src.lines, a, b), src.path, a, b) for a, b in ranges]
    found = [c for c in found if says_more(c.text, name)]
    if not found:
        lines = supporting_lines(name, src.lines)
        found = [Claim(claim_text(src.lines, n, n), src.path, n, n) for n in lines]
    return found


def _summary(src: SourceInfo, threshold: int) -> str:
    """The digest's summary; when the model gave none worth the name, or one the source does
    not support (as lint's bad-citation measures it), the source's own lead (after its title)."""
    summary = str(src.digest.get("summary") or "")
    if sum(ch.isalpha() for ch in summary) >= 20 and (
        support(summary, content_words(" ".join(src.lines))) >= threshold
    ):
        return summary
    text = " ".join(
        line.strip()
        for line in src.lines
        if line.strip() and not line.lstrip().startswith("#") and line.strip() != src.title
    )
    return " ".join(re.split(r"(?<=[.!?])\s+", text)[:2])[:400]


def _mentions(names: list[str], sources: list[SourceInfo]) -> list[Claim]:
    """Lines of any source that name a pinned topic: pinned topics are grounded by code too."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names if n) + r")\b", re.IGNORECASE)
    found = []
    for src in sources:
        for n, line in enumerate(src.lines, start=1):
            if pattern.search(line) and not line.lstrip().startswith("#"):
                found.append(Claim(claim_text(src.lines, n, n), src.path, n, n))
    return found


def _pick_claims(claims: list[Claim]) -> list[Claim]:
    """Deduplicated, and round-robin over sources so every source is heard."""
    seen: set[str] = set()
    by_source: dict[str, list[Claim]] = defaultdict(list)
    for c in sorted(claims, key=lambda c: (c.source, c.start, c.end)):
        if c.text and c.text not in seen:
            seen.add(c.text)
            by_source[c.source].append(c)
    picked: list[Claim] = []
    queues = [by_source[s] for s in sorted(by_source)]
    while len(picked) < MAX_CLAIMS and any(queues):
        for q in queues:
            if q and len(picked) < MAX_CLAIMS:
                picked.append(q.pop(0))
    return sorted(picked, key=lambda c: (c.source, c.start, c.end))


def plan(sources: list[SourceInfo], schema: Schema, sticky: dict[str, str]) -> dict[str, PagePlan]:
    """The page set, keyed by page id, with slugs kept from earlier builds where possible."""
    clusters = _Clusters(schema)
    names: dict[str, Counter[str]] = defaultdict(Counter)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    claims: dict[str, list[Claim]] = defaultdict(list)
    pages: dict[str, PagePlan] = {}
    for src in sorted(sources, key=lambda s: s.path):
        summary = _summary(src, schema.lint.citation_threshold)
        page = PagePlan(f"source:{src.path}", src.title, "source", sources=[src.path], summary=summary)
        pages[page.id] = page
        for topic in src.digest.get("topics", []):
            cid = clusters.find(topic["name"])
            names[cid][topic["name"]] += 1
            types[cid][topic["type"]] += 1
            claims[cid] += _claims(topic["name"], topic["lines"], src)
            if f"topic:{cid}" not in page.topics:
                page.topics.append(f"topic:{cid}")
    for cid, topic in clusters.pinned.items():
        names[cid][topic.name] += 0
        types[cid][topic.type] += 1000
        claims[cid] += _mentions([topic.name, *topic.aliases], sources)
    # A source about a topic names it best: "Canon law" (the article), not "The Canon Law".
    by_title: dict[str, str] = {}
    for src in sorted(sources, key=lambda s: s.path):
        by_title.setdefault(topic_key(src.title), src.title)
    for cid in sorted(names):
        feeding = sorted({c.source for c in claims[cid]})
        if cid not in clusters.pinned and len(feeding) < schema.min_topic_sources:
            continue
        if cid in clusters.pinned:
            pinned = clusters.pinned[cid]
            title, aliases = pinned.name, list(pinned.aliases)
        else:
            title = sorted(names[cid].items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0][0]
            title = by_title.get(topic_key(title), title)
            aliases = []
        folded = {title.casefold()} | {a.casefold() for a in aliases}
        aliases += sorted({n for n in names[cid] if n.casefold() not in folded})
        kind = types[cid].most_common(1)[0][0] if types[cid] else schema.type_names()[0]
        pages[f"topic:{cid}"] = PagePlan(
            f"topic:{cid}", title, kind, aliases=aliases, sources=feeding, claims=_pick_claims(claims[cid])
        )
    for page in pages.values():
        page.topics = [t for t in page.topics if t in pages]
    _assign_slugs(pages, sticky)
    return pages


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
