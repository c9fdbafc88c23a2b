"""The lint at the cost of what changed (lint/patch.py), against a full lint: after builds and
edits of each kind, the build's closing summary, `wikic lint --json` (from the cache) and the
cache read without storing equal a full lint finding for finding, and so does `build --force`'s
summary; after a one-source edit, only the pages whose bytes the build changed are read again."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from lintkit import lint_json
from projects import HAND_PAGES, NOTES, Counting, make_project

from wikic.build.report import Report
from wikic.build.run import BuildOptions, build
from wikic.lint.runner import LintOptions, LintResult, lint, lint_cached
from wikic.project import Project
from wikic.state import State

HAND = {  # tests/projects.py's, with a link to an alias ([[Faiss]])
    **HAND_PAGES,
    "more-notes.md": HAND_PAGES["more-notes.md"].replace("[[IVF index]].", "[[IVF index]] and [[Faiss]]."),
}
GRAPHS = "# Graph indexes\n\n## HNSW\n\nHNSW layers small-world graphs so that a search starts coarse.\n"


def _build(project: Project, force: bool = False) -> Report:
    report = build(project, BuildOptions(force=force), backend_factory=lambda schema: Counting())
    assert report.ok, report.errors
    return report


def _findings(result: LintResult) -> list[dict[str, object]]:
    return [f.to_json() for f in result.findings]


def _same(project: Project, report: Report | None = None) -> list[dict[str, object]]:
    """Every way of asking equals a full lint; returns its findings."""
    full = lint(project)
    want = _findings(full)
    if report is not None:
        assert report.lint == full.counts()
    with State.open(project.state_path) as state:
        assert _findings(lint_cached(project, state, store=False)) == want
    assert lint_json(project)[1] == want  # from the cache, stored for the next
    with State.open(project.state_path) as state:
        assert _findings(lint_cached(project, state)) == want
    some = LintOptions(["broken-link", "orphan-page"])
    assert lint_json(project, "--rule", "broken-link", "--rule", "orphan-page")[1] == _findings(
        lint(project, some)
    )
    return want


def _page(name: str, find: str, put: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        path = p.wiki_dir / name
        path.write_text(path.read_text(encoding="utf-8").replace(find, put, 1), encoding="utf-8")

    return edit


def _source(name: str, find: str, put: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        path = p.sources_dir / name
        path.write_text(path.read_text(encoding="utf-8").replace(find, put, 1), encoding="utf-8")

    return edit


def _new_source(p: Project) -> None:  # a page named by words other pages link to already
    (p.sources_dir / "pq.md").write_text(
        "# Product quantization\n\n## Product quantization\n\n"
        "Product quantization compresses embeddings into short codes for FAISS.\n"
    )


# (what is edited, whether a build follows)
STEPS: list[tuple[str, Callable[[Project], None], bool]] = [
    ("source text", _source("rag.md", "a few hundred tokens", "about three hundred words"), True),
    ("a new link target", _new_source, True),
    ("a deleted page", lambda p: (p.wiki_dir / "third-notes.md").unlink(), False),
    ("a built page deleted", lambda p: (p.wiki_dir / "hnsw.md").unlink(), False),
    ("... and built again", lambda p: None, True),
    ("a renamed topic", _source("tools.md", "## FAISS", "## Faiss library"), True),
    ("a hand edit", _page("my-notes.md", "twice.", "twice. See [[Faiss library]]."), False),
    ("a hand edit of a built page", _page("hnsw.md", "\n\n", "\n\nA line of mine.\n\n"), False),
    ("a renamed page by hand", _page("more-notes.md", "title: More notes", "title: Further notes"), False),
    ("a deleted source", lambda p: (p.sources_dir / "graphs.md").unlink(), True),
    ("index.md edited by hand", _page("index.md", "\n- ", "\n- [[nowhere]]\n- "), False),
    ("a source edited, no build", _source("vectors.md", "stores embeddings", "keeps vectors"), False),
    ("built", lambda p: None, True),
    (
        "an alias given by hand",
        _page("more-notes.md", "type: concept", "type: concept\naliases: [IVF index]"),
        False,
    ),
    (
        "a lint switch added",
        _page("my-notes.md", "# My notes", "<!-- wikic-lint: disable=broken-link -->\n# My notes"),
        False,
    ),
    ("index.md deleted", lambda p: (p.wiki_dir / "index.md").unlink(), False),
    ("built at last", lambda p: None, True),
]


def test_the_cached_lint_equals_a_full_lint_through_builds_and_edits(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", {**NOTES, "graphs.md": GRAPHS})
    _build(project)
    for name, text in HAND.items():
        (project.wiki_dir / name).write_text(text, encoding="utf-8")
    report = _build(project)
    seen = [_same(project, report)]
    assert seen[0], "the hand-made pages give the rules something to find"
    for what, edit, then_build in STEPS:
        edit(project)
        report = _build(project) if then_build else None
        seen.append(_same(project, report))
        assert seen[-1] != seen[-2] or then_build, f"{what}: a hand edit changes what lint finds"
    copy = Path(shutil.copytree(project.root, tmp_path / "forced", symlinks=True))
    forced = Project(copy)
    assert _build(forced, force=True).lint == lint(forced).counts()


HOUR = 3600 * 10**9


def _age(paths: list[Path]) -> None:
    """As files written long ago: their stats are trusted by the next lint."""
    for n, path in enumerate(paths):
        past = time.time_ns() - 2 * HOUR + n * 1000
        os.utime(path, ns=(past, past))


def _stats(project: Project) -> dict[Path, tuple[int, int]]:
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in project.wiki_dir.glob("*.md")}


@pytest.mark.parametrize("store", [True, False], ids=["stored", "read-only"])
def test_a_one_source_edit_reads_only_the_pages_the_build_changed(tmp_path: Path, store: bool) -> None:
    project = make_project(tmp_path / "p", {**NOTES, "graphs.md": GRAPHS})
    _build(project)
    for name, text in HAND.items():
        (project.wiki_dir / name).write_text(text, encoding="utf-8")
    _build(project)
    _age([*project.wiki_dir.glob("*.md"), *project.sources_dir.glob("*.md")])
    with State.open(project.state_path) as state:
        lint_cached(project, state, fresh=True)  # every stat recorded as trusted
    before = _stats(project)
    _source("rag.md", "a few hundred tokens", "about three hundred words")(project)
    _build(project)
    after = _stats(project)
    changed = [p for p in after if before.get(p) != after[p]]
    _age(changed)
    pages = [p for p in changed if p.name not in ("index.md", "log.md")]
    assert 0 < len(pages) < len(after) - 3, "the edit rewrote some pages, not all"
    with State.open(project.state_path) as state:
        cached = lint_cached(project, state, store=store)
    assert cached.checked == len(pages)
    assert _findings(cached) == _findings(lint(project))
    if store:  # then a hand edit of one page's links: that page alone is looked at again
        _page("my-notes.md", "[[HNSW]]", "[[HNSW]] and [[Nowhere yet]]")(project)
        _age([project.wiki_dir / "my-notes.md"])
        with State.open(project.state_path) as state:
            cached = lint_cached(project, state)
        assert cached.checked == 1
        assert _findings(cached) == _findings(lint(project))
        assert any("Nowhere yet" in str(f["message"]) for f in _findings(cached))
