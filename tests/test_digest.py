"""A digest's answer validated as the build takes it: the shortcuts that spare it work give
the answers of the work they spare."""

from __future__ import annotations

import random
import re

from rapidfuzz import fuzz

from wikic.build.digest import MENTION, PROPER, mentions


def test_a_line_mentions_a_name_as_the_fuzzy_match_says() -> None:
    """mentions() takes a line holding the name as it is without the fuzzy match: the same lines."""
    rng = random.Random(17)
    for _ in range(3000):
        lines = ["".join(rng.choices("ab cdÉé-", k=rng.randint(0, 20))) for _ in range(6)]
        name = "".join(rng.choices("ab cdÉé-", k=rng.randint(0, 6)))
        key = name.casefold()
        fuzzy = [n for n in range(1, 7) if fuzz.partial_ratio(key, lines[n - 1].casefold()) >= MENTION]
        assert mentions(name, lines, list(range(1, 7))) == fuzzy, (name, lines)


def test_capitalised_phrases_as_the_plain_pattern_finds_them() -> None:
    """PROPER checks what precedes a phrase's capital after taking it in (a scan for the
    capital, not a try at every character): the phrases the plain pattern finds."""
    plain = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w-]+(?:\s+(?:of|for|la|à|de|the)?\s*[A-Z][\w-]+)+)")
    rng = random.Random(4)
    tokens = ["A", "Ab", "Gossip", "Routing", "of", "the", "la", "à", "de", ".", "!", "?", " ", "\n", "\t"]
    tokens += ["x", "é", "É", "_", "-", "Ünï", "1", "aB", "Q-"]
    for _ in range(20000):
        text = "".join(rng.choice(tokens) + rng.choice(["", " ", ". "]) for _ in range(rng.randint(0, 9)))
        assert PROPER.findall(text) == plain.findall(text), repr(text)
