"""An edit costs what it changes, and the result is what a full rebuild makes: after each
kind of edit, the incremental build's wiki/ equals `--force`'s (which renders every page
again) byte for byte, and its closing lint summary equals a full `wikic lint`."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.projects import NOTES as BASE_NOTES
from tests.projects import make_project, wiki_files
from wikic.build.report import Report
from wikic.build.run import BuildOptions, build
from wikic.lint.runner import lint, lint_cached
from wikic.project import Project
from wikic.state import State

NOTES = {
    **BASE_NOTES,
    "graphs.md": """# Graph indexes

## HNSW

HNSW layers small-world graphs so that a search starts coarse and ends fine.
""",
}

# Pages a person keeps in wiki/ beside the build's: findings that depend on other pages
# (links, missing pages) and on the sources' lines (a citation), so that an edit elsewhere
# changes them while these files stay as they are.
HAND = {
    "my-notes.md": """---
title: My notes
type: concept
---

# My notes

We should try [[Product quantization]] and read about [[HNSW]] and [[Graph Indexes]].
The **Quantum foam** idea came up twice. Chunks are split [rag.md:7](../sources/rag.md#L7).
""",
    "more-notes.md": """---
title: More notes
type: concept
---

# More notes

Again **Quantum foam**, and [[Vector databases]] and [[IVF index]].
""",
    "third-notes.md": """---
title: Third notes
type: concept
---

# Third notes

Yet again **Quantum foam**; see [[My notes]] and [[More notes]].
""",
}


def _project(root: Path) -> Project:
    project = make_project(root, NOTES)
    first = _build(project)
    assert first.ok, first.errors
    for name, text in HAND.items():
        (project.wiki_dir / name).write_text(text, encoding="utf-8")
    assert _build(project).ok
    return project


def _build(project: Project, force: bool = False) -> Report:
    return build(project, BuildOptions(force=force))


def _edit_text(p: Project) -> None:
    path = p.sources_dir / "rag.md"
    path.write_text(path.read_text().replace("a few hundred tokens", "about three hundred words"))


def _new_link_target(p: Project) -> None:
    # a page named by words already in other pages' text: they link to it now
    (p.sources_dir / "pq.md").write_text(
        "# Embeddings\n\n## Embeddings\n\nEmbeddings are vectors a model makes from text for FAISS.\n\n"
        "## Product quantization\n\nProduct quantization compresses embeddings into short codes.\n"
    )


def _delete_page(p: Project) -> None:
    (p.sources_dir / "graphs.md").unlink()


def _rename_topic(p: Project) -> None:
    path = p.sources_dir / "tools.md"
    path.write_text(path.read_text().replace("## FAISS", "## Faiss library"))


EDITS: dict[str, Callable[[Project], None]] = {
    "source text": _edit_text,
    "a new link target": _new_link_target,
    "a deleted page": _delete_page,
    "a renamed topic": _rename_topic,
}


@pytest.mark.parametrize("kind", list(EDITS))
def test_an_incremental_build_equals_a_full_rebuild_byte_for_byte(tmp_path: Path, kind: str) -> None:
    project = _project(tmp_path / "inc")
    shutil.copytree(project.root, tmp_path / "full", symlinks=True)
    full = Project(tmp_path / "full")
    for p in (project, full):
        EDITS[kind](p)
    inc_report = _build(project)
    full_report = _build(full, force=True)
    assert inc_report.ok and full_report.ok
    got, want = wiki_files(project), wiki_files(full)
    got.pop("log.md"), want.pop("log.md")
    assert got == want
    # only what changed was rendered again: never every page
    assert len(inc_report.written) < len(got) - len(HAND)
    # the closing summary is exactly a full lint's, and so is every finding
    full_lint = lint(project)
    assert inc_report.lint == full_lint.counts()
    assert full_lint.findings, "the hand-made pages give the rules something to find"
    with State.open(project.state_path) as state:
        cached = lint_cached(project, state)
    assert [f.to_json() for f in cached.findings] == [f.to_json() for f in full_lint.findings]


def test_the_lint_cache_follows_a_hand_page_and_a_cited_source(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")

    def same() -> list[dict[str, object]]:
        with State.open(project.state_path) as state:
            cached = [f.to_json() for f in lint_cached(project, state).findings]
        assert cached == [f.to_json() for f in lint(project).findings]
        return cached

    before = same()
    assert same() == before  # nothing changed: every finding from the cache, the same
    # a cited line changes under an unchanged page: its bad-citation appears
    rag = project.sources_dir / "rag.md"
    rag.write_text(rag.read_text().replace("Documents are split into chunks", "Nothing at all"))
    after = same()
    assert any(f["rule"] == "bad-citation" for f in after) and after != before
    # a page edited: its own findings and the others' (a link to it now resolves)
    (project.wiki_dir / "ivf-index.md").write_text(
        "---\ntitle: IVF index\ntype: concept\n---\n\nInverted files.\n"
    )
    same()
    (project.wiki_dir / "third-notes.md").unlink()
    same()
    # a page's text changes but not what the rules across pages read of it (its links, names)
    notes = project.wiki_dir / "more-notes.md"
    notes.write_text(notes.read_text().replace("Again", "Once more"))
    same()
    # ... and then its links do: a broken link gone
    notes.write_text(notes.read_text().replace("[[IVF index]]", "IVF"))
    assert same() != after
    # a page wikic wrote, deleted: a finding on a page that is not there
    built = [p for p in sorted(project.wiki_dir.glob("*.md")) if p.name not in {*HAND, "index.md", "log.md"}]
    built[0].unlink()
    assert any(f["rule"] == "hand-edit" and f["path"] == f"wiki/{built[0].name}" for f in same())
