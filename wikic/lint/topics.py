"""The deterministic lint rules about topics: missing-page (a term several pages treat as a
topic that has no page) and duplicate-page (pages with near-identical names), in the pieces
the lint cache patches them by (a page's mentions, a topic key's finding)."""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Iterator, Mapping
from functools import lru_cache

from rapidfuzz import fuzz, process

from wikic.lint.context import Context, Finding
from wikic.lint.names import Head, Names, head_of
from wikic.wiki.page import Page
from wikic.wiki.read import ATTACHMENT, Wiki

DIGITS = re.compile(r"\d+")


@lru_cache(maxsize=1 << 17)  # missing-page and duplicate-page ask for the same names
def topic_key(name: str) -> str:
    """The build's topic key (build/plan.py), imported when first asked: `wikic lint` with
    nothing changed never needs it, nor the build's modules it comes with."""
    from wikic.build.plan import topic_key as key

    return key(name)


def page_keys(wiki: Wiki) -> dict[str, str]:
    """Every page's names (title, aliases, slug as words) in topic_key form -> slug."""
    return keys_of(head_of(page) for page in wiki.pages.values())


def keys_of(heads: Iterable[Head]) -> dict[str, str]:
    """page_keys, from the pages' heads."""
    keys: dict[str, str] = {}
    for head in sorted(heads, key=lambda h: (h.type == "source", h.slug)):
        for name in [head.title, *head.aliases, head.slug.replace("-", " ")]:
            keys.setdefault(topic_key(name), head.slug)
    return keys


def head_keys(head: Head) -> set[str]:
    """The topic keys of one page's names (keys_of's, of that page alone)."""
    return {topic_key(name) for name in [head.title, *head.aliases, head.slug.replace("-", " ")]}


def key_counts(heads: Iterable[Head]) -> dict[str, int]:
    """Each topic key of the pages' names (the keys of keys_of) -> how many pages have it: a
    page that goes takes its keys out of them only where no other page has one (lint/came.py)."""
    counts: dict[str, int] = {}
    for head in heads:
        for key in head_keys(head):
            counts[key] = counts.get(key, 0) + 1
    return counts


# --- missing-page -----------------------------------------------------------------
_STOPWORDS_TEXT = """a an the and or of to in on for with by is are this that it not no"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def _term_ok(term: str) -> bool:
    words = term.split()
    return (
        3 <= len(term) <= 80
        and not term.startswith("(")
        and 1 <= len(words) <= 6
        and any(c.isalpha() for c in term)
        and not all(w.casefold() in STOPWORDS for w in words)
    )


def _mentions(page: Page, names: Names) -> Iterator[tuple[str, int]]:
    """Terms a page treats as topics: links to nothing, bold terms, plain items of a Topics list."""
    for link in page.links:
        if link.target and not names.resolve(link.target) and not ATTACHMENT.search(link.target):
            yield link.target.replace("-", " ") if link.label is None else link.text, link.line
    for term, line in page.bold:
        if "[[" not in term:
            yield term, line
    for block in page.blocks:
        if block.section == "topics" and block.kind == "paragraph" and not block.links:
            term = re.split(r":\s|\[", block.text, maxsplit=1)[0].strip()
            yield term, block.line


Mentions = dict[str, tuple[int, dict[str, int]]]  # topic key -> (first line, term -> how often)


def page_mentions(page: Page, names: Names, have: Container[str]) -> Mentions:
    """The terms with no page that the page treats as topics, by topic key; `have`: the topic
    keys of every page's names (page_keys)."""
    found: Mentions = {}
    for term, line in _mentions(page, names):
        term = " ".join(term.split())
        key = topic_key(term)
        if not key or not _term_ok(term) or key in have or names.resolve(term):
            continue
        terms = found.setdefault(key, (line, {}))[1]
        terms[term] = terms.get(term, 0) + 1
    return found


def missing_finding(
    key: str, where: Mapping[str, tuple[int, dict[str, int]]], threshold: int
) -> Finding | None:
    """The finding for a topic key from the pages that mention it (path -> first line, terms)."""
    if len(where) < threshold:
        return None
    rels = sorted(where)
    surface: Counter[str] = Counter()
    for rel in rels:  # in the pages' order: the first of equally common names is shown
        surface.update(where[rel][1])
    name = surface.most_common(1)[0][0]
    shown = ", ".join(rels[:5]) + (f" and {len(rels) - 5} more" if len(rels) > 5 else "")
    return Finding(
        "missing-page",
        rels[0],
        where[rels[0]][0],
        f'"{name}" is treated as a topic in {len(rels)} pages ({shown}) but has no page; '
        "add a source about it, or pin it under topics: in schema.yaml",
        also=tuple(rels[1:]),
    )


def missing_page(ctx: Context) -> Iterator[Finding]:
    have = page_keys(ctx.wiki)
    where: dict[str, dict[str, tuple[int, dict[str, int]]]] = defaultdict(dict)
    for page in ctx.wiki.pages.values():
        for key, found in page_mentions(page, ctx.names, have).items():
            where[key][page.rel] = found
    for key in sorted(where):
        finding = missing_finding(key, where[key], ctx.schema.lint.missing_page_threshold)
        if finding is not None:
            yield finding


# --- duplicate-page ---------------------------------------------------------------
def _near_pairs(keys: list[str], cutoff: int) -> Iterator[tuple[int, int, float]]:
    """Index pairs (i < j) of keys whose fuzz.ratio is at least cutoff.

    fuzz.ratio >= c needs len(b) <= len(a) * (2 - c/100) / (c/100): each length
    is compared only with the lengths in that window (a few times fewer pairs)."""
    order = sorted(range(len(keys)), key=lambda i: len(keys[i]))
    lengths = [len(keys[i]) for i in order]
    stretch = (2 - cutoff / 100) / (cutoff / 100)
    start = 0
    while start < len(order):
        end = bisect.bisect_right(lengths, lengths[start])
        stop = bisect.bisect_right(lengths, int(lengths[start] * stretch + 1e-6))
        rows, cols = order[start:end], order[start:stop]
        for r, c, score in _scores([keys[i] for i in rows], [keys[j] for j in cols], cutoff):
            i, j = rows[r], cols[c]
            if i != j and (c >= end - start or i < j):  # each pair once
                yield min(i, j), max(i, j), score
        start = end


SMALL = 200_000  # pairs: fewer are scored row by row, as the matrix would have them, without numpy


def _scores(rows: list[str], cols: list[str], cutoff: int) -> Iterator[tuple[int, int, float]]:
    """(row, column, score) for every pair at or above cutoff, as cdist's uint8 matrix has them
    (whichever way they are scored: the findings never depend on the wiki's size)."""
    try:
        if len(rows) * len(cols) <= SMALL:  # importing numpy (0.1 s) costs more than these take
            raise ImportError
        import numpy as np
    except ImportError:
        yield from _row_scores(rows, cols, cutoff)
        return
    for first in range(0, len(rows), 1000):
        matrix = process.cdist(
            rows[first : first + 1000], cols, scorer=fuzz.ratio, score_cutoff=cutoff, dtype=np.uint8
        )
        hits_r, hits_c = np.nonzero(matrix)
        for r, c in zip(hits_r.tolist(), hits_c.tolist(), strict=True):
            yield first + r, c, float(matrix[r, c])


def _row_scores(rows: list[str], cols: list[str], cutoff: int) -> Iterator[tuple[int, int, float]]:
    """_scores without numpy: each row's hits (scored in C), in the matrix's order, each score
    as its uint8 cell holds it (rounded half up; one that rounds to 0 is no hit)."""
    for r, row in enumerate(rows):
        hits = process.extract(row, cols, scorer=fuzz.ratio, limit=None, score_cutoff=cutoff)
        for _, score, c in sorted(hits, key=lambda hit: hit[2]):
            cell = math.floor(score + 0.5)
            if cell:
                yield r, c, float(cell)


def duplicate_page(ctx: Context) -> Iterator[Finding]:
    """Pages (other than source summaries, which are one per file) with near-identical names."""
    heads = [head_of(page) for page in ctx.wiki.pages.values()]
    return duplicates(heads, ctx.schema.lint.duplicate_threshold)


def duplicates(heads: Iterable[Head], threshold: int) -> Iterator[Finding]:
    """duplicate-page, from the pages' heads (`threshold`: lint.duplicate_threshold)."""
    owners: dict[str, set[str]] = defaultdict(set)
    shown: dict[tuple[str, str], str] = {}
    rels: dict[str, str] = {}
    for head in heads:
        if head.type == "source" or head.unread:
            continue
        rels[head.slug] = head.rel
        for name in {head.title, *head.aliases}:
            key = topic_key(name)
            if key:
                owners[key].add(head.slug)
                shown.setdefault((key, head.slug), name)
    keys = sorted(owners)
    best: dict[tuple[str, str], tuple[float, dict[str, str]]] = {}

    def consider(a: str, key_a: str, b: str, key_b: str, score: float) -> None:
        pair = (min(a, b), max(a, b))
        if a != b and score > best.get(pair, (-1.0, {}))[0]:
            best[pair] = (score, {a: key_a, b: key_b})

    for key in keys:
        for a in owners[key]:
            for b in owners[key]:
                consider(a, key, b, key, 100.0)
    for i, j, score in _near_pairs(keys, threshold):
        if DIGITS.findall(keys[i]) != DIGITS.findall(keys[j]):
            continue  # "Python 3.10" and "Python 3.11" are different things
        for a in owners[keys[i]]:
            for b in owners[keys[j]]:
                consider(a, keys[i], b, keys[j], score)
    for (a, b), (score, key_of) in sorted(best.items()):
        yield Finding(
            "duplicate-page",
            rels[b],
            1,
            f'"{shown[(key_of[b], b)]}" looks like a twin of "{shown[(key_of[a], a)]}" ({rels[a]}, '
            f"{score:.0f}% alike); merge them, or make one an alias of the other in schema.yaml",
            also=(rels[a],),
        )
