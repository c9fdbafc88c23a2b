"""The shared support check: sentences, and each judged against only the lines it cites."""

from __future__ import annotations

import random
from pathlib import Path

from lintkit import base_pages, cite, crafted, fired, page

from wikic.wiki.overlap import content_words, plain
from wikic.wiki.support import (
    SAID_VERBATIM,
    Verdict,
    _judged,
    _verbatim,
    best_evidence,
    check,
    cited_sentences,
    greedy_cover,
    judge,
    sentences,
)

ROOT = Path(__file__).resolve().parent.parent
EARLY = (ROOT / "sources" / "early-cutoff.md").read_text().splitlines()
RECOMBINED = (
    "This is the first in a series of examples that demonstrate how to implement "
    "early cutoff with content hashing."
)


def test_sentences_never_break_on_abbreviations_decimals_or_initials() -> None:
    text = "Tools, e.g. Make, are old. It was 3.5 times faster, said J. R. R. Tolkien. Really? Yes."
    assert sentences(text) == [
        "Tools, e.g. Make, are old.",
        "It was 3.5 times faster, said J. R. R. Tolkien.",
        "Really?",
        "Yes.",
    ]


def test_each_sentence_gets_the_citations_that_follow_it() -> None:
    md = (
        "Ninja is small. It is fast. [n.md:3](../sources/n.md#L3) "
        "Make is old. [m.md:4-5](../sources/m.md#L4-L5)"
    )
    got = [(s, [(c.source, c.start, c.end) for c in cites]) for s, cites in cited_sentences(md)]
    assert got == [
        ("Ninja is small.", [("sources/n.md", 3, 3)]),
        ("It is fast.", [("sources/n.md", 3, 3)]),
        ("Make is old.", [("sources/m.md", 4, 5)]),
    ]


def test_a_recombination_fails_against_a_whole_source_and_against_its_few_lines() -> None:
    assert not judge(RECOMBINED, EARLY).ok
    assert not judge(RECOMBINED, EARLY[7:9]).ok
    assert judge("Shake, a build library for Haskell, supports early cutoff for any rule.", EARLY).ok


def test_invented_numbers_names_negations_and_reversals_fail() -> None:
    line = "Make is the classic build tool, first written by Stuart Feldman at Bell Labs in 1976."
    assert check("Stuart Feldman wrote Make at Bell Labs in 1976.", line).ok
    assert "1977" in check("Stuart Feldman wrote Make at Bell Labs in 1977.", line).reason
    assert "Dennis" in check("Dennis Feldman wrote Make at Bell Labs in 1976.", line).reason
    assert not check("Make was not written by Stuart Feldman at Bell Labs.", line).ok
    kept = "The team decided to keep PostgreSQL for the billing data."
    assert check("The team decided to keep PostgreSQL for billing data.", kept).ok
    assert not check("The team decided to move away from PostgreSQL for the billing data.", kept).ok


def test_lint_flags_a_whole_source_citation_that_recombines_its_words(tmp_path: Path) -> None:
    pages = base_pages()
    pages["notes-on-vector-search.md"] = page(
        "Notes on vector search",
        f"FAISS is the first in a series of graph libraries that overlap chunks by search. {cite(1, 5)}"
        "\n\n## Topics\n\n" + f"- [[faiss|FAISS]]: {cite(3)}\n- [[hnsw|HNSW]]: {cite(4)}",
        type="source",
    )
    found = fired(crafted(tmp_path, pages), "bad-citation")
    assert [f["path"] for f in found] == ["wiki/notes-on-vector-search.md"]


def _random_sentence(rng: random.Random) -> str:
    words = [
        "Ninja", "builds", "not", "never", "isn't", "Make", "O'Brien", "fast", "slow", "kept",
        "moved", "3.5", "1,200", "1977", "e.g.", "U.S.", "rather", "than", "instead", "the", "a",
        "Early-Cutoff", "cutoff", "hash", "Σίσυφος", "straße", "don't", "keep", "drop", "first", "last",
    ]  # fmt: skip
    seps = [" ", " ", " ", ", ", ". ", "! ", "? ", " (", ") ", ": ", "; ", " - "]
    out = [rng.choice(words) for _ in range(rng.randint(1, 14))]
    return "".join(w + rng.choice(seps) for w in out).strip() + rng.choice(["", ".", "!", "?"])


def _marked_up(text: str, rng: random.Random) -> str:
    """The same words with markup characters that are not word characters, and other spacing."""
    out = []
    for word in text.split(" "):
        roll = rng.random()
        marked = f"**{word}**" if roll < 0.2 else f"`{word}`" if roll < 0.3 else f"~{word}>"
        out.append(marked if roll < 0.35 else word)
    return rng.choice([" ", "  ", "\n", " \n "]).join(out)


def test_a_sentence_said_verbatim_gets_the_full_checks_answer() -> None:
    """The fast path (the sentence is its evidence, word for word) answers what the full check
    does, on many random sentences with names, numbers, negations and markup."""
    rng = random.Random(17)
    verbatim = 0
    for _ in range(1500):
        sentence = _random_sentence(rng)
        text = plain(sentence)
        for evidence in (text, _marked_up(text, rng), sentence, _marked_up(sentence, rng)):
            for threshold in (60, 100, 101):
                full = _judged(sentence, evidence, threshold)
                if threshold <= 100 and _verbatim(text, evidence):
                    verbatim += 1
                    assert full == (SAID_VERBATIM, 0), (sentence, evidence)
                fast = check(sentence, evidence, threshold, 2)
                assert fast == _full_check(sentence, evidence, threshold, 2)
    assert verbatim > 3000


def _full_check(sentence: str, evidence: str, threshold: float, max_novel: int) -> Verdict:
    verdict, novel = _judged(sentence, evidence, threshold)
    if verdict.ok and novel > max_novel:
        return Verdict(False, verdict.score, f"its lines hold only {verdict.score:.0f}% of its words")
    return verdict


def _greedy_cover(sentence: str, texts: list[str], limit: int) -> list[int]:
    """best_evidence as it was before its shortcut: every text's words, then the greedy cover."""
    words = content_words(plain(sentence))
    return greedy_cover(words, [content_words(t) for t in texts], limit) if words and limit >= 1 else []


def test_best_evidence_stops_at_the_first_text_holding_every_word() -> None:
    rng = random.Random(18)
    vocabulary = [
        "ninja",
        "make",
        "builds",
        "fast",
        "slow",
        "hash",
        "cutoff",
        "early",
        "the",
        "a",
        "graph",
        "1977",
        "keeps",
    ]
    for _ in range(3000):
        texts = [" ".join(rng.choices(vocabulary, k=rng.randint(0, 7))) for _ in range(rng.randint(0, 6))]
        sentence = " ".join(rng.choices(vocabulary, k=rng.randint(0, 5)))
        for limit in (0, 1, 2, 3):
            assert best_evidence(sentence, texts, limit) == _greedy_cover(sentence, texts, limit)
