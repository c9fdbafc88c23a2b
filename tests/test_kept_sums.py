"""A touched topic's page patched from its kept givers (build/keptsums.py) equals the full
plan's, edit after edit of each kind the sums must follow: a note's text, a giver gained or
lost, the most used name (the title) and the first page type changed, a duplicate note let
go, two topics on the same line, a pinned topic; and the givers left unchanged are not
planned again."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from tests.projects import forced_equal, make_project, replace_in_source, run_build
from tests.test_incremental import NOTES as BASE_NOTES
from tests.test_incremental import PINNED, PROSE, _replace
from tests.test_incremental import _digest as _plain
from tests.test_replan import SOLO, _Project
from tests.test_replan import _full as _replan_full
from tests.test_replan import _note as _random_note
from wikic.build.keptplan import Kept
from wikic.build.plan import PagePlan, SourceInfo, plan
from wikic.build.replan import settings_of
from wikic.build.sourceplan import Memo
from wikic.config import Schema


def _digest(lines: list[str]) -> dict[str, object]:
    """Each `## Name | type | line` heading a topic of that page type, cited to that line (or
    the line under it)."""
    topics = []
    for n, line in enumerate(lines):
        if line.startswith("## "):
            parts = line[3:].split(" | ")
            name, kind, at = (
                parts[0],
                parts[1] if len(parts) > 1 else "concept",
                parts[2] if len(parts) > 2 else "",
            )
            cited = int(at) if at else n + 2
            topics.append({"name": name.strip(), "type": kind.strip(), "lines": [[cited, cited]]})
    return {"summary": [{"text": lines[2], "lines": [[3, 3]]}], "topics": topics}


def _infos(notes: dict[str, str], last: dict[str, str]) -> list[SourceInfo]:
    out = []
    for name, text in sorted(notes.items()):
        path, lines = f"sources/{name}", text.split("\n")
        if last.get(path) == text:  # settled: unread, as a build gives it
            out.append(SourceInfo(path, "", None, None, lambda lines=lines: lines))
        else:
            out.append(SourceInfo(path, lines[0].lstrip("# "), lines, _digest(lines)))
    return out


class _Typed(_Project):
    def infos(self, notes: dict[str, str]) -> list[SourceInfo]:
        return _infos(notes, self.last)


def _full(notes: dict[str, str], schema: Schema) -> dict[str, PagePlan]:
    return plan(_infos(notes, {}), schema, {})


def _note(i: int, name: str = "Ninja", kind: str = "tool") -> str:
    return (
        f"# Note {i}\n\nNote {i} on the build.\n\n## {name} | {kind}\n\n"
        f"{name} ran the build {i} times.\n\n## Make | concept\n\nMake was slower in note {i}.\n"
    )


NOTES = {
    f"g{i:02d}.md": _note(i, "Ninja" if i % 3 else "NINJA", "tool" if i % 2 else "concept") for i in range(12)
}
Edit = Callable[[dict[str, str]], dict[str, str]]
EDITS: dict[str, Edit] = {
    "a note's text": lambda n: _replace(n, "g04.md", "ran the build 4 times", "ran the tests 4 times"),
    "a giver gained": lambda n: {**n, "h.md": "# H\n\nNote h.\n\n## Ninja | tool\n\nNinja in h.\n"},
    "a giver lost": lambda n: _replace(n, "g05.md", "## Ninja | tool", "## Shake | tool"),
    "a source deleted": lambda n: {k: v for k, v in n.items() if k != "g07.md"},
    # 8 Ninja, 4 NINJA: one of the first renamed, and the title is still Ninja (four: NINJA, below)
    "the title's name counted less": lambda n: _replace(n, "g01.md", "## Ninja |", "## NINJA |"),
    # 6 tools and 6 concepts, the first given (g00's concept) the page's type: g00 a tool now
    "the first page type changed": lambda n: _replace(n, "g00.md", "## NINJA | concept", "## NINJA | tool"),
    # g02's note on Ninja the same text as g08's: g08's left out of the page (a duplicate)
    "a duplicate note": lambda n: _replace(
        n, "g02.md", "Ninja ran the build 2 times.", "Ninja ran the build 8 times."
    ),
    # g03's Make note on the line of its Ninja note
    "two topics on the same line": lambda n: _replace(n, "g03.md", "## Make | concept", "## Make | tool | 6"),
}


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources whose facts a plan takes (planned again), as Memo.facts is asked."""
    taken: list[str] = []
    facts = Memo.facts

    def recording(self: Memo, src: SourceInfo, apart=None):  # type: ignore[no-untyped-def]
        taken.append(src.path)
        return facts(self, src, apart)

    monkeypatch.setattr(Memo, "facts", recording)
    return taken


@pytest.mark.parametrize("schema", [PROSE, PINNED], ids=["prose", "pinned"])
@pytest.mark.parametrize("kind", list(EDITS))
def test_a_topic_patched_from_its_kept_givers_equals_the_full_plan(
    kind: str, schema: Schema, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = dict(NOTES)
    project = _Typed(schema)
    assert project.plan(notes)[0] == _full(notes, schema)
    taken = _recorded(monkeypatch)
    for step in range(3):  # the edit, another on what it left, then nothing more
        notes = EDITS[kind](notes) if step == 0 else notes
        if step == 1:
            notes = _replace(notes, "g10.md", "ran the build 10 times", "ran it 10 times")
        taken.clear()
        pages, was_patched = project.plan(notes)
        # the givers of Ninja and Make left unchanged are not planned again (a trial, then the plan)
        assert len(set(taken)) <= 4 or schema is PINNED, f"step {step}: {sorted(set(taken))}"
        assert pages == _full(notes, schema), f"step {step}"
        assert was_patched
    if kind == "the title's name counted less":
        assert pages["topic:ninja"].title == "Ninja"
    if kind == "the first page type changed":
        assert (pages["topic:ninja"].type, _full(NOTES, schema)["topic:ninja"].type) == ("tool", "concept")
    if kind == "a duplicate note":
        assert "sources/g08.md" not in {c.source for c in pages["topic:ninja"].claims}


def test_a_note_left_out_as_a_duplicate_comes_back_when_the_first_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    same = "Ninja did well."  # no term from structure that the two share but this
    notes = _replace(NOTES, "g02.md", "Ninja ran the build 2 times.", same)
    notes = _replace(notes, "g08.md", "Ninja ran the build 8 times.", same)
    project = _Typed(PROSE)
    project.plan(notes)
    assert project.kept is not None
    kept = Kept.loads(project.kept, settings_of(PROSE), project.since)
    assert kept is not None and [c[:2] for c in kept.sums["topic:ninja"]] == [(same, "sources/g08.md")]
    taken = _recorded(monkeypatch)
    notes = _replace(notes, "g02.md", same, "Ninja ran the build twice.")
    pages, was_patched = project.plan(notes)
    # g08.md's note on Ninja taken back from what the page left out; its own page planned again
    # (that line is on the topic page now, not among its own notes), no other giver
    assert set(taken) == {"sources/g02.md", "sources/g08.md"}
    assert was_patched and pages == _full(notes, PROSE)
    assert (same, "sources/g08.md") in {(c.text, c.source) for c in pages["topic:ninja"].claims}


def test_four_more_names_make_the_title() -> None:
    notes = dict(NOTES)
    project = _Typed(PROSE)
    project.plan(notes)
    for name in ["g01.md", "g02.md", "g04.md", "g05.md"]:
        notes = _replace(notes, name, "## Ninja |", "## NINJA |")
        pages, was_patched = project.plan(notes)
        assert was_patched and pages == _full(notes, PROSE)
    assert pages["topic:ninja"].title == "NINJA"


def test_a_pinned_topic_is_made_from_every_giver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embeddings, pinned: every line naming it is a note, and a source titled like it gives all
    its lines; its givers are planned again."""
    notes = {
        name: text.replace("on the build", "on the build and embeddings") for name, text in NOTES.items()
    }
    notes["e.md"] = "# Embeddings\n\nVectors of a text.\n\n## Ninja | tool\n\nNinja embeds.\n"
    project = _Typed(PINNED)
    project.plan(notes)
    taken = _recorded(monkeypatch)
    notes = _replace(notes, "e.md", "Vectors of a text.", "Vectors of a text, kept.")
    pages, was_patched = project.plan(notes)
    assert len(set(taken)) > 12  # Embeddings's givers, all planned again
    assert was_patched and pages == _full(notes, PINNED)


def test_an_edit_of_a_built_project_is_the_forced_build(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Through the build: a note's text and a giver lost, each the forced build's wiki."""
    notes = {
        f"n{i:02d}.md": f"# Note {i}\n\nOn the build {i}.\n\n## Ninja\n\nNinja ran {i} builds.\n"
        for i in range(8)
    }
    project = make_project(tmp_path / "p", notes)
    assert run_build(project)[0].ok
    replace_in_source(project, "n03.md", "Ninja ran 3 builds.", "Ninja ran three builds.")
    assert run_build(project)[0].ok
    assert forced_equal(project, tmp_path / "a")
    replace_in_source(project, "n05.md", "## Ninja", "## Shake")
    assert run_build(project)[0].ok
    assert forced_equal(project, tmp_path / "b")


def test_a_name_from_structure_whose_lines_moved_in_one_source_plans_only_that_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Quentin Blake, a name from structure of rag.md and solo.md: rag.md's line of it moves,
    and solo.md, its lines as they were, is not planned again."""
    line = "\nQuentin Blake drew the diagrams for the retrieval talk.\n"
    notes = {**BASE_NOTES, "solo.md": SOLO, "rag.md": BASE_NOTES["rag.md"] + line}
    project = _Project(PROSE)
    project.plan(notes)
    taken = _recorded(monkeypatch)
    notes = _replace(notes, "rag.md", line, "\nMore.\n" + line)
    pages, was_patched = project.plan(notes)
    assert "sources/solo.md" not in taken and "sources/rag.md" in taken
    assert was_patched and pages == _replan_full(notes, PROSE)
    assert pages["topic:quentin blake"].sources == ["sources/rag.md", "sources/solo.md"]


class _Read(_Project):
    """As a build gives b.md when its stat changed and its text did not: read (not settled)."""

    def infos(self, notes: dict[str, str]) -> list[SourceInfo]:
        infos = super().infos(notes)
        lines = notes["b.md"].split("\n")
        return [
            SourceInfo(i.path, "B", lines, _plain(lines)) if i.path.endswith("b.md") else i for i in infos
        ]


def test_a_giver_read_but_unchanged_whose_page_moves_keeps_its_names_from_structure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """b.md's note on Ninja, left out as a.md's duplicate, is on the page again once a.md's
    changes: b.md's own page is planned again, with Quentin Blake (a name from structure it
    shares with a.md) among its topics, though the plan read b.md's facts before."""
    notes = {
        "a.md": "# A\n\nLead a.\n\n## Ninja\n\nNinja did well.\n\nWe met Quentin Blake here.\n",
        "b.md": "# B\n\nLead b.\n\n## Ninja\n\nNinja did well.\n\nQuentin Blake came too.\n",
        "c.md": "# C\n\nLead c.\n\n## Ninja\n\nNinja ran fast.\n",
    }
    project = _Read(PROSE)
    project.plan(notes)
    taken = _recorded(monkeypatch)
    notes = _replace(notes, "a.md", "Ninja did well.", "Ninja did better.")
    pages, was_patched = project.plan(notes)
    assert "sources/c.md" not in taken  # Ninja patched from its kept givers
    assert was_patched and pages == _replan_full(notes, PROSE)
    assert "topic:quentin blake" in pages["source:sources/b.md"].topics


def _typed_note(rng: random.Random, n: int) -> str:
    """test_replan's random note, each heading's topic given a page type at random."""
    lines = _random_note(rng, n).split("\n")
    return "\n".join(f"{line} | {rng.choice(KINDS)}" if line.startswith("## ") else line for line in lines)


KINDS = ["concept", "tool", "person"]


@pytest.mark.parametrize("seed", range(3))
def test_topics_patched_edit_after_edit_equal_the_full_plan(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    notes = {f"n{i:02d}.md": _typed_note(rng, i) for i in range(30)}
    project = _Typed(PROSE)
    project.plan(notes)
    taken = _recorded(monkeypatch)
    few = 0
    for step in range(25):
        name = rng.choice(sorted(notes))
        if rng.random() < 0.8:
            notes[name] = _typed_note(rng, 100 + step)
        else:
            del notes[name]
        taken.clear()
        pages, was_patched = project.plan(notes)
        few += was_patched and len(set(taken)) < len(notes) // 3
        assert pages == _full(notes, PROSE), f"step {step}"
    assert few >= 10  # most edits patched their topics from the kept givers
