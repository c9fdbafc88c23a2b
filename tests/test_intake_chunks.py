"""A full build reads and digests its sources a chunk at a time (build/intake.py: CHUNK, 2,048
sources), so that 100,000 sources' lines and actions are never all held: the pages, the model
calls and the errors reported are those of a build that takes them all at once. Here the chunk
is two sources, so that a project of six has three. The work shared with forked children goes
in rounds (forked.rounds) of about equal sizes, none left too small to share."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from tests.projects import NOTES, make_project, run_build, wiki_files
from wikic import forked
from wikic.build import intake
from wikic.project import Project

SIX = NOTES | {"pottery.md": "# Pottery\n\nGlazes are fired twice in the small kiln behind the studio.\n"}


def _pages(project: Project) -> dict[str, bytes]:
    return {name: text for name, text in wiki_files(project).items() if name != "log.md"}  # log.md: times


def _pair(tmp_path: Path) -> tuple[Project, Project]:
    one = make_project(tmp_path / "one", SIX)
    (one.sources_dir / "empty.md").write_text("   \n")  # skipped with a warning, in the second chunk
    return one, Project(shutil.copytree(one.root, tmp_path / "chunked"))


def test_sources_taken_a_chunk_at_a_time_make_the_same_wiki(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole, chunked = _pair(tmp_path)
    assert len(list(whole.sources_dir.iterdir())) > 2 * 2
    report, backend = run_build(whole)
    assert report.ok, report.errors
    monkeypatch.setattr(intake, "CHUNK", 2)
    chunked_report, chunked_backend = run_build(chunked)
    assert chunked_report.ok, chunked_report.errors
    assert _pages(chunked) == _pages(whole)
    assert sorted(chunked_backend.requests) == sorted(backend.requests)
    assert chunked_report.warnings == report.warnings and any("empty" in w for w in report.warnings)
    again, calls = run_build(chunked)  # nothing changed: nothing read or asked again
    assert again.ok and calls.requests == []


def test_chunks_are_as_few_as_the_most_allows_and_of_equal_sizes() -> None:
    assert intake.chunks(10_000, 4096) == [0, 3333, 6666, 10_000]  # not 4,096, 4,096 and 1,808
    assert intake.chunks(4096, 4096) == [0, 4096] and intake.chunks(4097, 4096) == [0, 2048, 4097]
    assert intake.chunks(5, None) == [0, 5]  # all at once
    assert intake.chunks(0, 4096) == intake.chunks(0, None) == [0]  # none: no chunk
    for count in range(1, 60):
        bounds = intake.chunks(count, 7)
        sizes = [b - a for a, b in itertools.pairwise(bounds)]
        assert bounds[0] == 0 and bounds[-1] == count and len(sizes) == -(-count // 7)
        assert max(sizes) <= 7 and max(sizes) - min(sizes) <= 1


def test_rounds_are_of_about_the_size_asked_and_of_equal_sizes() -> None:
    assert forked.rounds(10_299, 5000) == [0, 5149, 10_299]  # not 5,000, 5,000 and 299 alone
    assert forked.rounds(100_000, 5000) == list(range(0, 100_001, 5000))
    assert forked.rounds(7499, 5000) == [0, 7499] and forked.rounds(7500, 5000) == [0, 3750, 7500]
    assert forked.rounds(10, 5000) == [0, 10] and forked.rounds(0, 5000) == [0]  # none: no round
    for count in range(1, 120):
        bounds = forked.rounds(count, 8)
        sizes = [b - a for a, b in itertools.pairwise(bounds)]
        assert bounds[0] == 0 and bounds[-1] == count and max(sizes) - min(sizes) <= 1
        assert max(sizes) <= 8 * 1.5 and (len(sizes) == 1 or min(sizes) >= 8 * 0.75 - 1)
