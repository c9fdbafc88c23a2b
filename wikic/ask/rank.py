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
        self.tf = tf
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 0.0
        self.postings: dict[str, list[int]] = {}
        for i, c in enumerate(self.tf):
            for w in c:
                self.postings.setdefault(w, []).append(i)
        n = len(tf)
        self.idf = {w: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for w, p in self.postings.items()}
        avg = self.avg
        self.norm = [self.k1 * (1 - self.b + self.b * ln / avg) if avg else self.k1 for ln in self.len]

    def scores(self, query: str) -> list[float]:
        out = [0.0] * len(self.tf)
        for t in set(words(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.postings[t]:
                f = self.tf[i][t]
                out[i] += idf * f * (self.k1 + 1) / (f + self.norm[i])
        return out
