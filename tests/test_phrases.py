"""Topics from structure, the lower-case kind: which recurring phrases count as terms."""

from __future__ import annotations

import random

from wikic.build.merge import terms
from wikic.build.phrases import MAX_WORDS, NOT_WORDS, TOKEN, marked, written


def found(sources: dict[str, str]) -> dict[str, dict[str, list[int]]]:
    return terms({k: v.splitlines() for k, v in sources.items()})


def test_a_phrase_two_sources_write_whose_words_stand_together_is_a_term_with_its_lines() -> None:
    sources = {
        "wed.txt": "Release review\n\nAlice asked for one more round of load tests on the cluster.\n",
        "fri.txt": "Retrospective\n\nThe load tests passed on Thursday night.\n",
    }
    assert found(sources) == {"Load tests": {"wed.txt": [3], "fri.txt": [3]}}


def test_a_phrase_one_source_writes_is_no_term() -> None:
    assert found({"a.txt": "Notes\n\nThe load tests passed.\nThe load tests failed again.\n"}) == {}


def test_a_phrase_whose_word_stands_alone_in_many_more_sources_is_no_term() -> None:
    albums = {f"{i}.txt": f"Band {i}\n\nThe album sold well in year {i}.\n" for i in range(4)}
    albums |= {
        "x.txt": "X\n\nIt was their second studio album.\n",
        "y.txt": "Y\n\nA studio album came out.\n",
    }
    assert "Studio album" not in found(albums)  # "album" alone in six sources, "studio album" in two


def test_a_marked_phrase_is_a_term_in_its_marked_form_where_another_source_writes_it() -> None:
    sources = {
        "a.md": "# Builds\n\nBazel gets **early cutoff** from hashing.\n",
        "b.md": "# Ninja\n\nNinja has early cutoff too, via restat; early exits are rare.\n",
    }
    assert found(sources) == {"early cutoff": {"a.md": [3], "b.md": [3]}}
    sources["a.md"] = "# Builds\n\n## Early cutoff\n\nA rebuild stops where an output is unchanged.\n"
    sources["c.md"] = "# Make\n\nMake has no early cutoff at all.\n"
    assert found(sources) == {"Early cutoff": {"b.md": [3], "c.md": [3]}}


def test_one_sentence_copied_into_two_sources_is_one_use_not_two() -> None:
    line = "It has a stable representative democracy, with a consistent record of uninterrupted elections"
    sources = {"a.txt": f"A\n\n{line} and the best ranking.\n", "b.txt": f"B\n\nIn short: {line}.\n"}
    assert found(sources) == {}
    boiler = {
        f"{i}.md": f"# Notes {i}\n\nThese notes describe one animal.\n\nAnimal {i}.\n" for i in range(3)
    }
    assert found(boiler) == {}  # a short line copied whole
    # the same words after a phrase are no copy when the words before it differ: a formula
    sources = {
        "max.txt": "Max Ramsay\n\nMax is a fictional character from the Australian soap Neighbours.\n",
        "kate.txt": "Kate Ramsay\n\nKate is a fictional character from the Australian soap Neighbours.\n",
    }
    assert "Fictional character" in found(sources)


def test_headings_and_emphasis_of_one_word_or_whole_sentences_mark_no_term() -> None:
    assert marked("## Make") == {} and marked("You **make** it.") == {}
    assert marked("*This is a whole sentence set in italics.*") == {}
    assert marked("## Early cutoff") == {"early cutoff": "Early cutoff"}
    assert marked("Bazel gets **content hashing** and _early cutoff_.") == {
        "content hashing": "content hashing",
        "early cutoff": "early cutoff",
    }


def test_a_line_writes_the_phrases_of_two_and_three_words_of_its_runs() -> None:
    """written() zips each run of lower-case content words with itself shifted: the phrases
    of two to MAX_WORDS consecutive content words, as the plain windows over each run give."""
    assert written("Early cutoff keeps load tests quick, and sleep paralysis too.") == {
        "cutoff keeps",
        "keeps load",
        "load tests",
        "tests quick",
        "cutoff keeps load",
        "keeps load tests",
        "load tests quick",
        "sleep paralysis",
    }
    rng = random.Random(13)
    words = ["load", "tests", "quick", "the", "Make", "3", ",", "x's", "café", "ab", "early", "cutoff", "**"]
    for _ in range(3000):
        line = " ".join(rng.choices(words, k=rng.randint(0, 14)))
        runs: list[list[str]] = [[]]
        for tok in TOKEN.findall(line):
            word = tok[0].islower() and tok.isascii() and "'" not in tok and len(tok) > 2
            if word and tok not in NOT_WORDS:
                runs[-1].append(tok)
            else:
                runs.append([])
        windows = [(n, i) for n in range(2, MAX_WORDS + 1) for i in range(15)]
        plain = {" ".join(run[i : i + n]) for run in runs for n, i in windows if i + n <= len(run)}
        assert written(line) == plain, line
