"""Broken state: a garbage, truncated or corrupted state.db is moved aside with a
warning and the build starts afresh (cached answers lost, pages kept or adopted); a
.wikic/ from a newer wikic is refused and left untouched; a deleted .wikic/ costs the
cache but never a person's file. A StateError is a message, never a traceback."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from faults.harness import calls, integrity, make_project, notes, wiki_snapshot, wikic
from wikic.project import Project
from wikic.wiki.page import split_page


def built(tmp_path: Path) -> tuple[Project, Path, int]:
    project = make_project(tmp_path / "p", notes(5))  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    run = wikic(project.root, "build", "-q", log=log)
    assert run.code == 0, run.err
    return project, log, len(calls(log))


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "sqlite3." not in err, err


def garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database, it is a shopping list\n" * 200)


def truncated(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def scrambled(path: Path) -> None:
    """Pages in the middle overwritten; the header (and so the first query) still fine."""
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(4096 * 2)
        fh.write(os.urandom(max(0, min(4096 * 3, size - 4096 * 2))))


def checkpoint(project: Project) -> None:
    """Fold the WAL into state.db, so that damaging the file damages everything."""
    db = sqlite3.connect(project.state_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


@pytest.mark.parametrize("damage", [garbage, truncated, scrambled])
def test_a_damaged_state_is_moved_aside_and_the_wiki_kept(tmp_path: Path, damage: object) -> None:
    project, log, first_calls = built(tmp_path)
    checkpoint(project)
    before = wiki_snapshot(project, with_log=True)
    damage(project.state_path)  # type: ignore[operator]
    for command in (["lint"], ["ask", "what is caching?"]):
        run = wikic(project.root, *command)
        assert run.code == 1, (command, run.err)
        assert "is damaged" in run.err and "run `wikic build`" in run.err
        no_traceback(run.err)
    start = len(calls(log))
    run = wikic(project.root, "build", "--json", log=log)
    assert run.code == 0, run.err
    no_traceback(run.err)
    warnings = [line for line in run.err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "was damaged" in warnings[0] and "moved it aside" in warnings[0]
    assert run.json()["warnings"] == [warnings[0].removeprefix("warning: ")]
    moved = sorted(p.name for p in project.state_dir.glob("state.db.corrupt-*"))
    assert moved and not moved[0].endswith(("-wal", "-shm"))
    assert len(calls(log)) - start == first_calls  # the cached answers were lost with the file
    assert wiki_snapshot(project, with_log=True) == before  # every page adopted as it was
    assert integrity(project) == "ok"
    again = wikic(project.root, "build", "--json", "-q", log=log)
    assert again.code == 0 and again.json()["nothing_to_do"] and again.json()["warnings"] == []


def test_a_state_from_a_newer_wikic_is_refused_and_untouched(tmp_path: Path) -> None:
    project, log, _ = built(tmp_path)
    checkpoint(project)
    db = sqlite3.connect(project.state_path)
    db.execute("UPDATE meta SET v='99' WHERE k='format'")
    db.execute("CREATE TABLE future_only (x TEXT)")
    db.commit()
    db.close()
    (project.sources_dir / "note01.md").write_text(notes(5, version=2)["note01.md"], encoding="utf-8")
    state_files = [p for p in project.state_dir.iterdir() if p.name.startswith("state.db")]
    state_before = {p.name: p.read_bytes() for p in state_files}
    wiki_before = wiki_snapshot(project, with_log=True)
    for command in (["build"], ["build", "--json"], ["lint"], ["ask", "what is caching?"]):
        run = wikic(project.root, *command, log=log)
        assert run.code == 1, (command, run.err)
        assert "newer wikic" in run.err and "state format 99" in run.err
        no_traceback(run.err)
    after = {p.name: p.read_bytes() for p in project.state_dir.iterdir() if p.name.startswith("state.db")}
    assert after == state_before
    assert wiki_snapshot(project, with_log=True) == wiki_before


def test_a_deleted_state_readopts_pages_and_keeps_every_hand_edit(tmp_path: Path) -> None:
    project, log, first_calls = built(tmp_path)
    edited = project.wiki_dir / "topic-1.md"
    edited.write_text(
        edited.read_text(encoding="utf-8").replace("Topic 1 is", "Topic 1, as I see it, is"), encoding="utf-8"
    )
    mine = project.wiki_dir / "my-own-notes.md"
    mine.write_text(
        "---\ntitle: My own notes\ntype: concept\n---\n\n# My own notes\n\nWritten by hand.\n",
        encoding="utf-8",
    )
    (project.sources_dir / "note04.md").unlink()  # its pages are no longer planned
    before = wiki_snapshot(project)
    shutil.rmtree(project.state_dir)
    start = len(calls(log))
    run = wikic(project.root, "build", "--json", log=log)
    assert run.code == 0, run.err
    no_traceback(run.err)
    report = run.json()
    assert report["conflicts"] == ["wiki/topic-1.md"]
    assert report["removed"] == []  # pages it cannot verify as its own are never deleted
    after = wiki_snapshot(project)
    for name in ("topic-1.md", "my-own-notes.md", "note-4.md", "topic-4.md"):
        assert after[name] == before[name], name  # the hand edit, the hand-made page, the unverifiable ones
    # hashing.md (and the term pages from structure, "Avoid repeated work") were fed by the deleted
    # source and others: still sealed as wikic wrote them, so they are verified as wikic's own and
    # rewritten; every other page is adopted as it was.
    fed = {name for name, text in before.items() if _fed_by_others_and(text, "sources/note04.md")}
    assert "hashing.md" in fed
    assert sorted(report["written"]) == sorted(f"wiki/{name}" for name in fed | {"index.md"})
    assert {name for name in before if after[name] != before[name]} == fed | {"index.md"}
    assert len(calls(log)) - start < first_calls  # no model call for the source that is gone
    assert integrity(project) == "ok"


def _fed_by_others_and(page: bytes, source: str) -> bool:
    meta = split_page(page.decode()).meta if page.startswith(b"---") else {}
    sources = meta.get("sources") or []
    return source in sources and len(sources) > 1


def test_a_file_where_the_state_folder_should_be(tmp_path: Path) -> None:
    project, _, _ = built(tmp_path)
    shutil.rmtree(project.state_dir)
    project.state_dir.write_text("not a folder\n", encoding="utf-8")
    before = wiki_snapshot(project, with_log=True)
    run = wikic(project.root, "build")
    assert run.code == 1
    assert ".wikic" in run.err and run.err.startswith("wikic: error: ")
    no_traceback(run.err)
    assert wiki_snapshot(project, with_log=True) == before
