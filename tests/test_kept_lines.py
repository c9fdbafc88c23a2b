"""What an edit's plan does not read stays as kept: the lines of the names and terms from
structure stay marshalled (keptlines.Lines) and compare by their bytes, the candidates a source
names are found from its packed names (keptlines.Named), and the kept plan's heads stand for the
sticky slugs only while state.db marks the two the same. Each equals what reading it all gives."""

from __future__ import annotations

import marshal
import random
import sqlite3
import zlib
from pathlib import Path

import pytest

from tests.projects import NOTES, forced_equal, make_project, replace_in_source, wiki_files
from tests.test_incremental import NOTES as PLAN_NOTES
from tests.test_incremental import PLAN_EDITS, PROSE, REPEATED
from tests.test_merge import _source
from tests.test_replan import EDITS, FAISS, SOLO, _full, _Project
from wikic.build.candidates import searched, source_names
from wikic.build.keptlines import Lines, Named
from wikic.build.keptplan import Kept, RowsOf
from wikic.build.merge import Packed, merge_for
from wikic.build.plan import memo_for
from wikic.build.replan import plan_kept, settings_of
from wikic.build.run import BuildOptions, build
from wikic.hashing import text_hash
from wikic.project import Project
from wikic.state import State


def test_lines_are_the_same_by_their_bytes_or_else_by_what_they_read_back_as() -> None:
    where = {"a.md": [1, 3], "b.md": [2]}
    kept = Lines.of(where)
    assert Lines(kept.packed) == kept and kept == where and where == kept
    other = Lines(
        zlib.compress(marshal.dumps({"a.md": [1, 3], "b.md": [2]}, 2))
    )  # the same lines, other bytes
    assert other.packed != kept.packed and other == kept and kept == other
    assert Lines.of({"a.md": [1, 3]}) != kept and Lines.of({"a.md": [1, 4], "b.md": [2]}) != kept
    assert kept != None  # noqa: E711
    assert dict(Lines(kept.packed)) == where and "a.md" in Lines(kept.packed) and len(kept) == 2


@pytest.mark.parametrize("seed", range(4))
def test_the_candidates_a_source_names_are_read_from_its_packed_names(seed: int) -> None:
    """Named, edit after edit of a kept merge: for every source, exactly the candidates whose
    lines hold it, with those lines; a source the merge has none of names none."""
    rng = random.Random(seed)
    sources = {f"s{i:02d}.md": _source(rng) for i in range(14)}
    kept: bytes | None = None
    since: bytes | None = None
    last: dict[str, tuple[str, str]] = {}
    for _ in range(12):
        sources[rng.choice(sorted(sources))] = _source(rng)
        lines = {p: sources[p] for p in sorted(sources)}
        packed = {p: source_names(text) for p, text in lines.items()}
        keys = {p: text_hash("\n".join(text)) for p, text in lines.items()}
        merge = merge_for(kept, keys, Packed(packed), last.get, since)
        found = merge.candidates(lines, Packed(packed), 2)
        named = Named(merge.keyed, packed)
        for path in packed:
            assert named.of(path) == {i: c.lines[path] for i, c in enumerate(found) if path in c.lines}
        assert named.of("not merged.md") == {}
        assert named.index(packed) == {i: sorted(c.lines.items()) for i, c in enumerate(found) if c.lines}
        base, since = merge.kept()
        kept = base or kept
        last = {p: (keys[p], packed[p]) for p in lines}


@pytest.mark.parametrize("kind", list(EDITS))
def test_a_plan_patched_from_a_merge_made_anew_equals_the_full_plan(kind: str) -> None:
    """The kept merge lost (a plan killed before it kept its own): merged anew, its lines are
    other bytes than those the kept plan holds, compared by what they read back as."""
    notes = {
        **PLAN_NOTES,
        "tools.md": PLAN_NOTES["tools.md"] + f"\n## HNSW\n\n{REPEATED}\n",
        "solo.md": SOLO,
        "a.md": FAISS,
    }
    project = _Project(PROSE)
    project.plan(notes)
    project.merge = project.merge_since = None
    notes = EDITS[kind](notes)
    pages, was_patched = project.plan(notes)
    assert was_patched and pages == _full(notes, PROSE)


class _Marked(RowsOf):
    """Rows whose heads state.db marks as the sticky slugs."""

    def heads_are_slugs(self, token: str) -> bool:
        return True


@pytest.mark.parametrize("kind", ["a line's text", "a source added", "a source deleted"])
def test_a_patched_plan_says_whether_its_slugs_are_the_sticky_ones_it_took(kind: str) -> None:
    project = _Project(PROSE)
    project.plan(PLAN_NOTES)
    assert project.kept is not None
    kept = Kept.loads(project.kept, settings_of(PROSE), project.since)
    assert kept is not None
    heads = kept.heads
    assert heads == {pid: row[: row.index(b"\n")].decode() for pid, row in project.pages.items()}
    notes = PLAN_EDITS[kind](PLAN_NOTES)
    memo = memo_for(PROSE, project.rows, None, project.merge, project.merge_since)
    rows = _Marked(project.pages)
    unread = lambda: pytest.fail("the sticky slugs read")  # noqa: E731
    pages, keep = plan_kept(
        project.infos(notes), PROSE, unread, memo, project.kept, rows, None, project.since
    )
    assert not keep.every and pages == _full(notes, PROSE)
    assert bool(keep.sticky) == (
        kind == "a line's text"
    )  # a page new or gone: the slugs table is not the heads
    assert {pid: page.slug for pid, page in pages.items()} == heads or kind != "a line's text"


def _kept(project: Project) -> set[str]:
    with sqlite3.connect(project.state_path) as db:
        return {name for (name,) in db.execute("SELECT name FROM kept")}


def _sql(project: Project, sql: str) -> None:
    with sqlite3.connect(project.state_path) as db:
        db.execute(sql)


def test_a_sticky_slug_changed_by_any_writer_is_read_by_the_next_plan(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    assert "heads=slugs" in _kept(project)  # the edit's plan took the heads as the sticky slugs
    _sql(project, "UPDATE slugs SET slug = 'rag-notes' WHERE page_id = 'source:sources/rag.md'")
    assert "heads=slugs" not in _kept(project)
    replace_in_source(
        project, "rag.md", "before the model writes its answer", "before the model answers, as Bazel does"
    )
    assert build(project, BuildOptions()).ok
    assert (project.wiki_dir / "rag-notes.md").exists()
    assert "heads=slugs" in _kept(project)  # found the same again
    assert forced_equal(project, tmp_path)


def test_a_sticky_slug_another_writer_moved_on_a_page_the_edit_does_not_plan_is_written_there(
    tmp_path: Path,
) -> None:
    """The slugs equal those the plan read, not the heads kept: the pages whose slug moved
    are planned again (replan.patched skips looking for them only where the two are the same)."""
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    _sql(project, "UPDATE slugs SET slug = 'tools-notes' WHERE page_id = 'source:sources/tools.md'")
    replace_in_source(
        project, "rag.md", "before the model writes its answer", "before the model answers, as Bazel does"
    )
    assert build(project, BuildOptions()).ok
    assert (project.wiki_dir / "tools-notes.md").exists()
    assert forced_equal(project, tmp_path)


def test_the_heads_stand_for_the_sticky_slugs_only_as_kept_by_the_plan_that_marked(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    with State.open(project.state_path) as state:
        mark = state.kept("heads=slugs")
        assert mark and state.heads_are_slugs(mark.decode()) and not state.heads_are_slugs("another plan")
    before = wiki_files(project)
    _sql(project, "DELETE FROM kept WHERE name = 'plan+'")  # the plan beside the base lost: the base's heads
    replace_in_source(
        project, "rag.md", "before the model writes its answer", "before the model answers, as Bazel does"
    )
    assert build(project, BuildOptions()).ok
    assert set(wiki_files(project)) == set(before) and "heads=slugs" in _kept(project)
    assert forced_equal(project, tmp_path)


def _slugs(project: Project) -> dict[str, str]:
    with sqlite3.connect(project.state_path) as db:
        return dict(db.execute("SELECT page_id, slug FROM slugs").fetchall())


SLUG_EDITS = {
    "a source added": lambda p: (p.sources_dir / "graphs.md").write_text(
        "# Graph search\n\nIt walks a **vector database** graph.\n", encoding="utf-8"
    ),
    "a source deleted": lambda p: (p.sources_dir / "tools.md").unlink(),
    "a source moved": lambda p: (p.sources_dir / "tools.md").rename(
        (p.sources_dir / "kept").mkdir() or p.sources_dir / "kept" / "tools.md"
    ),
}


@pytest.mark.parametrize("kind", SLUG_EDITS)
def test_pages_come_gone_or_moved_leave_the_sticky_slugs_the_plans_heads_and_marked_so(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build patches the sticky slugs into its plan's (a page new or gone, a source's page
    under another id), as a full assembly writes them, and marks them as its heads: the next
    plan does not read them."""
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    SLUG_EDITS[kind](project)
    assert build(project, BuildOptions()).ok
    assert "heads=slugs" in _kept(project)
    slugs = _slugs(project)
    assert forced_equal(project, tmp_path) and slugs == _slugs(Project(tmp_path / "forced"))
    assert len(slugs) == len(wiki_files(project)) - 2  # index.md, log.md
    monkeypatch.setattr(State, "slugs", lambda self: pytest.fail("the sticky slugs read"))
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok and "heads=slugs" in _kept(project)
    monkeypatch.undo()
    assert forced_equal(project, tmp_path / "again")


def test_a_source_retitled_then_settled_takes_its_title_as_changed_since_the_base(tmp_path: Path) -> None:
    """Its entry changed since the base (beside it): settled by the next edit, it takes its title
    and line count from there, not from the base's columns, where pages that show it are made again."""
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    replace_in_source(
        project, "rag.md", "# Retrieval-augmented generation", "# Retrieval pipelines\n\nA note on RAG."
    )
    assert build(project, BuildOptions()).ok
    assert "plan+" in _kept(project)  # beside the base
    path = project.sources_dir / "vectors.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("nearest-neighbour", "nearest"), encoding="utf-8"
    )
    assert build(project, BuildOptions()).ok
    assert forced_equal(project, tmp_path)


def _count(project: Project, table: str) -> int:
    with sqlite3.connect(project.state_path) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_the_names_searched_for_a_key_picked_anew_are_of_the_facts_as_they_are(tmp_path: Path) -> None:
    """planned_names: a row's names and phrases (candidates.searched), searched where a patched
    merge picks a key anew; a row whose facts another writer changed (or that has none yet) is
    searched in its facts until name_rows gives it its names; a row deleted takes its names."""
    texts = {
        "sources/a.md": ["# A", "", "It ranks by similarity search, as Ada Lovelace said."],
        "sources/b.md": ["# B", "", "A note on chunk sizes."],
    }
    packed = {path: source_names(lines) for path, lines in texts.items()}
    with State.open(tmp_path / "state.db") as state:
        state.save_planned("facts", {p: (f"k{p}", '{"said": "vector stores"}\n' + packed[p]) for p in texts})
        state.save_planned("names", {p: (f"k{p}", searched(packed[p])) for p in texts})
        rows = state.planned()
        assert rows.holding(["similarity search"]) == {"sources/a.md"}
        assert rows.holding(["Ada Lovelace"]) == {"sources/a.md"}
        assert rows.holding(["vector stores"]) == set()  # the facts' JSON is not what is searched
        assert rows.name_rows(searched) == 0
        # another writer (an older wikic) plans b.md again: its names go with its facts
        again = source_names(["# B", "", "A note on similarity search."])
        state.db.execute(
            "UPDATE planned SET key = 'x', facts = ? WHERE path = 'sources/b.md'", ["{}\n" + again]
        )
        assert state.db.execute("SELECT path FROM planned_names").fetchall() == [("sources/a.md",)]
        assert rows.holding(["similarity search"]) == {"sources/a.md", "sources/b.md"}  # from its facts
        assert rows.name_rows(searched) == 1 and rows.name_rows(searched) == 0
        assert rows.holding(["similarity search"]) == {"sources/a.md", "sources/b.md"}
        named = state.db.execute("SELECT names FROM planned_names WHERE path = 'sources/b.md'").fetchone()
        assert named == (searched(again),)
        state.drop_planned(["sources/a.md"])
        assert state.db.execute("SELECT path FROM planned_names").fetchall() == [("sources/b.md",)]


def test_a_state_without_the_names_searched_is_given_them_by_the_first_edit_that_searches(
    tmp_path: Path,
) -> None:
    """A build from before planned_names (its rows emptied here): the edit whose phrase two
    sources now write finds the other in its facts, gives every row its names (--dry-run, its
    digest cached so that it plans the same, writes none), and builds what a forced build does."""
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    assert _count(project, "planned_names") == _count(project, "planned") == len(NOTES)
    edited = ("before the model answers", "by similarity search before the model answers")
    for old, new in (edited, edited[::-1]):  # the edit's digest cached: a dry run plans it
        replace_in_source(project, "rag.md", old, new)
        assert build(project, BuildOptions()).ok
    _sql(project, "DELETE FROM planned_names")
    replace_in_source(project, "rag.md", *edited)
    assert build(project, BuildOptions(dry_run=True)).ok
    assert _count(project, "planned_names") == 0
    assert build(project, BuildOptions()).ok
    assert _count(project, "planned_names") == len(NOTES)
    assert forced_equal(project, tmp_path)
