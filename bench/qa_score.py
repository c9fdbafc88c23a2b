"""Scoring for bench/eval_qa.py: SQuAD-style normalisation, exact match and token
F1 (each the maximum over the acceptable answers), verbatim occurrence of an
answer in a text, and averages per question type."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = frozenset(string.punctuation)


def normalise(text: str) -> str:
    """SQuAD's normalize_answer: lower-case, drop punctuation and articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in PUNCTUATION)
    text = ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalise(prediction) == normalise(gold))


def f1(prediction: str, gold: str) -> float:
    """Token F1 between the normalised prediction and gold answer."""
    pred, ref = normalise(prediction).split(), normalise(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def best(metric: Any, prediction: str, answers: Sequence[str]) -> float:
    """The metric's maximum over the acceptable answers (0 when there are none)."""
    return max((metric(prediction, a) for a in answers), default=0.0)


def occurs(answer: str, text: str) -> bool:
    """The answer occurs in the text as whole normalised words (so '35' is not found in '1350')."""
    needle = normalise(answer)
    return bool(needle) and f" {needle} " in f" {normalise(text)} "


def any_occurs(answers: Iterable[str], text: str) -> bool:
    hay = f" {normalise(text)} "
    return any(n and f" {n} " in hay for n in (normalise(a) for a in answers))


def mean(values: Iterable[float]) -> float | None:
    vals = list(values)
    return sum(vals) / len(vals) if vals else None


def summarise(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Means of `keys` over rows (None values skipped), overall and per row['type']."""

    def agg(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(group)}
        for k in keys:
            out[k] = mean(r[k] for r in group if r.get(k) is not None)
        return out

    types = sorted({r["type"] for r in rows})
    return {"overall": agg(rows), "by_type": {t: agg([r for r in rows if r["type"] == t]) for t in types}}
