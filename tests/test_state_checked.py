"""state.db's full check (`PRAGMA quick_check`, every page read) is skipped where the file
is exactly as a process that checked it left it (state/checked.py); anything else, and
damage SQLite meets in use, brings the check back, and the build's repair with it."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner
from projects import make_project

from wikic.cli.main import cli
from wikic.project import Project
from wikic.state import State, checked


def build(project: Project) -> str:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "build", "-q"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stderr


def test_a_database_closed_as_checked_is_trusted_until_it_changes(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    build(project)
    path = project.state_path
    assert checked.as_left(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert not checked.as_left(path)  # changed by something else since
    State.open(path).close()  # checked in full, then recorded again
    assert checked.as_left(path)
    Path(f"{path}-wal").write_bytes(b"")
    assert not checked.as_left(path)  # a writer still at work, or one killed mid-write
    os.unlink(f"{path}-wal")
    assert checked.as_left(path)


def test_only_a_checked_open_records(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    build(project)
    path = project.state_path
    peeked = State.peek(path)  # found as a checked close left it: it stays so
    assert peeked is not None
    peeked.close()
    assert checked.as_left(path)
    checked.forget(path)
    peeked = State.peek(path)
    assert peeked is not None
    peeked.close()
    assert not checked.as_left(path)  # a peek checks nothing: it vouches for nothing new
    State.open(path).close()
    assert checked.as_left(path)


def test_damage_behind_an_unchanged_stat_is_still_repaired(tmp_path: Path) -> None:
    """Bytes overwritten in place, the file's time put back: trusted by stat, the database
    fails when read, and the build moves it aside as for any damaged one."""
    project = make_project(tmp_path)
    build(project)
    path = project.state_path
    st = path.stat()
    with open(path, "r+b") as fh:
        fh.write(b"not a database " * (st.st_size // 15))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert checked.as_left(path)
    err = build(project)
    assert "was damaged" in err and "moved it aside" in err
    assert list(tmp_path.glob(".wikic/state.db.corrupt-*"))
    assert checked.as_left(path)  # the new database, checked and closed
    assert "damaged" not in build(project)
