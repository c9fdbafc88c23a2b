"""The shared support check: sentences, and each judged against only the lines it cites."""

from __future__ import annotations

from pathlib import Path

from lintkit import base_pages, cite, crafted, fired, page

from wikic.wiki.support import check, cited_sentences, judge, sentences

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
