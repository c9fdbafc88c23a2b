"""An edit costs what it changes, and the result is what a full rebuild makes: after each
kind of edit, the incremental build's wiki/ equals `--force`'s (which renders every page
again) byte for byte, and its closing lint summary equals a full `wikic lint`."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from tests.projects import HAND_PAGES as HAND
from tests.projects import NOTES as BASE_NOTES
from tests.projects import make_project, wiki_files
from wikic.build.plan import PagePlan, SourceInfo, memo_for, plan
from wikic.build.report import Report
from wikic.build.run import BuildOptions, build
from wikic.config import Schema, Topic, WriteConfig
from wikic.lint.runner import lint, lint_cached
from wikic.project import Project
from wikic.state import Planned, State

NOTES = {
    **BASE_NOTES,
    "graphs.md": """# Graph indexes

## HNSW

HNSW layers small-world graphs so that a search starts coarse and ends fine.
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


# --- the plan: each source planned again only where it changed, equal to a full replan ---------
def _digest(lines: list[str]) -> dict[str, object]:
    """What a model might answer: each `##` heading a topic, cited to the line under it; the
    first text line as the summary."""
    topics = [
        {"name": line[3:].strip(), "type": "concept", "lines": [[n + 2, n + 2]]}
        for n, line in enumerate(lines)
        if line.startswith("## ")
    ]
    first = next(n for n, line in enumerate(lines, 1) if line.strip() and not line.startswith("#"))
    return {"summary": [{"text": lines[first - 1], "lines": [[first, first]]}], "topics": topics}


def _infos(notes: dict[str, str]) -> list[SourceInfo]:
    out = []
    for name, text in sorted(notes.items()):
        lines = text.split("\n")
        out.append(SourceInfo(f"sources/{name}", lines[0].lstrip("# "), lines, _digest(lines)))
    return out


def _replace(notes: dict[str, str], name: str, old: str, new: str) -> dict[str, str]:
    assert old in notes[name]
    return {**notes, name: notes[name].replace(old, new)}


REPEATED = "FAISS builds HNSW graphs too."
PROSE = Schema(write=WriteConfig(mode="prose"))
NOTES_MODE = Schema(write=WriteConfig(mode="notes"))
PINNED = Schema(
    write=WriteConfig(mode="prose"), topics=[Topic(name="Embeddings", aliases=["embedding vectors"])]
)
PLAN_EDITS: dict[str, Callable[[dict[str, str]], dict[str, str]]] = {
    "a line's text": lambda n: _replace(n, "rag.md", "a few hundred tokens", "about three hundred words"),
    "a topic renamed": lambda n: _replace(n, "tools.md", "## FAISS", "## Faiss library"),
    "a topic another source names": lambda n: _replace(n, "graphs.md", "## HNSW", "## Chunking"),
    "a line now shown by a topic page": lambda n: _replace(n, "vectors.md", "## HNSW\n", "## FAISS\n"),
    "a pinned topic named": lambda n: _replace(n, "rag.md", "before the model", "and embeddings before it"),
    # the HNSW page quotes graphs.md's line now, not tools.md's same line: tools.md, unchanged,
    # lists it among the notes of its own page again
    "a line another source repeats": lambda n: _replace(
        n,
        "graphs.md",
        "HNSW layers small-world graphs so that a search starts coarse and ends fine.",
        REPEATED,
    ),
    "a source deleted": lambda n: {k: v for k, v in n.items() if k != "graphs.md"},
    "a source added": lambda n: {**n, "pq.md": "# PQ\n\n## HNSW\n\nHNSW graphs hold embeddings.\n"},
}


class _Rows(dict[str, Planned]):
    """The planned table, as a plan's memo saves into it."""

    def save(self, what: str, made: dict[str, tuple[str, str]]) -> None:
        if what == "names":  # what the state keeps apart to search (planned_names): not a row's
            return
        for path, (key, text) in made.items():
            row = self.get(path, Planned("", "", "", ""))
            if what == "facts":
                self[path] = replace(row, key=key, facts=text)
            elif what == "notes":
                self[path] = replace(row, notes_key=key, notes=text)
            else:
                self[path] = replace(row, struct_key=key, struct=text)


@pytest.mark.parametrize("schema", [PROSE, PINNED, NOTES_MODE], ids=["prose", "pinned", "notes"])
@pytest.mark.parametrize("kind", list(PLAN_EDITS))
def test_a_plan_from_the_memo_equals_a_full_replan(kind: str, schema: Schema) -> None:
    notes = {**NOTES, "tools.md": NOTES["tools.md"] + f"\n## HNSW\n\n{REPEATED}\n"}
    rows = _Rows()
    plan(_infos(notes), schema, {}, memo_for(schema, rows, rows.save))
    for step in range(2):  # an edit, then the same edit again on what the memo became
        notes = PLAN_EDITS[kind](notes) if step == 0 else notes
        infos = _infos(notes)
        memo = memo_for(schema, rows, rows.save)
        got: dict[str, PagePlan] = plan(infos, schema, {}, memo)
        assert got == plan(infos, schema, {})
        assert len(memo.fresh) < len(infos) or kind == "a source added"
        for path in memo.gone(i.path for i in infos):
            del rows[path]
    assert not memo.fresh, "nothing changed: every source from the memo"


def test_a_changed_setting_plans_every_source_again() -> None:
    infos = _infos(NOTES)
    rows = _Rows()
    plan(infos, PROSE, {}, memo_for(PROSE, rows, rows.save))
    for schema in (PINNED, NOTES_MODE):
        memo = memo_for(schema, _Rows(rows))
        assert plan(infos, schema, {}, memo) == plan(infos, schema, {})
        assert memo.fresh == {i.path for i in infos}
