"""`wikic ask` over a wiki larger than its budget, with the scripted backend: whole
sentences packed evidence first, the second hop to a page the best page links to,
the cited source lines, the unsupported-sentence check and --quote."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from projects import make_project, run_build
from test_ask import ANIMALS, PrefixRecording, Recording, asking, cli_ask, large_notes

from wikic.ask.context import load_pages
from wikic.ask.passages import sentences
from wikic.ask.runner import estimate_tokens
from wikic.project import Project
from wikic.wiki import support
from wikic.wiki.page import Page

TOWNS = [
    "Alder",
    "Birch",
    "Cedar",
    "Dover",
    "Elm",
    "Fenwick",
    "Glen",
    "Harlow",
    "Ivy",
    "Juniper",
    "Kestrel",
    "Linden",
    "Maple",
    "Norwick",
]


def bridge_notes() -> dict[str, str]:
    """A film whose page links to its director's page, the answer (where she grew up) on the
    director's page only, in words the question does not use, and many people born in
    other towns as distractors: only the link from the film's page leads to it."""
    notes = {
        "films.md": "# Films\n\n## Moonfall Harbor\n\n"
        "Moonfall Harbor is a 1998 drama directed by Edda Kvist.\n"
        "It was shot on the northern coast in one winter.\n",
        "kvist.md": "# Makers\n\n## Edda Kvist\n\nEdda Kvist is a Norwegian filmmaker.\n"
        "She grew up in Tromsvik, a fishing village.\n",
    }
    for i, town in enumerate(TOWNS):
        notes[f"person{i}.md"] = (
            f"# People {i}\n\n## Person {town}son\n\n"
            f"Person {town}son is a painter who was born in the town of {town}.\n"
            f"The director of the local museum knew {town}son well in {1900 + i}.\n"
        )
    return notes


def budgeted(tmp_path: Path, notes: dict[str, str], budget: int) -> Project:
    project = make_project(tmp_path, notes)
    project.schema_path.write_text(project.schema_path.read_text() + f"ask:\n  budget: {budget}\n")
    report, _ = run_build(project)
    assert report.ok, report.errors
    return project


def shown_pages(user: str) -> dict[str, str]:
    """The pages chosen for the question: a "## Title" heading, then the page's sentences."""
    page = r"^## ([^\n]+)\n(.*?)(?=\n\n## |\n\nSource lines |\n\nQuestion: )"
    return dict(re.findall(page, user, re.S | re.M))


def used(request: object) -> int:
    return sum(estimate_tokens(m["content"]) for m in request.messages)  # type: ignore[attr-defined]


def test_a_two_hop_question_gets_the_page_linked_from_the_best_page(tmp_path: Path) -> None:
    project = budgeted(tmp_path, bridge_notes(), 450)
    result, backend = asking(project, "In which town was the director of Moonfall Harbor born?")
    (request,) = backend.requests
    assert result.mode == "selected" and used(request) <= 450
    pages = shown_pages(request.messages[1]["content"])
    assert "Moonfall Harbor" in pages and "Edda Kvist" in pages  # the bridge, not named in the question
    assert "Tromsvik" in pages["Edda Kvist"]
    assert list(pages)[:2] == ["Moonfall Harbor", "Edda Kvist"]  # the chain in order, the bridge second


def test_packing_fits_the_budget_and_never_cuts_a_sentence(tmp_path: Path) -> None:
    project = make_project(tmp_path, bridge_notes())
    run_build(project)
    whole = {p.title: {s.text for s in sentences(p)} for p in load_pages(project.wiki_dir)}
    for budget in (300, 420, 700, 1000):
        text = project.schema_path.read_text().split("ask:")[0]
        project.schema_path.write_text(text + f"ask:\n  budget: {budget}\n")
        run_build(project)
        result, backend = asking(project, "Who was born in the town of Linden?", use_cache=False)
        (request,) = backend.requests
        assert result.mode == "selected" and used(request) <= budget
        pages = shown_pages(request.messages[1]["content"])
        assert pages, budget
        for title, text in pages.items():
            for line in text.splitlines():
                for piece in support.sentences(line):
                    assert piece in whole[title], (budget, title, piece)


def test_a_budget_too_small_for_pages_still_answers_with_the_closest_sentence(tmp_path: Path) -> None:
    project = budgeted(tmp_path, large_notes(), 256)
    result, backend = asking(project, "How many marmot nests did observers count?")
    (request,) = backend.requests
    assert used(request) <= 256 and result.mode == "selected"
    pages = shown_pages(request.messages[1]["content"])
    assert list(pages) == ["Marmot"] and "351 marmot nests" in pages["Marmot"]
    # and a question that leaves no room at all is today's clear error
    failed = cli_ask(project, "why " * 400)
    assert failed.exit_code == 2 and "raise ask.budget" in failed.stderr


def test_cited_source_lines_are_shown_where_room_allows_and_listed_in_json(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    whole = sum(estimate_tokens(p.read_text()) for p in project.wiki_dir.glob("*.md"))
    project.schema_path.write_text(project.schema_path.read_text() + f"ask:\n  budget: {whole // 2}\n")
    run_build(project)
    question = "What does HNSW trade for fast search?"
    # the scripted model's page carries its source's sentences word for word: shown once, not twice
    report = json.loads(cli_ask(project, "--json", question).stdout)
    assert report["mode"] == "selected" and report["sources_shown"] == []
    _, backend = asking(project, question, use_cache=False)
    theirs = "It trades memory for fast approximate search."
    assert backend.requests[0].messages[1]["content"].count(theirs) == 1
    # a page in its own words (as a model writes it): the lines it cites are shown beside it
    page = project.wiki_dir / "hnsw.md"
    mine = "It uses more RAM in exchange for speed."
    page.write_text(page.read_text().replace(theirs, mine))
    out = cli_ask(project, "--json", "--stale-ok", question)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["mode"] == "selected" and "sources/vectors.md:7-8" in report["sources_shown"]
    _, backend = asking(project, question, use_cache=False, stale_ok=True)
    user = backend.requests[0].messages[1]["content"]
    assert '<source file="sources/vectors.md" lines="7-8">' in user
    assert mine in user and theirs in user


def test_unsupported_answer_sentences_are_marked_and_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path)
    run_build(project)
    invented = "HNSW detects when a target has been modified in the past 24 hours."
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"text": [f"HNSW is a graph index used by [[FAISS]]. {invented}"] * 2}))
    monkeypatch.setenv("WIKIC_SCRIPTED_RESPONSES", str(script))
    result, _ = asking(project, "What is HNSW?", Recording())
    assert result.unsupported == [invented]
    shown = cli_ask(project, "--no-cache", "What is HNSW?")
    assert shown.exit_code == 0 and f"UNSUPPORTED (no page shown says this): {invented}" in shown.stderr


def test_quote_answers_with_the_pages_own_sentences_and_no_model(tmp_path: Path) -> None:
    project = budgeted(tmp_path, large_notes(), 600)
    result, backend = asking(project, "How many marmot nests did observers count?", quote=True)
    assert backend.requests == [] and result.mode == "quote"
    first = result.answer.splitlines()[0]
    assert first.startswith("- Observers counted 351 marmot nests along the river in spring.")
    assert "[[Marmot]]" in first and re.search(r"\(sources/marmot\.md:[0-9-]+\)$", first)
    assert result.pages[0] == "wiki/marmot.md" and result.unsupported == []
    # ask.mode: quote in schema.yaml does the same, from the command line
    project.schema_path.write_text(
        project.schema_path.read_text().replace("budget: 600", "budget: 600\n  mode: quote")
    )
    run_build(project)
    out = cli_ask(project, "--json", "What does the okapi eat?")
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["mode"] == "quote" and "okapi" in report["answer"].splitlines()[0].casefold()


def test_sentence_level_citations_stay_with_their_sentence() -> None:
    """Pages that cite after every sentence (issue 12's format) and pages that cite a paragraph once."""
    from wikic.wiki.page import split_page

    body = (
        "---\ntitle: Early cutoff\n---\n\n# Early cutoff\n\n"
        "Early cutoff stops a rebuild early. [e.md:3](../sources/e.md#L3) "
        "[[ninja|Ninja]] implements it with restat rules [e.md:8](../sources/e.md#L8). "
        "Shake supports it. Bazel does too. [e.md:9](../sources/e.md#L9) [e.md:10](../sources/e.md#L10)\n\n"
        "## Sources\n\n- [[e-source|Early cutoff]]: [e.md:3](../sources/e.md#L3)\n"
    )
    found = sentences(split_page(body, "wiki/early-cutoff.md"))
    assert [s.text for s in found] == [
        "Early cutoff stops a rebuild early.",
        "Ninja implements it with restat rules.",
        "Shake supports it.",
        "Bazel does too.",
    ]
    assert [[c.start for c in s.cites] for s in found] == [[3], [8], [9, 10], [9, 10]]
    assert found[1].links == ["ninja"]


def test_the_second_hop_goes_to_the_specific_page_before_the_hubs_every_page_links_to() -> None:
    from wikic.ask.select import HOP_PAGES, rank
    from wikic.wiki.page import split_page

    def page(slug: str, title: str, text: str) -> Page:
        return split_page(
            f"---\ntitle: {title}\ntype: concept\n---\n\n# {title}\n\n{text}\n", f"wiki/{slug}.md"
        )

    hubs = [f"hub{i}" for i in range(HOP_PAGES)]
    links = ", ".join(f"[[{h}|Place {h}]]" for h in hubs)
    pages = [
        page(
            "moonfall",
            "Moonfall Harbor",
            f"Moonfall Harbor is a drama shot in {links}, by [[kvist|Edda Kvist]].",
        ),
        page("kvist", "Edda Kvist", "Edda Kvist is a filmmaker who grew up in Tromsvik."),
        *[page(h, f"Place {h}", f"Place {h} is a large region.") for h in hubs],
        *[page(f"p{i}", f"Painter {i}", f"Painter {i} lived in {links}.") for i in range(6)],
    ]
    ranking = rank("Where did the director of Moonfall Harbor grow up?", pages)
    assert [p.title for p in ranking.bridges][0] == "Edda Kvist"


def test_the_budget_is_a_ceiling_not_a_quota(tmp_path: Path) -> None:
    project = budgeted(tmp_path, large_notes(), 600)
    question = "How many marmot nests did observers count?"
    result, backend = asking(project, question)
    (request,) = backend.requests
    pages = shown_pages(request.messages[1]["content"])
    assert result.mode == "selected" and "351 marmot nests" in pages["Marmot"]
    # every animal's page says how many of its nests were counted, far below the marmot's own
    # sentence for this question: room is left unused rather than filled with them (the pages
    # the marmot's page links to still come, as the second hop)
    assert not {a.capitalize() for a in ANIMALS if a != "marmot"} & set(pages)
    small = used(request)
    assert small < 450
    # a larger budget buys lower-scoring sentences: the floor shrinks as the budget grows
    text = project.schema_path.read_text().split("ask:")[0]
    project.schema_path.write_text(text + "ask:\n  budget: 1500\n")
    run_build(project)
    _, backend = asking(project, question, use_cache=False)
    assert used(backend.requests[0]) > small + 500


class Templated(PrefixRecording):
    """A prefix-caching backend whose chat template adds `template` tokens around the text."""

    def __init__(self, template: int) -> None:
        super().__init__()
        self.template = template

    def template_tokens(self) -> int:
        return self.template


def test_the_chat_template_counts_against_the_budget(tmp_path: Path) -> None:
    project = budgeted(tmp_path, large_notes(), 400)
    question = "Which animals live in region 3, region 5 and region 9?"
    sizes = []
    for template in (0, 150):
        backend = Templated(template)
        result, _ = asking(project, question, backend, use_cache=False)
        ((request, _, _),) = backend.prefix_calls
        assert result.mode == "selected" and used(request) + template <= 400
        sizes.append(used(request))
    assert sizes[1] < sizes[0]
