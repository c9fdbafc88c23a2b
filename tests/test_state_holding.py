"""state.connection.holding: the rows whose text holds every string of a group, found by
SQLite (GLOB patterns), exactly as Python's `in` finds them."""

from __future__ import annotations

import random
import sqlite3

from wikic.state.connection import holding

ALPHABET = ["a", "b", "A", "*", "?", "[", "]", "^", "-", "!", "%", "_", "\\", " ", "é", "É", "ß", "\n", "ab"]


def test_holding_finds_what_in_finds() -> None:
    rng = random.Random(7)
    texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12))) for _ in range(300)]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER, text TEXT)")
    db.executemany("INSERT INTO t VALUES (?, ?)", enumerate([*texts, None]))  # type: ignore[list-item]
    for _ in range(300):
        groups = [
            [
                "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 3)))
                for _ in range(rng.randint(1, 3))
            ]
            for _ in range(rng.randint(1, 60))  # over 50: more than one query
        ]
        found = {r[0] for r in holding(db, "SELECT id FROM t", "text", groups)}
        expected = {i for i, text in enumerate(texts) if any(all(s in text for s in g) for g in groups)}
        assert found == expected, groups


def test_the_pattern_s_own_marks_are_taken_literally() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id INTEGER, text TEXT)")
    db.executemany(
        "INSERT INTO t VALUES (?, ?)", [(1, "a*b"), (2, "axb"), (3, "a[x]b"), (4, "ab?"), (5, "A*B")]
    )
    assert {r[0] for r in holding(db, "SELECT id FROM t", "text", [["a*b"]])} == {1}
    assert {r[0] for r in holding(db, "SELECT id FROM t", "text", [["[x]"]])} == {3}
    assert {r[0] for r in holding(db, "SELECT id FROM t", "text", [["b?"]])} == {4}
    assert {r[0] for r in holding(db, "SELECT id FROM t", "text", [["a?b"]])} == set()
