"""The no-op check of `wikic build` (build/uptodate.py): a second build with nothing
changed stops after the stat calls, without importing the heavy libraries, and
every change the full build would notice still makes the next build look."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from projects import NOTES, make_project, run_build

from wikic.build.run import build
from wikic.cli.main import cli
from wikic.lint.runner import build_summary
from wikic.project import Project
from wikic.prompts import PACKAGE_DIR as PACKAGE_PROMPTS

NOTES_RAG, NOTES_TOOLS = NOTES["rag.md"], NOTES["tools.md"]


def cli_build(project: Project, *args: str, code: int = 0) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["-C", str(project.root), "build", "--json", "-q", *args], catch_exceptions=False
    )
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def built(tmp_path: Path) -> Project:
    project = make_project(tmp_path)
    assert not cli_build(project)["nothing_to_do"]
    return project


def test_second_build_reports_what_the_full_check_reports(tmp_path: Path) -> None:
    project = built(tmp_path)
    fast = cli_build(project)
    slow, backend = run_build(project)  # the library call: the pipeline's own check
    assert fast["nothing_to_do"] and slow.nothing_to_do and backend.requests == []
    assert (fast["sources"], fast["pages"], fast["actions"]) == (
        slow.sources,
        slow.pages,
        {"ran": 0, "cached": 0, "up_to_date": slow.up_to_date, "failed": 0},
    )
    assert fast["lint"] == build_summary(project)


def test_the_python_entry_point_builds_as_the_cli_does(tmp_path: Path) -> None:
    """wikic.build.run.build is `wikic build`: lint summary, then a second build that is a no-op
    with the CLI's figures."""
    project = make_project(tmp_path)
    first = build(project)
    assert not first.nothing_to_do and first.ok and first.lint == build_summary(project)
    second = build(project)
    assert second.nothing_to_do and second.lint == first.lint and second.lint_line == first.lint_line
    by_cli = cli_build(project)
    assert by_cli["nothing_to_do"]
    assert {k: v for k, v in by_cli.items() if k != "seconds"} == {
        k: v for k, v in second.to_json().items() if k != "seconds"
    }


def test_noop_build_imports_neither_pydantic_nor_jinja2_nor_rapidfuzz(tmp_path: Path) -> None:
    project = built(tmp_path)
    code = (
        "import sys\n"
        "from wikic.cli.main import cli\n"
        f"try:\n    cli(['-C', {str(project.root)!r}, 'build', '-q'])\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "heavy = ('pydantic', 'jinja2', 'rapidfuzz', 'yaml', 'wikic.build.pipeline')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _edit_source(p: Project) -> None:
    with open(p.sources_dir / "rag.md", "a", encoding="utf-8") as fh:
        fh.write("Chunks carry the title of their document.\n")


def _foreign_page(p: Project) -> None:
    (p.wiki_dir / "my-notes.md").write_text("---\ntitle: My notes\ntype: answer\n---\n# My notes\n\nMine.\n")


def _project_template(p: Project) -> None:
    (p.root / "prompts").mkdir()
    shutil.copy(PACKAGE_PROMPTS / "write.user.j2", p.root / "prompts" / "write.user.j2")  # same bytes


def _any_page(p: Project) -> Path:
    return next(x for x in sorted(p.wiki_dir.glob("*.md")) if x.name not in ("index.md", "log.md"))


CHANGES: dict[str, Callable[[Project], None]] = {
    "source edited": _edit_source,
    "source touched": lambda p: _touch(p.sources_dir / "rag.md"),
    "source added": lambda p: (p.sources_dir / "new.md").write_text("# New\n\n## FAISS\n\nOn GPUs.\n"),
    "source deleted": lambda p: (p.sources_dir / "tools.md").unlink(),
    "schema.yaml bytes": lambda p: p.schema_path.write_text(p.schema_path.read_text() + "# a comment\n"),
    "project template": _project_template,
    "page added by hand": _foreign_page,
    "page deleted": lambda p: _any_page(p).unlink(),
    "page touched": lambda p: _touch(_any_page(p)),
    "index.md deleted": lambda p: (p.wiki_dir / "index.md").unlink(),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_change_the_full_check_sees_makes_the_build_look(tmp_path: Path, change: str) -> None:
    project = built(tmp_path)
    assert cli_build(project)["nothing_to_do"]
    CHANGES[change](project)
    after = cli_build(project)
    assert not after["nothing_to_do"]
    if change == "source edited":
        assert after["llm"]["calls"] > 0
    assert cli_build(project)["nothing_to_do"]  # and settles again


def test_a_hand_edit_is_reported_by_every_build_not_skipped(tmp_path: Path) -> None:
    project = built(tmp_path)
    page = _any_page(project)
    page.write_text(page.read_text() + "\nMy own line.\n")
    for _ in range(2):
        report = cli_build(project)
        assert not report["nothing_to_do"] and report["conflicts"] == [f"wiki/{page.name}"]


def test_a_build_by_another_caller_in_between_is_seen(tmp_path: Path) -> None:
    """Sources put back exactly as they were (stats too) after a library build of an edit
    (`wikic watch`, say): the wiki holds the edit's pages, so the next CLI build must not skip."""
    project = built(tmp_path)
    source = project.sources_dir / "rag.md"
    before, st = source.read_bytes(), source.stat()
    _edit_source(project)
    run_build(project)  # e.g. `wikic watch`
    assert "title of their document" in (project.wiki_dir / "index.md").read_text() + "".join(
        p.read_text() for p in project.wiki_dir.glob("*.md")
    )
    source.write_bytes(before)
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    report = cli_build(project)
    assert not report["nothing_to_do"]
    assert "title of their document" not in "".join(p.read_text() for p in project.wiki_dir.glob("*.md"))


def test_force_and_dry_run_do_not_skip(tmp_path: Path) -> None:
    project = built(tmp_path)
    assert not cli_build(project, "--force")["nothing_to_do"]
    dry = cli_build(project, "--dry-run")
    assert dry["dry_run"] and not dry["nothing_to_do"]
    assert cli_build(project)["nothing_to_do"]


def test_lint_errors_are_reported_by_the_skipped_build_too(tmp_path: Path) -> None:
    project = built(tmp_path)
    (project.wiki_dir / "my-notes.md").write_text(
        "---\ntitle: My notes\ntype: answer\n---\n# My notes\n\nSee [[no-such-page]].\n"
    )
    first = CliRunner().invoke(cli, ["-C", str(project.root), "build", "--strict"], catch_exceptions=False)
    second = CliRunner().invoke(cli, ["-C", str(project.root), "build", "--strict"], catch_exceptions=False)
    assert first.exit_code == second.exit_code == 1
    assert "no work to do" in second.stderr
    lines = [[ln for ln in r.stderr.splitlines() if ln.startswith("lint:")] for r in (first, second)]
    assert lines[0] == lines[1] and "error" in lines[0][0]


def test_a_changed_model_file_makes_the_build_look(tmp_path: Path) -> None:
    """The llama backend's model file is part of the mark (no source: the model is never loaded)."""
    project = make_project(tmp_path, notes={})
    (tmp_path / "m.gguf").write_bytes(b"GGUF" + bytes(100))
    project.schema_path.write_text("title: T\nmodel:\n  backend: llama\n  name: m.gguf\n", encoding="utf-8")
    assert not cli_build(project)["nothing_to_do"]
    assert cli_build(project)["nothing_to_do"]
    (tmp_path / "m.gguf").write_bytes(b"GGUF" + bytes(200))
    assert not cli_build(project)["nothing_to_do"]
    assert cli_build(project)["nothing_to_do"]


def test_the_no_op_answer_prints_as_its_report(tmp_path: Path) -> None:
    """The CLI prints a no-op from `Fresh` (no Report class loaded): the same JSON and summary."""
    from wikic.build.uptodate import Fresh

    fresh = Fresh(3, 7, 12, {"error": 1, "warning": 2}, "lint: 1 error, 2 warnings", started=0.0)
    report = fresh.report()
    assert fresh.to_json() == report.to_json()
    assert list(fresh.to_json()) == list(report.to_json())  # the same order of keys on screen
    assert fresh.summary() == report.summary()
    assert (fresh.ok, fresh.dry_run, fresh.waiting) == (report.ok, report.dry_run, report.waiting)
    for notes in ("explain", "would_run", "warnings", "conflicts", "errors"):
        assert list(getattr(fresh, notes)) == getattr(report, notes) == []


def test_folders_and_links_below_sources_are_walked(tmp_path: Path) -> None:
    """The walk lists folders by descriptor: a file in a folder, and where a link points (a
    new target of the same size and time), are seen as before."""
    project = make_project(tmp_path, notes={"deep/er/rag.md": NOTES_RAG, "tools.md": NOTES_TOOLS})
    elsewhere = project.sources_dir / "targets"  # a link out of sources/ is refused
    elsewhere.mkdir()
    for name in ("a.md", "b.md"):
        (elsewhere / name).write_text(f"# Linked {name[0]}\n\nFAISS is fast.\n", encoding="utf-8")
        os.utime(elsewhere / name, ns=(1_000_000_000, 1_000_000_000))
    (project.sources_dir / "linked.md").symlink_to(elsewhere / "a.md")
    assert not cli_build(project)["nothing_to_do"]
    assert cli_build(project)["nothing_to_do"]
    (project.sources_dir / "linked.md").unlink()
    (project.sources_dir / "linked.md").symlink_to(elsewhere / "b.md")
    assert not cli_build(project)["nothing_to_do"]
    assert cli_build(project)["nothing_to_do"]
    _touch(project.sources_dir / "deep" / "er" / "rag.md")
    assert not cli_build(project)["nothing_to_do"]
    assert cli_build(project)["nothing_to_do"]
    (project.sources_dir / "deep" / "new").mkdir()
    assert not cli_build(project)["nothing_to_do"]  # an empty folder is part of the inputs


def _children() -> set[int]:
    """This process's children (Linux; none elsewhere): other tests' servers may be among them."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == me:
            found.add(int(entry.parent.name))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="wiki/ is walked in a child on Linux only")
def test_wiki_walked_in_a_child_gives_the_walks_digest(tmp_path: Path) -> None:
    from wikic import snapshot
    from wikic.build.uptodate import WikiDigest

    project = built(tmp_path)
    before = _children()
    aside = WikiDigest(project)
    assert aside.pid is not None  # forked: this test process runs no other thread
    assert aside.result() == snapshot.wiki(project).digest()
    assert _children() <= before
    WikiDigest(project).cancel()  # not waited for: stopped and reaped
    assert _children() <= before
    (project.wiki_dir / "sub").mkdir()
    (project.wiki_dir / "sub" / "gone.md").symlink_to(tmp_path / "nowhere.md")
    assert WikiDigest(project).result() is None  # an entry that cannot be stat'ed: not known


def test_a_build_with_other_threads_walks_wiki_itself(tmp_path: Path) -> None:
    import threading

    from wikic.build.uptodate import Check, WikiDigest

    project = built(tmp_path)
    before = _children()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert WikiDigest(project).pid is None  # never a fork beside another thread
        assert Check(project).fresh() is not None
        _touch(_any_page(project))
        assert Check(project).fresh() is None
    finally:
        stop.set()
        other.join()
    assert _children() <= before


def test_a_source_change_stops_the_wiki_walk_early(tmp_path: Path) -> None:
    from wikic.build.uptodate import Check

    project = built(tmp_path)
    before = _children()
    _edit_source(project)
    check = Check(project)
    assert check.fresh() is None
    check.close()  # the build never asked for wiki/ as walked (it failed before it needed it)
    assert _children() <= before
    check = Check(project)
    assert check.fresh() is None
    assert check.walked() is not None and check.walked() is check.found  # read back once
    assert _children() <= before


@pytest.mark.skipif(sys.platform != "linux", reason="wiki/ is walked in a child on Linux only")
def test_the_childs_walk_of_wiki_is_the_walk_the_build_would_take(tmp_path: Path) -> None:
    """A check that says no hands the build wiki/ as its child walked it: the same lines,
    stats, completeness and digest as a walk here (a name with a tab in it too); a walk whose
    lines cannot be read back without doubt (a link's) is not handed over; no child is left."""
    from wikic import snapshot
    from wikic.build.uptodate import Check, WikiDigest

    def same(tree: snapshot.Tree | None) -> None:
        walked = snapshot.wiki(project)
        assert tree is not None and tree.stats
        # the same lines (the child sorts them: a walk's order is the file system's, its digest sorts)
        assert (sorted(tree.lines), tree.stats, tree.complete) == (
            sorted(walked.lines),
            walked.stats,
            walked.complete,
        )
        assert tree.digest() == walked.digest() and _children() <= before

    project = built(tmp_path)
    (project.wiki_dir / "sub").mkdir()
    (project.wiki_dir / "sub" / "hand.md").write_text("# Hand\n")
    (project.wiki_dir / "sub" / "a\tb.md").write_text("# Tab\n")
    before = _children()
    _edit_source(project)
    check = Check(project)
    assert check.fresh() is None
    same(check.walked())
    (project.wiki_dir / "sub" / "gone.md").symlink_to(tmp_path / "nowhere.md")
    aside = WikiDigest(project)
    assert aside.result(keep=True) is None  # incomplete: an entry that cannot be stat'ed
    incomplete = aside.tree()
    assert incomplete is not None and not incomplete.complete
    same(incomplete)
    (project.wiki_dir / "sub" / "link.md").symlink_to(project.wiki_dir / "sub" / "hand.md")
    aside = WikiDigest(project)
    aside.result(keep=True)
    assert aside.tree() is None and _children() <= before  # the build walks wiki/ itself


def test_stats_read_back_from_a_walks_lines_are_the_walks() -> None:
    from wikic.snapshot import stats_of

    lines = ["wiki/", "wiki/a.md\t3\t7", "wiki/x\ty\t1\t2.md\t4\t9", "wiki/d/", "wiki/u\tunreadable"]
    assert stats_of(lines) == {"wiki/a.md": (3, 7), "wiki/x\ty\t1\t2.md": (4, 9)}
    assert stats_of(["wiki/l.md\t3\t7\t-> /elsewhere/l.md"]) is None
    assert stats_of(["wiki/p\t0\t7\tkind 10000"]) is None
