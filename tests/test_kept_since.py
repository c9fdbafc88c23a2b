"""What a plan keeps for the next (the plan, build/replan.py; the merge of names, build/merge.py)
is a base and, beside it, what changed since: an edit writes what it changed, not the whole, and
the next edit patches from both. Planned rows changed by a plan that never kept its own (killed)
leave a mark under which nothing kept is patched from."""

from __future__ import annotations

import marshal
import sqlite3
from pathlib import Path

from tests.projects import NOTES, forced_equal, make_project, replace_in_source
from tests.test_incremental import PROSE, _Rows
from wikic.build.keptplan import Cols, Columns, Entry, Kept
from wikic.build.keptsources import taken
from wikic.build.plan import SourceInfo, memo_for
from wikic.build.run import BuildOptions, build
from wikic.project import Project
from wikic.state import State


def _kept(project: Project) -> dict[str, bytes]:
    with sqlite3.connect(project.state_path) as db:
        return {name: bytes(blob) for name, blob in db.execute("SELECT name, blob FROM kept")}


def test_an_edit_keeps_what_changed_beside_the_base_and_the_next_patches_from_both(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    first = _kept(project)
    assert {"plan", "merge"} <= first.keys() and not {"plan+", "merge+", "plan?"} & first.keys()
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    second = _kept(project)
    assert second["plan"] == first["plan"] and second["merge"] == first["merge"]  # bases left as they were
    assert {"plan+", "merge+"} <= second.keys() and "plan?" not in second
    replace_in_source(
        project, "rag.md", "before the model writes its answer", "before the model answers, as Bazel does"
    )
    assert build(project, BuildOptions()).ok
    third = _kept(project)
    assert third["plan"] == first["plan"] and third["plan+"] != second["plan+"]
    assert forced_equal(project, tmp_path)


def _planned_in_full_by_the_next_edit(project: Project, before: dict[str, bytes], tmp_path: Path) -> None:
    replace_in_source(
        project, "rag.md", "before the model writes its answer", "before the model answers, as Bazel does"
    )
    assert build(project, BuildOptions()).ok
    after = _kept(project)
    assert after["plan"] != before["plan"] and "plan+" not in after and "plan?" not in after  # in full
    assert forced_equal(project, tmp_path)


def test_rows_changed_by_a_plan_that_kept_nothing_mean_the_full_plan(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    with State.open(project.state_path) as state:  # as a plan killed after saving its rows leaves it
        state.save_planned("facts", {})
        assert state.kept("plan") is None and state.kept("plan+") is None
        assert state.kept("merge") is not None  # checked against the rows by merge.py itself
    before = _kept(project)
    _planned_in_full_by_the_next_edit(project, before, tmp_path)


def _loaded(base: bytes, since: bytes | None = None) -> Kept:
    kept = Kept.loads(base, "s", since)
    assert kept is not None
    return kept


def test_names_from_structure_moved_since_the_base_stay_beside_it_until_the_next_base() -> None:
    before = [("Ninja", "entity", {"sources/a.md": [1]})]
    moved = [("Ninja", "entity", {"sources/a.md": [1], "sources/b.md": [3]})]
    a = "sources/a.md"
    kept = Kept({a: "k"}, {a: ("A", 1, False, "a")}, {a: []}, {a: []}, {a: []}, [], before, {}, {}, 0, "t0")
    base = kept.dumps("s")
    kept.base = "t0"
    assert _loaded(base, kept.dumps_since("s")).structural == before  # not written beside
    kept.structural, kept.moved = moved, True  # an edit moved them (replan._kept_since)
    since = kept.dumps_since("s")
    assert len(since) > len(_loaded(base).dumps_since("s"))
    for _ in range(2):  # edits that leave them: they stay as moved, not the base's
        again = _loaded(base, since)
        assert again.structural == moved
        since = again.dumps_since("s")


def _planned(project: Project) -> set[str]:
    with sqlite3.connect(project.state_path) as db:
        return {path for (path,) in db.execute("SELECT path FROM planned")}


def test_a_patched_plan_lets_go_the_rows_of_sources_gone_and_any_row_of_no_source(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    (project.sources_dir / "vectors.md").unlink()
    assert build(project, BuildOptions()).ok
    assert "plan?" not in _kept(project)  # a new base: no byte of the source gone left in it
    assert _planned(project) == {f"sources/{name}" for name in NOTES if name != "vectors.md"}
    with sqlite3.connect(project.state_path) as db:  # a notes row of no source (key ''), as no plan keeps
        db.execute("INSERT INTO planned VALUES ('sources/old.md', '', '', 'k', '[]')")
        db.execute("DELETE FROM kept WHERE name = 'plan?'")  # left before a plan that kept its own
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    assert "plan+" in _kept(project)
    assert _planned(project) == {f"sources/{name}" for name in NOTES if name != "vectors.md"}
    assert forced_equal(project, tmp_path)


def test_planned_rows_changed_by_any_writer_mean_the_full_plan(tmp_path: Path) -> None:
    """As another wikic that knows nothing of the kept plan would change them: state.db's own
    triggers mark it, and the build plans in full (no read of every row's key to tell)."""
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    replace_in_source(project, "rag.md", "before the model answers", "before the model writes its answer")
    assert build(project, BuildOptions()).ok
    before = _kept(project)
    assert "plan+" in before and "plan?" not in before
    with sqlite3.connect(project.state_path) as db:
        db.execute("UPDATE planned SET key = 'planned by another wikic' WHERE path = 'sources/rag.md'")
    assert "plan?" in _kept(project)
    _planned_in_full_by_the_next_edit(project, before, tmp_path)


def test_the_base_keeps_every_source_entry_as_it_was_names_with_the_separator_too() -> None:
    """The base keeps each source's names and topics joined into one string (keptplan.SEP), but
    a name the model wrote with that character in it, or a lone empty one, as a list: every
    entry reads back as it was, and the givers of a topic are found either way."""
    odd = "Glaze\x1fKiln"
    keys = {"sources/a.md": "ka", "sources/b.md": "kb", "sources/c.md": "kc"}
    meta = {path: (path[8].upper(), 3, False, path[8]) for path in keys}
    names = {"sources/a.md": ["Ninja", "Make"], "sources/b.md": [odd], "sources/c.md": [""]}
    gives = {"sources/a.md": ["ninja", "make"], "sources/b.md": [odd], "sources/c.md": []}
    kinds = {"sources/a.md": ["tool", "tool"], "sources/b.md": ["concept"], "sources/c.md": ["tool"]}
    kept = Kept(keys, meta, names, gives, kinds, [], [], {}, {}, 0, "t0")
    again = _loaded(kept.dumps("s"))
    assert again.columns is not None and isinstance(again.columns.cols, Cols)
    assert set(again.columns.cols.decoded) == {0}  # the keys; each other column where first read
    assert again.names["sources/a.md"] == ["Ninja", "Make"] and set(again.columns.cols.decoded) == {0, 5}
    assert _loaded(again.dumps("s")).entry("sources/b.md") == kept.entry("sources/b.md")  # kept as read
    assert (again.keys, dict(again.meta), dict(again.names), dict(again.gives)) == (keys, meta, names, gives)
    assert dict(again.kinds) == kinds
    assert again.givers({odd}) == {"sources/b.md"} and again.givers({"make"}) == {"sources/a.md"}
    assert again.givers({"Glaze"}) == set()


def test_a_new_base_made_from_one_read_back_keeps_each_row_as_every_entry_makes_it() -> None:
    """A base written anew from one read back (a source deleted: no byte of it may stay) takes
    the rows nothing changed from the base's columns undecoded, and the changed rows from what
    changed: the same columns as every entry makes them, in the same order (the keys')."""
    odd = "Glaze\x1fKiln"
    paths = [f"sources/{c}.md" for c in "abcde"]
    keys = {p: f"k{p[8]}" for p in paths}
    meta = {p: (p[8].upper(), 3, False, p[8]) for p in paths}
    names = {p: ["Ninja", p[8]] for p in paths} | {"sources/c.md": [odd]}
    gives = {p: ["ninja"] for p in paths} | {"sources/d.md": [""]}
    kinds = {p: ["tool", "concept"] for p in paths}
    kept = Kept(dict(keys), dict(meta), dict(names), dict(gives), dict(kinds), [], [], {}, {}, 0, "t0")
    again = _loaded(kept.dumps("s"))
    changes: dict[str, Entry | None] = {
        "sources/b.md": None,  # deleted
        "sources/d.md": ("kd2", ("D2", 4, True, "d2"), ["Make", odd], ["make"], ["tool", "tool"]),
        "sources/e.md": ("ke", ("E", 3, False, "e"), ["Ninja", "e"], ["ninja"], ["concept"]),  # kinds alone
        "sources/f.md": ("kf", ("F", 1, False, "f"), [""], [], ["tool"]),  # new
    }
    again.update(changes)
    plain = Kept(dict(keys), dict(meta), dict(names), dict(gives), dict(kinds), [], [], {}, {}, 0, "t0")
    plain.update(changes)
    assert again.columns is not None
    fields = [again.meta, again.names, again.gives, again.kinds]
    laid = again.columns.patched(again.keys, fields)  # type: ignore[arg-type]
    made = Columns.of(plain.keys, plain.meta, plain.names, plain.gives, plain.kinds)
    assert laid.paths == made.paths == [f"sources/{c}.md" for c in "acdef"]
    assert laid.cols == made.cols and laid.givers.keys() == made.givers.keys()
    assert all(sorted(marshal.loads(laid.givers[t])) == marshal.loads(made.givers[t]) for t in made.givers)
    assert [marshal.loads(col) for col in laid.packed()] == [marshal.loads(col) for col in made.packed()]
    back = _loaded(again.dumps("s"))
    assert [back.entry(p) for p in made.paths] == [plain.entry(p) for p in made.paths]


def test_a_settled_source_changed_since_the_base_is_taken_as_changed_not_as_the_base_has_it() -> None:
    """keptsources.taken, no source come or gone: a settled source takes its row by position in
    the base's columns, but one an edit changed since (a retitle, a fallback) takes what that
    edit kept: its key, title, line count and fallback flag."""
    a, b = "sources/a.md", "sources/b.md"
    kept = Kept(
        {a: "ka", b: "kb"},
        {a: ("A", 1, False, "a"), b: ("B", 2, False, "b")},
        {a: [], b: []},
        {a: [], b: []},
        {a: [], b: []},
        [],
        [],
        {},
        {},
        0,
        "t0",
    )
    base = kept.dumps("s")
    kept.base = "t0"
    kept.update({a: ("ka2", ("Retitled", 3, True, "retitled"), [], [], [])})
    again = _loaded(base, kept.dumps_since("s"))
    sources = [SourceInfo(path, "", None, None, list) for path in (a, b)]  # settled: unread
    memo = memo_for(PROSE, _Rows(), None, None, None)
    named = taken(sources, memo, again)[3]
    assert [(s.title, s.count, s.fallback) for s in sources] == [("Retitled", 3, True), ("B", 2, False)]
    assert memo.keys == {a: "ka2", b: "kb"} and list(named) == [b]  # a fallback names nothing
