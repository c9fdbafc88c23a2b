"""A build killed after its plan was kept (build/replan.py) and before its pages were
assembled: the next build patches that plan, in which the edit's pages are as planned; what
the last assembly made of them must not stand (assemble.py keys pages by the plan it went by)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from faults.harness import make_project, note, notes, spawn, wait_until, wiki_snapshot, wikic, write_sources
from wikic.build.quick import QUICK
from wikic.project import Project


def _kept_plan(project: Project) -> bytes:
    """The kept plan as state.db holds it: its base and what changed since (replan.Kept)."""
    with sqlite3.connect(project.state_path) as db:
        rows = db.execute("SELECT blob FROM kept WHERE name IN ('plan', 'plan+') ORDER BY name").fetchall()
    return b"".join(bytes(row[0]) for row in rows)


def test_the_build_after_one_killed_between_its_plan_and_its_pages_renders_the_edit(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", notes(6), latency=0.5)
    assert wikic(project.root, "build", "-q").code == 0
    # its lead is its page's summary: the source's own page changes, not only its topics'
    write_sources(project, {"note02.md": note(2, version=2).replace("in some detail", "in great detail")})
    before = _kept_plan(project)
    proc = spawn(project.root, "build", "-q")
    # the plan is kept before the pages are written (each write takes the model 0.5 s)
    assert wait_until(lambda: _kept_plan(project) not in (b"", before) or proc.poll() is not None)
    assert proc.poll() is None, "the build ended before it was killed"
    proc.kill()
    proc.communicate(timeout=30)
    # the state's pages were assembled from another plan than the one kept: in full (quick.py)
    after = wikic(project.root, "build", "-q", "--explain")
    assert after.code == 0 and QUICK not in after.err
    _equals_a_forced_rebuild(project, tmp_path / "forced")
    # and the edit after it, on what that build left, is assembled from its own pages alone
    write_sources(project, {"note03.md": note(3, version=2).replace("in some detail", "in great detail")})
    then = wikic(project.root, "build", "-q", "--explain")
    assert then.code == 0 and QUICK in then.err
    _equals_a_forced_rebuild(project, tmp_path / "forced-then")


def _equals_a_forced_rebuild(project: Project, where: Path) -> None:
    forced = Project(shutil.copytree(project.root, where))
    assert wikic(forced.root, "build", "-q", "--force").code == 0
    without_log = lambda files: {k: v for k, v in files.items() if k != "log.md"}  # noqa: E731
    assert without_log(wiki_snapshot(project)) == without_log(wiki_snapshot(forced))
