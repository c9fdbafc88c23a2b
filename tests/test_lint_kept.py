"""`wikic lint` with nothing changed since the last gives the findings it kept (lint/unchanged.py),
and after any change what a full lint finds; every build drops them."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from projects import make_project, run_build

from wikic import snapshot
from wikic.lint import unchanged
from wikic.lint.entries import RACY_NS, VERSION
from wikic.lint.runner import LintOptions, lint, lint_project
from wikic.project import Project
from wikic.state import Meta, State

HAND = """---
title: My notes
type: concept
---

# My notes

We should try [[HNSW]] and [[Nothing at all]].
Chunks are split [rag.md:7](../sources/rag.md#L7).
"""


def _settle() -> None:
    """Past the racy window of what the build just wrote (findings are kept only then)."""
    time.sleep(2 * RACY_NS / 1e9)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = make_project(tmp_path_factory.mktemp("lintkept") / "p")
    (project.wiki_dir / "my-notes.md").write_text(HAND, encoding="utf-8")
    assert run_build(project)[0].ok
    return project


@pytest.fixture
def project(built: Project, tmp_path: Path) -> Project:
    shutil.copytree(built.root, tmp_path / "p", symlinks=True)
    copy = Project(tmp_path / "p")
    assert run_build(copy)[0].ok  # the copy's own clean mark (its paths and stats)
    _settle()
    return copy


def _kept(project: Project) -> str | None:
    with State.open(project.state_path) as state:
        return state.get_meta(Meta.LINT_KEPT)


def _found(project: Project, opts: LintOptions | None = None) -> list[dict[str, object]]:
    """`wikic lint`'s findings."""
    return [f.to_json() for f in lint_project(project, opts or LintOptions()).findings]


def _full(project: Project, opts: LintOptions | None = None) -> list[dict[str, object]]:
    return [f.to_json() for f in lint(project, opts or LintOptions()).findings]


def _no_lint(*_: object) -> Any:
    raise AssertionError("the lint ran: the kept findings were not given")


def test_nothing_changed_gives_the_findings_kept(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _found(project)
    assert first == _full(project) and any(f["rule"] == "broken-link" for f in first)
    assert _kept(project) is not None
    monkeypatch.setattr(unchanged, "counted_lint", _no_lint)
    assert _found(project) == first
    only = LintOptions(rules=["broken-link"])
    assert _found(project, only) == _full(project, only) and len(_full(project, only)) < len(first)


@pytest.mark.parametrize("change", ["page", "source", "schema", "attachment"])
def test_after_a_change_the_lint_finds_what_a_full_lint_does(project: Project, change: str) -> None:
    kept = _found(project)
    assert _kept(project) is not None
    if change == "page":
        path = project.wiki_dir / "my-notes.md"
        path.write_text(HAND.replace("[[HNSW]]", "[[Nowhere else]]"), encoding="utf-8")
    elif change == "source":  # the cited line moved: its citation no longer holds
        rag = project.sources_dir / "rag.md"
        rag.write_text("Inserted first.\n\n" + rag.read_text(encoding="utf-8"), encoding="utf-8")
    elif change == "schema":
        text = project.schema_path.read_text(encoding="utf-8")
        project.schema_path.write_text(text + 'lint:\n  rules:\n    broken-link: "off"\n', encoding="utf-8")
    else:
        (project.wiki_dir / "nothing at all").write_text("an attachment a link may name")
    now = _found(project)
    assert now == _full(project)
    assert now != kept or change == "attachment"  # (broken-link targets pages, not files)


def test_every_build_drops_them(project: Project) -> None:
    _found(project)
    assert _kept(project) is not None
    (project.sources_dir / "rag.md").unlink()  # a deletion's build, as `wikic forget` runs it
    assert run_build(project)[0].ok
    assert _kept(project) is None
    _settle()
    _found(project)
    assert _kept(project) is not None


def test_kept_damaged_or_of_another_mark_is_not_given(project: Project) -> None:
    first = _found(project)
    other = json.dumps({"v": VERSION, "mark": "another", "findings": [], "disabled": {}, "pages": 0})
    for damaged in ["{", '{"v": 0}', "[]", other]:
        with State.open(project.state_path) as state:
            state.set_meta(Meta.LINT_KEPT, damaged)
        assert _found(project) == first
        assert _kept(project) != damaged  # kept again


def test_kept_only_where_no_file_changed_within_the_racy_window(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    root.mkdir()
    page = root / "a.md"
    page.write_text("x")
    old = time.time_ns() - 10 * RACY_NS
    os.utime(page, ns=(old, old))
    taken = time.time_ns()
    assert unchanged._settled(snapshot.walk(root, "wiki"), taken)
    os.utime(page, ns=(taken - RACY_NS // 2, taken - RACY_NS // 2))  # within the window
    assert not unchanged._settled(snapshot.walk(root, "wiki"), taken)
    os.utime(page, ns=(old, old))
    (root / "link.md").symlink_to(page)  # not a plain file: never kept
    assert not unchanged._settled(snapshot.walk(root, "wiki"), taken)
    (root / "link.md").unlink()
    assert unchanged._settled(snapshot.walk(tmp_path / "missing", "prompts"), taken)
