"""Ranking documents against a query: a small Okapi BM25 over word tokens."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

WORD = re.compile(r"[^\W_]+")
_STOP = (
    "a an and are as at be by do does for from how in is it its of on or that the this to was what "
    "when where which who why with"
)
STOPWORDS = frozenset(_STOP.split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens, stop words removed; a crude plural fold keeps 'index'/'indexes' close."""
    out = []
    for w in WORD.findall(text.casefold()):
        if w in STOPWORDS:
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.append(w)
    return out


def terms(text: str) -> dict[str, int]:
    """A document's words and how often each occurs, first occurrence first (words())."""
    return dict(Counter(words(text)))


def idf(n: int, df: int) -> float:
    """A term's weight, in `df` of `n` documents."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def norm(length: int, avg: float, k1: float, b: float) -> float:
    """What a document of `length` words adds to a term's count in its score."""
    return k1 * (1 - b + b * length / avg) if avg else k1


class BM25:
    """Okapi BM25 (k1, b) over a fixed list of documents. Scoring walks the postings of the
    query's terms only, so one query costs what its terms occur in, not the whole list."""

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self._index([Counter(words(d)) for d in docs], k1, b)

    @classmethod
    def of_terms(cls, tf: list[dict[str, int]], k1: float = 1.5, b: float = 0.75) -> BM25:
        """Over documents already counted (terms() of each, as ask's index keeps them)."""
        bm25 = cls.__new__(cls)
        bm25._index(tf, k1, b)
        return bm25

    def _index(self, tf: list[dict[str, int]], k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.known: frozenset[str] | None = None  # every term's postings (of_hits: those asked)
        self.n = len(tf)
        lengths = [sum(c.values()) for c in tf]
        self.avg = (sum(lengths) / len(lengths)) if lengths else 0.0
        self.postings: dict[str, list[int]] = {}  # the documents each term is in, in order
        self.counts: dict[str, list[int]] = {}  # and its count in each
        for i, c in enumerate(tf):
            for w, f in c.items():
                if w in self.postings:
                    self.postings[w].append(i)
                    self.counts[w].append(f)
                else:
                    self.postings[w], self.counts[w] = [i], [f]
        self.idf = {w: idf(self.n, len(p)) for w, p in self.postings.items()}
        self.norm = [norm(ln, self.avg, k1, b) for ln in lengths]

    @classmethod
    def of_hits(
        cls,
        n: int,
        total: int,
        lengths: dict[int, int],
        postings: dict[str, list[int]],
        counts: dict[str, list[int]],
        k1: float = 1.5,
        b: float = 0.75,
    ) -> BM25:
        """Over `n` documents of `total` words in all, of which only those a query's terms
        occur in are known (ask/scan.py): `lengths`, the words of each; `postings`, the
        documents each term is in, in order, and `counts`, its count in each. Its scores for a
        query of those terms are those of the BM25 of all n documents, to the bit."""
        bm25 = cls.__new__(cls)
        bm25.k1, bm25.b = k1, b
        bm25.known = frozenset(postings)
        bm25.n = n
        bm25.avg = total / n if n else 0.0
        bm25.norm = [k1] * n
        for i, length in lengths.items():
            bm25.norm[i] = norm(length, bm25.avg, k1, b)
        bm25.postings, bm25.counts = postings, counts
        bm25.idf = {t: idf(n, len(found)) for t, found in postings.items() if found}
        return bm25

    def scores(self, query: str) -> list[float]:
        asked = set(words(query))
        if self.known is not None and not asked <= self.known:
            raise RuntimeError(f"a BM25 of the terms {sorted(self.known)} asked for {sorted(asked)}")
        out = [0.0] * self.n
        norms, k1 = self.norm, self.k1
        for t in asked:
            weight = self.idf.get(t)
            if weight is None:
                continue
            for i, f in zip(self.postings[t], self.counts[t], strict=True):
                out[i] += weight * f * (k1 + 1) / (f + norms[i])
        return out
