"""The settled sources found by their walk's lines (build/settled.py): the last finished
build keeps the line (`path<TAB>size<TAB>mtime_ns`) and hash of each source it left settled,
and the next compares those lines with its own walk's whole. Whatever changed in sources/
(a source added, deleted, renamed, edited) is listed and read as a build that checks every
source by stat would; where the lines cannot be used, every source is checked by stat."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from unittest.mock import ANY

from tests.projects import run_build, wiki_files
from tests.test_settled import SOLO, _edit_rag, _project, _text
from wikic.project import Project
from wikic.sources.extract import store_dir
from wikic.state import Meta, State


def _forced_equal(project: Project) -> None:
    """The wiki an edit left is the wiki a build that reads every source makes."""
    edited = wiki_files(project)
    forced, _ = run_build(project, force=True)
    assert forced.ok, forced.errors
    assert wiki_files(project) == edited


def _aged_like(path: Path, other: Path) -> None:
    """`path` last changed when `other` did (long enough ago to be trusted by stat)."""
    st = other.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _lines(project: Project) -> str:
    """The record's lines: the base, and beside it the lines of sources settled anew since."""
    with State.open(project.state_path) as state:
        base = state.get_meta(Meta.SETTLED_LINES) or ""
        saved = json.loads(state.get_meta(Meta.SETTLED) or "{}")
    return "\n".join([base, *(entry[0] for entry in saved.get("delta", {}).values() if entry)])


def test_every_settled_source_is_kept_with_its_line(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    kept = _lines(project).split("\n")[1:]
    names = sorted(f"sources/{p.name}" for p in project.sources_dir.iterdir())
    assert kept[len(names) : 2 * len(names)] == names  # the paths, in order
    for line, path in zip(kept, names, strict=False):
        st = (project.root / path).stat()
        assert line == f"{path}\t{st.st_size}\t{st.st_mtime_ns}"


def test_sources_added_deleted_and_renamed_are_read_as_a_stat_check_reads_them(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    src = project.sources_dir
    (src / "kiln.md").write_text("# Kilns\n\nA kiln fires glazes at high heat for the studio.\n")
    (src / "solo.md").unlink()
    os.rename(src / "tools.md", src / "kit.md")  # same size and mtime under another name
    _aged_like(src / "kiln.md", src / "rag.md")
    report, backend = run_build(project)
    assert report.ok, report.errors
    assert backend.digests == 1  # kiln.md; kit.md's digest is tools.md's, from the cache
    assert sorted(report.reread) == [
        "sources/kiln.md",
        "sources/kit.md",
        "sources/solo.md",
        "sources/tools.md",
    ]
    assert "high heat" in _text(project) and "fired twice" not in _text(project)
    assert "sources/solo.md" not in _lines(project)
    _forced_equal(project)


def test_a_source_edited_at_another_stat_is_read_and_settled_again(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    solo = project.sources_dir / "solo.md"
    solo.write_text(solo.read_text().replace("fired twice", "fired three times"))
    _aged_like(solo, project.sources_dir / "rag.md")
    report, backend = run_build(project)
    assert report.ok and backend.digests == 1
    assert "fired three times" in _text(project)
    st = solo.stat()
    assert f"sources/solo.md\t{st.st_size}\t{st.st_mtime_ns}" in _lines(project)
    _edit_rag(project)
    again, backend = run_build(project)
    assert again.ok and backend.digests == 1  # rag.md only: solo.md settled by its new line
    _forced_equal(project)


def test_lines_that_do_not_go_with_the_record_are_not_used(tmp_path: Path) -> None:
    """Lines of another record (a build killed between writing the two): every source is
    checked by stat instead. Here they claim the source just edited as settled."""
    project = _project(tmp_path / "p")
    _edit_rag(project)
    rag = project.sources_dir / "rag.md"
    st = rag.stat()
    token, _, payload = _lines(project).partition("\n")
    old = next(line for line in payload.split("\n") if line.startswith("sources/rag.md\t"))
    with State.open(project.state_path) as state:
        state.set_meta(
            Meta.SETTLED_LINES,
            "another\n" + payload.replace(old, f"sources/rag.md\t{st.st_size}\t{st.st_mtime_ns}"),
        )
    report, backend = run_build(project)
    assert report.ok and backend.digests == 1  # rag.md, read as its stat says
    assert "about three hundred words" in _text(project)
    assert _lines(project).partition("\n")[0] not in ("another", token)  # kept anew
    _forced_equal(project)


def test_a_failed_source_is_read_again_by_the_next_build(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    bad = project.sources_dir / "bad.md"
    bad.write_bytes(b"caf\xe9 not text \x00\x01")
    _aged_like(bad, project.sources_dir / "rag.md")
    first, _ = run_build(project)
    assert not first.ok and "sources/bad.md" not in _lines(project)
    bad.write_text("# Clay\n\nClay is wedged before it is thrown on the wheel.\n")
    _aged_like(bad, project.sources_dir / "rag.md")
    report, backend = run_build(project)
    assert report.ok, report.errors
    assert backend.digests == 1 and "wedged" in _text(project)
    _forced_equal(project)


def test_a_copied_project_takes_its_sources_as_settled(tmp_path: Path) -> None:
    """The lines name sources by their place in the project: a copy keeps them (with their
    stats), and reads a settled source from its own folder when the plan asks for it."""
    project = _project(tmp_path / "p")
    shutil.copytree(project.root, tmp_path / "q", copy_function=shutil.copy2)
    copy = Project(tmp_path / "q")
    _edit_rag(copy)
    report, backend = run_build(copy)
    assert report.ok, report.errors
    assert backend.digests == 1
    _forced_equal(copy)


def test_a_converted_source_is_read_by_every_build(tmp_path: Path) -> None:
    """A CSV's text lives in the store (sources/extract.py), kept while a build reads it: it is
    never settled, and an edit of another source keeps its text there."""
    project = _project(tmp_path / "p")
    table = project.sources_dir / "kilns.csv"
    table.write_text("kiln,heat\nsmall,high\nlarge,low\n")
    _aged_like(table, project.sources_dir / "rag.md")
    first, _ = run_build(project)
    assert first.ok, first.errors
    stored = sorted(p.name for p in store_dir(project.root).iterdir())
    assert stored and "sources/kilns.csv" not in _lines(project)
    _edit_rag(project)
    report, _ = run_build(project)
    assert report.ok and sorted(p.name for p in store_dir(project.root).iterdir()) == stored
    _forced_equal(project)


def _raw(project: Project) -> tuple[str, dict[str, list[str] | None]]:
    with State.open(project.state_path) as state:
        saved = json.loads(state.get_meta(Meta.SETTLED) or "{}")
        return state.get_meta(Meta.SETTLED_LINES) or "", saved.get("delta", {})


def test_edits_keep_the_base_lines_and_record_what_changed_beside_them(tmp_path: Path) -> None:
    """An edit writes the lines of what it read, not every source's lines again (12 MB at
    100,000 sources); a source read but not settled (changed just before the build) is
    read again by the next; one deleted means new base lines, without it."""
    project = _project(tmp_path / "p")
    base, delta = _raw(project)
    assert base and not delta
    rag, solo = project.sources_dir / "rag.md", project.sources_dir / "solo.md"
    _edit_rag(project)
    _aged_like(rag, solo)
    report, _ = run_build(project)
    assert report.ok and _raw(project)[0] == base
    st = rag.stat()
    assert _raw(project)[1] == {"sources/rag.md": [f"sources/rag.md\t{st.st_size}\t{st.st_mtime_ns}", ANY]}
    was = solo.stat()  # as the base lines have it
    solo.write_text(solo.read_text().replace("fired twice", "fired three times"))  # just now: not settled
    report, backend = run_build(project)
    assert report.ok and backend.digests == 1 and _raw(project)[0] == base
    assert _raw(project)[1]["sources/solo.md"] is None and "sources/rag.md" in _raw(project)[1]
    # back at the base line's size and mtime, with other bytes: only its read tells
    solo.write_text(SOLO.replace("fired twice", "baked twice"))
    os.utime(solo, ns=(was.st_atime_ns, was.st_mtime_ns))
    report, backend = run_build(project)
    assert report.ok and "baked twice" in _text(project) and "fired three times" not in _text(project)
    _forced_equal(project)
    (project.sources_dir / "tools.md").unlink()
    report, _ = run_build(project)
    assert report.ok
    base, delta = _raw(project)
    assert "sources/tools.md" not in base and not delta
    _forced_equal(project)


def test_a_source_added_since_the_base_lines_stays_settled_beside_them(tmp_path: Path) -> None:
    """A source settled since the base lines (not among them: recorded beside, by its path) is
    taken as settled by the next edit, each base source keeping its own line."""
    project = _project(tmp_path / "p")
    base, _ = _raw(project)
    src = project.sources_dir
    (src / "kiln.md").write_text("# Kilns\n\nA kiln fires glazes at high heat for the studio.\n")
    _aged_like(src / "kiln.md", src / "solo.md")
    report, backend = run_build(project)
    assert report.ok and backend.digests == 1 and _raw(project)[0] == base
    assert "sources/kiln.md" in _raw(project)[1]  # beside the base: it sorts among its paths
    _edit_rag(project)
    _aged_like(src / "rag.md", src / "solo.md")
    report, backend = run_build(project)
    assert report.ok and backend.digests == 1  # rag.md alone: kiln.md and the others settled
    assert report.reread == ["sources/rag.md"]
    _forced_equal(project)
