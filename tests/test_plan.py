"""The plan stage on its own (no model, no files): how topic names from the digests
become pages, titles and slugs."""

from __future__ import annotations

from typing import Any

from wikic.build.plan import PagePlan, SourceInfo, plan
from wikic.config import Schema, WriteConfig

PROSE = Schema(write=WriteConfig(mode="prose"))


def source(path: str, title: str, *topics: tuple[str, int]) -> SourceInfo:
    lines = [title, ""] + [f"{name} is described on this line." for name, _ in topics]
    digest: dict[str, Any] = {
        "summary": f"About {title}.",
        "topics": [{"name": name, "type": "concept", "lines": [[n, n]]} for name, n in topics],
    }
    return SourceInfo(path, title, lines, digest)


def by_title(pages: dict[str, PagePlan]) -> dict[tuple[str, str], str]:
    return {(p.type, p.title): p.slug for p in pages.values()}


def test_a_topic_named_like_a_source_takes_the_sources_title_and_one_slug_each() -> None:
    sources = [
        source("sources/Canon_law.txt", "Canon law", ("The Canon Law", 3)),
        source("sources/Diocese.txt", "Diocese of Fredericton", ("The Canon Law", 3), ("Canon Law", 4)),
    ]
    pages = plan(sources, Schema(), {})
    assert by_title(pages) == {
        ("concept", "Canon law"): "canon-law",
        ("source", "Canon law"): "canon-law-source",
        ("source", "Diocese of Fredericton"): "diocese-of-fredericton",
    }
    topic = pages["topic:canon law"]
    assert topic.aliases == ["The Canon Law"]  # "Canon Law" is the title but for case
    assert topic.sources == ["sources/Canon_law.txt", "sources/Diocese.txt"]


def test_without_a_source_of_that_name_the_most_used_name_is_the_title() -> None:
    sources = [
        source("sources/a.txt", "Alpha", ("The Vienna Orchestra", 3)),
        source("sources/b.txt", "Beta", ("The Vienna Orchestra", 3)),
        source("sources/c.txt", "Gamma", ("Vienna Orchestra", 3)),
    ]
    pages = plan(sources, Schema(), {})
    assert pages["topic:vienna orchestra"].title == "The Vienna Orchestra"
    assert pages["topic:vienna orchestra"].slug == "the-vienna-orchestra"


def test_names_that_differ_by_a_number_stay_apart() -> None:
    sources = [
        source("sources/a.txt", "Models", ("GPT-3", 3), ("GPT-4", 4), ("Section 5", 5), ("Section 59", 6))
    ]
    titles = {p.title for p in plan(sources, Schema(), {}).values() if p.type != "source"}
    assert titles == {"GPT-3", "GPT-4", "Section 5", "Section 59"}


def test_slugs_stay_as_they_were_when_titles_change() -> None:
    sources = [source("sources/Canon_law.txt", "Canon law", ("The Canon Law", 3))]
    sticky = {"topic:canon law": "the-canon-law", "source:sources/Canon_law.txt": "canon-law"}
    pages = plan(sources, Schema(), sticky)
    assert pages["topic:canon law"].slug == "the-canon-law" and pages["topic:canon law"].title == "Canon law"
    assert pages["source:sources/Canon_law.txt"].slug == "canon-law"


CECIL = [
    "Cecil Parker",
    "",
    "Cecil Schwabe (3 September 1897 - 20 April 1971), who performed under the stage name Cecil Parker,",
    "was an English character actor with a distinctive husky voice.",
    "Parker played supporting roles in 91 films.",
]


def test_a_title_line_is_no_claim_the_lines_that_say_something_are() -> None:
    digest = {"summary": "", "topics": [{"name": "Cecil Parker", "type": "entity", "lines": [[1, 1]]}]}
    pages = plan([SourceInfo("sources/Cecil_Parker.txt", "Cecil Parker", CECIL, digest)], Schema(), {})
    topic = pages["topic:cecil parker"]
    # the note carries the rest of its hard-wrapped sentence (line 4), so that it reads alone
    assert [(c.start, c.end) for c in topic.claims] == [(3, 4)]
    assert topic.claims[0].text.startswith("Cecil Schwabe (3 September 1897")
    # the source page's summary, when the model gave none, is its lead without the title line
    assert pages["source:sources/Cecil_Parker.txt"].summary.startswith("Cecil Schwabe (3 September")


def test_a_sources_subject_whose_lead_names_it_otherwise_is_fed_by_the_lead() -> None:
    lines = ["William Winter (politician)", "", "William Forrest Winter (born 1923) is a retired politician."]
    digest = {"summary": "", "topics": [{"name": "William Winter", "type": "entity", "lines": [[1, 1]]}]}
    pages = plan([SourceInfo("sources/W.txt", lines[0], lines, digest)], Schema(), {})
    assert [(c.start, c.end) for c in pages["topic:william winter"].claims] == [(3, 3)]
    other = {"summary": "", "topics": [{"name": "Politician Winter", "type": "concept", "lines": [[1, 1]]}]}
    pages = plan([SourceInfo("sources/W.txt", lines[0], lines, other)], Schema(), {})
    assert "topic:politician winter" not in pages  # not the subject: a title line alone makes no page


def test_the_digest_grounds_a_topic_past_its_title_line() -> None:
    from wikic.build.digest import validator
    from wikic.sources.read import Part

    validate = validator(Part(0, 1, len(CECIL)), CECIL, ["concept", "entity"])
    out = validate({"summary": "", "topics": [{"name": "Cecil Parker", "type": "entity", "lines": [1]}]})
    assert out["topics"] == [{"name": "Cecil Parker", "type": "entity", "lines": [[3, 3]]}]


def test_a_summary_the_source_does_not_support_gives_way_to_its_lead() -> None:
    # (in prose mode: with a model known to be small, a source's page always opens with its lead)
    said = "The document describes how build tools decide what to rebuild, and how they keep it fast."
    digest = {"summary": said, "topics": []}
    pages = plan([SourceInfo("sources/Cecil_Parker.txt", "Cecil Parker", CECIL, digest)], PROSE, {})
    assert pages["source:sources/Cecil_Parker.txt"].summary.startswith("Cecil Schwabe (3 September")
    digest["summary"] = "Cecil Parker was an English character actor with a husky voice, in 91 films."
    pages = plan([SourceInfo("sources/Cecil_Parker.txt", "Cecil Parker", CECIL, digest)], PROSE, {})
    assert pages["source:sources/Cecil_Parker.txt"].summary == digest["summary"]
