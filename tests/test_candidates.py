"""Topics from structure: which capitalised words count as names two sources share."""

from __future__ import annotations

import random

from wikic.build.candidates import (
    SECTIONS,
    SENTENCE_START,
    _sentence_start,
    is_topic_name,
    source_names,
    unpack,
)
from wikic.build.merge import candidates


def names(sources: dict[str, str]) -> list[str]:
    return [c.name for c in candidates({k: v.splitlines() for k, v in sources.items()})]


def test_names_written_mid_sentence_in_two_sources_are_candidates_with_their_lines() -> None:
    found = candidates(
        {
            "a.txt": ["Notes", "", "We met Alice Moreau today.", "Nothing else."],
            "b.txt": ["More notes", "", "The plan came from Alice Moreau and Bob."],
        }
    )
    assert [(c.name, c.lines) for c in found] == [("Alice Moreau", {"a.txt": [3], "b.txt": [3]})]


def test_sentence_openers_demonyms_and_numbered_names_are_not() -> None:
    assert (
        names(
            {
                "a.txt": "A\n\nFact one is here.\nAmerican bands play.",
                "b.txt": "B\n\nFact two.\nAn American band.",
            }
        )
        == []
    )
    assert (
        names({"a.txt": "A\n\nIt is about Topic 1 here.", "b.txt": "B\n\nIt is about Topic 2 there."}) == []
    )


def test_a_word_that_only_opens_sentences_counts_when_it_titles_a_source_and_is_never_lowercase() -> None:
    sources = {"bazel.md": "# Bazel\n\nBazel is a build tool.", "other.md": "# Other\n\nBazel hashes inputs."}
    assert names(sources) == ["Bazel"]
    sources["make.md"] = "# Make\n\nMake is old."
    sources["x.md"] = "# X\n\nMake rebuilds. You call make in each folder."
    assert "Make" not in names(sources)


def test_a_number_a_dated_phrase_a_legal_suffix_or_a_sentence_titles_no_page() -> None:
    refused = ["1", "2018", "Inc", "In 1995", "It has the second largest number of users, after English"]
    refused += ["3: On August 7, 2018, Kobach appeared headed for victory"]
    assert not any(is_topic_name(name) for name in refused)
    kept = ["On the Sublime", "1917 (film)", "2018 Kansas gubernatorial election", "HNSW", "Apple Inc", "Go"]
    assert all(is_topic_name(name) for name in kept)


def test_a_name_keeps_the_words_that_begin_it_and_loses_those_that_open_its_sentence() -> None:
    sources = {
        "a.txt": "A\n\nShe moved to New York City in 1990. However Bazel was slow.\n",
        "b.txt": "B\n\nThe office in New York City closed, and Bazel was fast.\n",
    }
    assert names(sources) == ["Bazel", "New York City"]


def test_the_packed_facts_of_each_source_give_what_reading_the_sources_gives() -> None:
    """A build keeps each source's names and terms packed (source_names) and merges them; the
    merge of packed facts equals candidates() over the lines, awkward sources included (empty,
    headings only, a title line alone, names on the title line)."""
    sources = {
        "a.md": "# Load tests\n\nWe met **Alice Moreau** for the load tests on PostgreSQL.\n",
        "b.md": "# Retro\n\n## Load tests\n\nAlice Moreau ran the load tests; PostgreSQL held.\n",
        "c.md": "",
        "d.md": "# Only headings\n\n## And another\n",
        "e.txt": "Alice Moreau\n",
        "f.txt": "PostgreSQL notes\n\nThe load tests on PostgreSQL were slow, said Alice Moreau.\n",
    }
    lines = {k: v.splitlines() for k, v in sources.items()}
    packed = {path: source_names(text) for path, text in lines.items()}
    assert all(len(unpack(p)) == len(SECTIONS) for p in packed.values())
    direct = [(c.name, c.lines, c.kind) for c in candidates(lines)]
    assert [(c.name, c.lines, c.kind) for c in candidates(lines, facts=packed)] == direct
    assert {name for name, _, _ in direct} >= {"Alice Moreau", "PostgreSQL", "Load tests"}


def test_a_sentence_start_is_told_as_the_regular_expression_tells_it() -> None:
    marks = ["a", "B", " ", "\t", ".", "!", "?", ":", ";", '"', "“", "(", ")", ","]
    marks += ["\u00a0", "\u2003", "1", "'"]  # spaces that are not " "
    rng = random.Random(7)
    for _ in range(20_000):
        before = "".join(rng.choice(marks) for _ in range(rng.randint(0, 8)))
        assert _sentence_start(before) == bool(SENTENCE_START.search(before)), repr(before)


def test_a_source_keeps_the_first_lines_of_each_name_and_phrase_and_the_words_of_every_text_line() -> None:
    """What source_names packs, read back: a name and a phrase written on eight lines keep their
    first MAX_LINES_PER_SOURCE; the lower-case words are those of the text lines alone (not of
    headings), found alike at a line's start and end."""
    lines = ["# Load tests", ""] + [f"Then Alice Moreau ran load tests again, round {n}." for n in range(8)]
    lines += ["## heading words stay out", "ends with lowercase", "- starts-with dash"]
    packed = unpack(source_names(lines))
    names = dict(zip(packed["names"].split("\n"), packed["name_lines"].split("\n"), strict=True))
    phrases = dict(zip(packed["phrases"].split("\n"), packed["phrase_lines"].split("\n"), strict=True))
    assert names["Alice Moreau"] == "3,4,5,6,7,8" == phrases["load tests"]
    lower = set(packed["lower"].split("\n"))
    assert {"ran", "load", "tests", "again", "round", "ends", "lowercase", "starts-with", "dash"} <= lower
    assert not {"heading", "words", "stay", "out"} & lower
    assert packed["titles"].split("\n") == ["heading words stay out", "load tests"]
