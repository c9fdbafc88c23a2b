"""Pages worth reading with any model: every note kept in the body, each sentence cited to
its lines, the first sentence defining the topic (scripted backend, real interface)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from projects import make_project, run_build

from wikic.build.notes import notes_of
from wikic.wiki.page import WIKILINK, split_page
from wikic.wiki.support import cited_sentences

SIX = """# Vector search

## HNSW

HNSW is a graph index for approximate nearest neighbour search.
The layers are built by random sampling of the points.
Search starts at the top layer and descends greedily.
The parameter M bounds the number of neighbours per node.
Insertion costs grow with the logarithm of the collection size.
Deletion is usually done by marking nodes as removed.
"""


def body(project_dir: Path, name: str) -> str:
    return split_page((project_dir / "wiki" / name).read_text()).body.split("## Sources")[0]


def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[object]]) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({k: [json.dumps(a) for a in v] for k, v in answers.items()}))
    monkeypatch.setenv("WIKIC_SCRIPTED_RESPONSES", str(path))


def test_a_model_answer_using_two_of_six_notes_still_yields_a_page_holding_all_six(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {
        "paragraphs": [
            {
                "text": "HNSW is a graph index for approximate nearest neighbour search. "
                "The project is funded by the government of Canada.",
                "cites": [1],
            },
            {"text": "Search in HNSW starts at the top layer and descends greedily.", "cites": [3]},
        ]
    }
    script(tmp_path, monkeypatch, {"write:HNSW": [answer]})
    project = make_project(tmp_path / "p", {"v.md": SIX})
    report, _ = run_build(project)
    assert report.ok, report.errors
    text = body(project.root, "hnsw.md")
    lines = SIX.splitlines()
    for n in range(5, 11):  # every note, in the body, cited to its own line
        assert f"[v.md:{n}](../sources/v.md#L{n})" in text, (n, text)
        assert lines[n - 1].split()[1] in text
    assert "funded" not in text  # the sentence no note supports is dropped
    assert text.count("HNSW is a graph index") == 1
    assert report.page_text["notes"]["kept"] == report.page_text["notes"]["total"]
    assert report.page_text["pages_by_mode"]["prose"] >= 1
    for sentence, cites in cited_sentences(text.split("\n", 2)[2]):
        assert cites and all(c.end - c.start < 5 for c in cites), sentence


def test_a_pages_first_sentence_defines_its_topic_and_describes_it_in_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = {
        "a.md": "# Build notes\n\n## Restat\n\nNinja checks outputs after a restat rule ran.\n"
        "Restat is a rule flag that makes Ninja compare an output's timestamp after its command ran.\n",
    }
    answer = {"paragraphs": [{"text": "Ninja checks outputs after a restat rule ran.", "cites": [1]}]}
    script(tmp_path, monkeypatch, {"write:Restat": [answer]})
    project = make_project(tmp_path / "p", notes)
    run_build(project)
    text = body(project.root, "restat.md")
    first = text.split("\n\n")[1]
    assert first.startswith("Restat is a rule flag")
    assert "[[restat|Restat]] — Restat is a rule flag" in (project.wiki_dir / "index.md").read_text()


def test_a_forty_note_topic_keeps_its_facts(tmp_path: Path) -> None:
    facts = [f"Fact {i} about the scheduler says the value is {i * 7}." for i in range(1, 46)]
    notes = {
        f"k{part}.md": f"# Kernel part {part}\n\n## Scheduler\n\n"
        + "\n".join(facts[part * 9 : part * 9 + 9])
        + "\n"
        for part in range(5)
    }
    project = make_project(tmp_path / "p", notes)
    (project.schema_path).write_text(project.schema_path.read_text() + "write:\n  max_notes: 40\n")
    report, _ = run_build(project)
    assert report.ok, report.errors
    text = WIKILINK.sub(lambda m: m.group(3) or m.group(1), (project.wiki_dir / "scheduler.md").read_text())
    for fact in facts:
        assert fact in text.split("## Sources")[0], fact
    prose, more = text.split("## More notes")
    assert "not written into the text" in more.split("\n")[0]
    assert more.split("## Sources")[0].count("- Fact") == 5 and prose.count("Fact") == 40
    assert report.page_text["notes"]["kept"] == report.page_text["notes"]["total"] >= 45


def test_notes_mode_writes_pages_from_their_notes_without_the_model(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    (project.schema_path).write_text(project.schema_path.read_text() + "write:\n  mode: notes\n")
    report, backend = run_build(project)
    assert report.ok and backend.writes == 0
    assert report.page_text["pages_by_mode"] == {"notes": report.pages - 3}
    assert report.page_text["notes"]["kept"] == report.page_text["notes"]["total"] > 0
    assert "Chunks overlap by a few sentences" in body(project.root, "chunking.md")


EARLY = """# Early cutoff

Early cutoff stops a rebuild from spreading when an intermediate result turns out unchanged.

## Examples

Ninja implements early cutoff with restat rules.
Bazel gets it from content hashing: an action whose inputs hash the same is not run again.
"""


def test_a_summary_sentence_recombining_the_sources_words_is_dropped_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recombined = (
        "This is the first in a series of examples that demonstrate how to implement "
        "early cutoff with content hashing."
    )
    answer = {
        "topics": [{"name": "Early cutoff", "type": "concept", "lines": [3, 7]}],
        "summary": [{"text": recombined, "lines": [7, 8]}],
    }
    script(tmp_path, monkeypatch, {"digest": [answer]})
    project = make_project(tmp_path / "p", {"early-cutoff.md": EARLY})
    report, _ = run_build(project)
    assert report.ok, report.errors
    page = (
        body(project.root, "early-cutoff-source.md")
        if (project.wiki_dir / "early-cutoff-source.md").exists()
        else body(project.root, "early-cutoff.md")
    )
    assert "series of examples" not in page
    first = page.split("\n\n")[1]
    assert first == (
        "[[early-cutoff|Early cutoff]] stops a rebuild from spreading when an intermediate result turns out "
        "unchanged. [early-cutoff.md:3](../sources/early-cutoff.md#L3)"
    ) or first.endswith("unchanged. [early-cutoff.md:3](../sources/early-cutoff.md#L3)"), first


MEETINGS = {
    "monday.txt": "Storage sync, Monday\n\nWe met to plan the quarter. Alice Moreau leads the storage team.\n"
    "The team decided to keep PostgreSQL for the billing data.\n",
    "wednesday.txt": "Release review\n\nThe release slipped by a week.\n"
    "Alice Moreau asked for one more round of load tests on PostgreSQL.\n",
    "friday.txt": "Retrospective\n\nThe load tests passed on Thursday night.\n"
    "Everyone thanked Alice Moreau for organising them.\n",
}


def test_a_person_named_in_three_plain_text_sources_gets_a_page_fed_by_all_three(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", MEETINGS)
    report, _ = run_build(project)
    assert report.ok, report.errors
    page = split_page((project.wiki_dir / "alice-moreau.md").read_text())
    assert page.meta["type"] == "entity"
    assert page.meta["sources"] == ["sources/friday.txt", "sources/monday.txt", "sources/wednesday.txt"]
    for source in ("friday.txt", "monday.txt", "wednesday.txt"):
        assert f"[{source}:" in page.body.split("## Sources")[0]
    assert (project.wiki_dir / "postgresql.md").exists()  # two sources name it
    assert "[[alice-moreau|Alice Moreau]]" in (project.wiki_dir / "index.md").read_text()


def test_a_term_two_plain_text_sources_write_gets_a_concept_page_fed_by_both(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", MEETINGS)
    report, _ = run_build(project)
    assert report.ok, report.errors
    page = split_page((project.wiki_dir / "load-tests.md").read_text())
    assert page.meta["type"] == "concept" and page.meta["title"] == "Load tests"
    assert page.meta["sources"] == ["sources/friday.txt", "sources/wednesday.txt"]
    text = page.body.split("## Sources")[0]
    assert "[friday.txt:3]" in text and "[wednesday.txt:4]" in text, text


def test_a_note_that_points_back_carries_the_line_before_it() -> None:
    lines = [
        "# Early cutoff",
        "",
        "Ninja implements early cutoff with restat rules.",
        "Bazel gets it from content hashing: an action whose inputs hash the same is not run again.",
        "Many tools combine both: they trust unchanged timestamps and hash the others.",
        "Ninja's restat and a stat cache are examples of this combination.",
        "",
        "Without early cutoff, editing a header can rebuild everything that includes it.",
        "With it, the rebuild stops at the first step whose output is the same.",
        "Timestamps are cheap to read, but a clock skew can make them lie.",
    ]
    assert notes_of(lines, [4]) == [(3, 4)]  # "it" is early cutoff, named on the line before
    assert notes_of(lines, [6]) == [(5, 6)]  # "this combination" is the line before's
    assert notes_of(lines, [9]) == [(8, 9)]  # "With it"
    assert notes_of(lines, [8]) == [(8, 8)]  # a blank line before: nothing to carry
    assert notes_of(lines, [3, 10]) == [(3, 3), (10, 10)]  # "them" is named in its own sentence


HASHING = {
    "cutoff.md": "# Early cutoff\n\nEarly cutoff stops a rebuild when an intermediate result is unchanged.\n"
    "Bazel gets early cutoff from **content hashing**: an action whose inputs hash the same is not run "
    "again.\n",
    "hashing.md": "# Change detection\n\n## Content hashing\n\n"
    "Bazel and Shake hash the content of each input, which is slower but exact.\n",
}


def test_the_note_in_the_topics_own_section_opens_its_page(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", HASHING)
    (project.schema_path).write_text(project.schema_path.read_text() + "write:\n  mode: notes\n")
    report, _ = run_build(project)
    assert report.ok, report.errors
    text = body(project.root, "content-hashing.md")
    # the note under "## Content hashing" defines the page, not the one that merely names it
    assert WIKILINK.sub(lambda m: m.group(3) or m.group(1), text.split("\n\n")[1]).startswith(
        "Bazel and Shake hash the content"
    ), text
    index = (project.wiki_dir / "index.md").read_text()
    assert "[[content-hashing|Content hashing]] — Bazel and Shake hash the content" in index


def test_a_plain_text_sources_title_line_is_no_note() -> None:
    lines = ["Lilu (mythology)", "", "A lilu is a masculine Akkadian word for a spirit, related to Alû."]
    assert notes_of(lines, [1, 3]) == [(3, 3)]
    # a first line that is a sentence, or runs on into the next line, is text, not a title
    assert notes_of(["Alice kept the database.", "", "Bob left."], [1]) == [(1, 1)]
    assert notes_of(["Standup with Alice", "Bob left early."], [1]) == [(1, 1)]


def test_a_topic_page_opens_with_its_definition_not_a_sources_title_line(tmp_path: Path) -> None:
    sources = {
        "lilu.txt": "Lilu (mythology)\n\nA Lilu is a masculine Akkadian word for a spirit, related to Alu.\n",
        "alu.txt": "Alu\n\nIn Akkadian mythology, Alu is a vengeful spirit associated with Lilu and Gallu.\n",
    }
    project = make_project(tmp_path / "p", sources)
    report, _ = run_build(project)
    assert report.ok, report.errors
    text = body(project.root, "lilu.md")
    assert "(mythology)" not in text, text
    first = WIKILINK.sub(lambda m: m.group(3) or m.group(1), text.split("\n\n")[1])
    assert first.startswith("A Lilu is"), text
    assert "[[lilu|Lilu]] — A Lilu is" in (project.wiki_dir / "index.md").read_text()
