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


class BM25:
    """Okapi BM25 (k1, b) over a fixed list of documents."""

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tf = [Counter(words(d)) for d in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 0.0
        df: Counter[str] = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}

    def scores(self, query: str) -> list[float]:
        terms = set(words(query))
        out = []
        for tf, length in zip(self.tf, self.len, strict=True):
            norm = self.k1 * (1 - self.b + self.b * length / self.avg) if self.avg else self.k1
            s = 0.0
            for t in terms:
                f = tf.get(t, 0)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out
