"""A digest's answer validated as the build takes it: the shortcuts that spare it work give
the answers of the work they spare."""

from __future__ import annotations

import random

from rapidfuzz import fuzz

from wikic.build.digest import MENTION, mentions


def test_a_line_mentions_a_name_as_the_fuzzy_match_says() -> None:
    """mentions() takes a line holding the name as it is without the fuzzy match: the same lines."""
    rng = random.Random(17)
    for _ in range(3000):
        lines = ["".join(rng.choices("ab cdÉé-", k=rng.randint(0, 20))) for _ in range(6)]
        name = "".join(rng.choices("ab cdÉé-", k=rng.randint(0, 6)))
        key = name.casefold()
        fuzzy = [n for n in range(1, 7) if fuzz.partial_ratio(key, lines[n - 1].casefold()) >= MENTION]
        assert mentions(name, lines, list(range(1, 7))) == fuzzy, (name, lines)
