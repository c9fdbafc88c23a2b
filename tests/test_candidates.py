"""Topics from structure: which capitalised words count as names two sources share."""

from __future__ import annotations

from wikic.build.candidates import candidates, is_topic_name


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
