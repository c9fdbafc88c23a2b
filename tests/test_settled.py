"""A source the last finished build read, found by stat as it left it, is not read again
(build/settled.py): as make trusts a file's stat, a build trusts it, and an edit of one
source among many reads that one. What invalidates the trust (another input, --force, a
build that did not finish) makes the build read every source again."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.projects import make_project, run_build, wiki_files
from wikic.project import Project
from wikic.state import Meta, State


def _aged(project: Project) -> None:
    """Every source last changed a minute ago: none is too recent to be trusted by stat."""
    past = time.time_ns() - 60_000_000_000
    for path in project.sources_dir.iterdir():
        os.utime(path, ns=(past, past))


def _same_stat_edit(path: Path, old: str, new: str) -> None:
    """New bytes under the same size and mtime: only reading the file tells them apart."""
    assert len(old) == len(new)
    st = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size


SOLO = "# Pottery\n\nGlazes are fired twice in the small kiln behind the studio.\n"


def _project(root: Path) -> Project:
    project = make_project(root)
    (project.sources_dir / "solo.md").write_text(SOLO)  # shares no name or term with the rest
    _aged(project)
    first, _ = run_build(project)
    assert first.ok, first.errors
    return project


def _text(project: Project) -> str:
    return "\n".join(p.decode() for p in wiki_files(project).values())


def _edit_rag(project: Project, words: str = "about three hundred words") -> None:
    """A real edit: the build has something to do (a same-stat edit alone is a no-op build)."""
    rag = project.sources_dir / "rag.md"
    rag.write_text(rag.read_text().replace("a few hundred tokens", words))


def test_an_edit_reads_only_the_source_it_changed(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    _same_stat_edit(project.sources_dir / "solo.md", "fired twice", "baked twice")
    _edit_rag(project)
    report, backend = run_build(project)
    assert report.ok and backend.digests == 1  # rag.md, which the build read again
    assert "about three hundred words" in _text(project)
    assert "fired twice" in _text(project)  # solo.md was not read: its stat is trusted, as make does
    assert report.up_to_date + report.ran + report.cached >= 4  # the settled digests counted too
    forced, _ = run_build(project, force=True)  # --force reads every source again
    assert forced.ok and "baked twice" in _text(project) and "fired twice" not in _text(project)


def test_a_settled_source_the_plan_finds_changed_is_digested_again(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    # tools.md names FAISS, as vectors.md does, and now rag.md: the plan reads them all to check
    # the name's uses again (uses it checked before are not checked again while their lines stay)
    _same_stat_edit(project.sources_dir / "tools.md", "written by Meta", "written by Kiwi")
    _edit_rag(project, "about three hundred words for FAISS")
    report, backend = run_build(project)
    assert report.ok and backend.digests == 2  # rag.md, and tools.md once read
    assert "written by Kiwi" in _text(project) and "written by Meta" not in _text(project)


def test_another_input_changed_makes_the_build_read_every_source(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    _same_stat_edit(project.sources_dir / "solo.md", "fired twice", "baked twice")
    with project.schema_path.open("a", encoding="utf-8") as fh:
        fh.write("lint:\n  citation_threshold: 61\n")  # schema.yaml changed: nothing is trusted
    report, _ = run_build(project)
    assert report.ok
    assert "baked twice" in _text(project)


def test_a_build_that_did_not_finish_leaves_nothing_settled(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    with State.open(project.state_path) as state:
        assert state.get_meta(Meta.SETTLED)
    _same_stat_edit(project.sources_dir / "solo.md", "fired twice", "baked twice")
    dry, _ = run_build(project, dry_run=True)  # a dry run neither trusts nor clears the mark
    assert dry.ok
    with State.open(project.state_path) as state:
        assert state.get_meta(Meta.SETTLED)
        state.delete_meta(Meta.SETTLED)  # as a build killed after it started leaves the state
    _edit_rag(project)
    report, _ = run_build(project)
    assert report.ok
    assert "baked twice" in _text(project)


def test_a_source_changed_just_before_the_build_that_read_it_is_read_again(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    solo = project.sources_dir / "solo.md"
    solo.write_text(SOLO.replace("fired twice", "glazed twice"))  # mtime: now, as the build starts
    _edit_rag(project)
    first, _ = run_build(project)
    assert first.ok and "glazed twice" in _text(project)
    # another write in the same mtime tick, at the same size, after that build read it
    _same_stat_edit(solo, "glazed twice", "dipped twice")
    _edit_rag_again(project)
    report, _ = run_build(project)
    assert report.ok and "dipped twice" in _text(project)


def _edit_rag_again(project: Project) -> None:
    rag = project.sources_dir / "rag.md"
    rag.write_text(rag.read_text().replace("about three hundred words", "a few hundred words"))


def test_action_records_read_by_id_are_the_stored_ones(tmp_path: Path) -> None:
    """The build's records (state/build.ActionRecords), read by id where asked: each equal to
    the stored record, the missing ones missing, the ids and the digests' ids exact."""
    project = _project(tmp_path)
    with State.open(project.state_path) as state:
        stored = state.actions()
        records = state.action_records()
        assert len(stored) > 3 and "digest:sources/solo.md" in stored
        for action_id in sorted(stored)[::2]:  # some asked first: every() leaves them as they were
            assert records[action_id] == stored[action_id]
            assert records.get(action_id) is records[action_id]
        assert records.get("digest:sources/none.md") is None and "write:nothing" not in records
        assert sorted(records) == sorted(stored) and len(records) == len(stored)
        assert {r.id: r for r in records.every()} == stored
        digests = sorted(i for i in stored if i.startswith("digest:"))
        assert sorted(records.ids_of("digest")) == digests
        assert sorted(records.ids_of("write")) == sorted(i for i in stored if i.startswith("write:"))
