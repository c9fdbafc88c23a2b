"""`wikic site OUT`: a static copy of the viewer, relative links, incremental rewrites."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from html import unescape
from pathlib import Path

import pytest
from click.testing import CliRunner
from projects import Counting, run_build, subprocess_env
from webkit import built_project

import wikic
from wikic.build.run import BuildOptions, build
from wikic.cli.main import cli
from wikic.lint.runner import lint
from wikic.lock import ProjectLock
from wikic.project import Project
from wikic.state import Meta, State
from wikic.web.site import MANIFEST, export


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return built_project(tmp_path / "p")


def test_export_writes_every_view(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    report = export(project, out)
    for rel in (
        "index.html",
        "search.html",
        "graph.html",
        "health.html",
        "data/search-00.js",
        "assets/app.js",
    ):
        assert (out / rel).is_file(), rel
    pages = {p.stem for p in project.wiki_dir.glob("*.md")} - {"index", "log"}
    assert {p.stem for p in (out / "p").glob("*.html")} == pages
    assert (out / "s" / "tools.md.html").is_file()
    assert report.pages == len(pages) and (out / MANIFEST).is_file()


def test_links_are_relative_and_resolve_inside_the_site(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    for html in out.rglob("*.html"):
        for target in re.findall(r'(?:href|src)="([^"#]*)[^"]*"', html.read_text()):
            if not target or target.startswith(("http:", "https:", "mailto:")):
                continue
            assert not target.startswith("/"), f"{html}: {target}"
            resolved = (html.parent / target.split("?")[0]).resolve()
            assert resolved.is_relative_to(out.resolve()) and resolved.exists(), f"{html}: {target}"


def test_a_second_export_writes_nothing(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    again = export(project, out)
    assert again.written == [] and again.removed == [] and again.rendered == 0


def test_after_an_edit_only_changed_pages_are_rewritten(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    tools = project.sources_dir / "tools.md"
    tools.write_text(tools.read_text().replace("written by Meta", "written by Meta in 2017"))
    run_build(project)
    report = export(project, out)
    assert "p/faiss.html" in report.written and "s/tools.md.html" in report.written
    assert "p/hnsw.html" not in report.written  # a page the edit did not reach
    assert len(report.written) < report.pages
    assert "2017" in (out / "p" / "faiss.html").read_text()


def test_a_removed_page_is_removed_from_the_site(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    (project.sources_dir / "rag.md").unlink()
    run_build(project)
    report = export(project, out)
    assert "p/retrieval-augmented-generation.html" in report.removed
    assert not (out / "p" / "retrieval-augmented-generation.html").exists()
    assert not (out / "s" / "rag.md.html").exists()


def test_refuses_a_folder_that_is_not_a_site(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", str(out)])
    assert result.exit_code == 2 and "not a site wikic wrote" in result.output
    assert (out / "thesis.tex").read_text() == "precious"


@pytest.mark.parametrize("inside", ["wiki/site", "sources/site", ".wikic/site"])
def test_refuses_to_write_into_the_project_folders(project: Project, inside: str) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", str(project.root / inside)])
    assert result.exit_code == 2 and "outside it" in result.output


def test_a_hand_edited_manifest_cannot_delete_outside_the_site(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    manifest = json.loads((out / MANIFEST).read_text())
    manifest["files"]["../victim.txt"] = {"key": "x", "hash": "y"}
    (out / MANIFEST).write_text(json.dumps(manifest))
    export(project, out)
    assert victim.read_text() == "keep"


def test_a_new_wikic_renders_every_page_again(project: Project, tmp_path: Path) -> None:
    """Another version of the viewer's Python code (not only its templates) invalidates an
    export: run from a copy of the package whose renderer differs by a comment."""
    out = tmp_path / "site"
    export(project, out, lint=False)
    package = Path(wikic.__file__).parent
    copy = tmp_path / "pkg" / "wikic"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "web" / "render.py").open("a") as f:
        f.write("\n# a new wikic\n")
    env = subprocess_env(PYTHONPATH=os.pathsep.join([str(copy.parent), os.environ.get("PYTHONPATH", "")]))
    command = [
        sys.executable,
        "-m",
        "wikic",
        "-C",
        str(project.root),
        "site",
        str(out),
        "--no-lint",
        "--json",
    ]

    def rendered() -> int:
        done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return int(json.loads(done.stdout)["rendered"])

    pages = len(list(project.wiki_dir.glob("*.md"))) - 2  # index.md and log.md are no pages
    assert rendered() >= pages  # every page again (the same bytes: none rewritten)
    assert rendered() == 0  # and then, with that code, nothing


def test_cli_site_json(project: Project, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", str(tmp_path / "s"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pages"] > 0 and "index.html" in report["written"]


# --- incremental export equals a fresh one, byte for byte, after each kind of change -----------

HOUR = 3600 * 10**9


def _age(path: Path, step: int) -> None:
    """An mtime well before the export (as a page edited long ago): the export trusts its stat."""
    past = time.time_ns() - 2 * HOUR + step * 10**9
    os.utime(path, ns=(past, past))


def _edit(project: Project, name: str, text: str | None, step: int) -> None:
    path = project.wiki_dir / name
    if text is None:
        path.unlink()
        return
    path.write_text(text)
    _age(path, step)


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}


def _manifest(out: Path) -> dict[str, object]:
    data = json.loads((out / MANIFEST).read_text())
    data.pop("started_ns")
    return data


NEW_PAGE = "---\ntitle: Graph search\ntype: concept\n---\n\n# Graph search\n\nSee [[HNSW]] and [[FAISS]].\n"


def _changes(project: Project) -> list[tuple[str, str, str | None]]:
    faiss = (project.wiki_dir / "faiss.md").read_text()
    chunking = (project.wiki_dir / "chunking.md").read_text()
    return [
        ("text edited", "faiss.md", faiss.replace("similarity search", "fast similarity search")),
        ("link added to a page", "chunking.md", chunking + "\nSee [[hnsw]].\n"),
        ("new page linking to existing ones", "graph-search.md", NEW_PAGE),
        ("title renamed", "faiss.md", faiss.replace("title: FAISS", "title: Faiss library")),
        ("aliases added", "hnsw.md", None),  # filled below: needs the page's text
        ("page linking to another deleted", "chunking.md", None),
        ("page deleted", "hnsw.md", None),
        ("index edited", "index.md", "# Home\n\nStart at [[graph-search]] or [[Faiss library]].\n"),
    ]


def _exported(project: Project, tmp_path: Path, lint: bool = True) -> Path:
    """The pages' stats made old (no racy stat), then a first export: its folder."""
    for path in project.wiki_dir.iterdir():
        _age(path, 0)
    out = tmp_path / "site"
    export(project, out, lint=lint)
    return out


def test_incremental_export_equals_a_fresh_one(project: Project, tmp_path: Path) -> None:
    out = _exported(project, tmp_path, lint=False)
    hnsw = (project.wiki_dir / "hnsw.md").read_text()
    for step, (what, name, text) in enumerate(_changes(project), 1):
        if what == "aliases added":
            text = hnsw.replace("type: concept", "type: concept\naliases: [Hierarchical graph]")
        _edit(project, name, text, step)
        report = export(project, out, lint=False)
        _same_as_fresh(project, out, tmp_path / f"fresh-{step}", what)
        assert report.rendered < 12, (what, report.rendered)  # not every page again
    (project.sources_dir / "vectors.md").unlink()  # cited by pages that now cite nothing served
    report = export(project, out, lint=False)
    _same_as_fresh(project, out, tmp_path / "fresh-source", "source deleted")
    assert "p/faiss.html" in report.written


def _same_as_fresh(project: Project, out: Path, fresh: Path, what: str, lint: bool = False) -> None:
    export(project, fresh, lint=lint)
    ours, theirs = _files(out), _files(fresh)
    assert ours.keys() == theirs.keys(), what
    assert [rel for rel, data in theirs.items() if rel != MANIFEST and ours[rel] != data] == [], what
    assert _manifest(out) == _manifest(fresh), what


def test_backlinks_follow_a_new_page_and_a_retitled_one(project: Project, tmp_path: Path) -> None:
    out = _exported(project, tmp_path, lint=False)
    _edit(project, "graph-search.md", NEW_PAGE, 1)
    report = export(project, out, lint=False)
    assert {"p/graph-search.html", "p/hnsw.html", "p/faiss.html"} <= set(report.written)
    assert "Graph search" in (out / "p" / "hnsw.html").read_text()
    new = NEW_PAGE.replace("title: Graph search", "title: Graph walks")
    _edit(project, "graph-search.md", new, 2)
    report = export(project, out, lint=False)
    assert "Graph walks" in (out / "p" / "hnsw.html").read_text()
    assert "p/chunking.html" not in report.written


def test_a_second_export_reads_no_page(project: Project, tmp_path: Path) -> None:
    out = _exported(project, tmp_path, lint=False)
    (project.wiki_dir / "faiss.md").chmod(0)  # a page read again would be unreadable now
    try:
        again = export(project, out, lint=False)
    finally:
        (project.wiki_dir / "faiss.md").chmod(0o644)
    assert again.written == [] and again.rendered == 0


def test_lost_search_entries_are_read_again_from_the_pages(project: Project, tmp_path: Path) -> None:
    out = _exported(project, tmp_path, lint=False)
    for kept in (out / ".wikic-site").glob("search-*.json"):
        kept.unlink()
    for name in ("faiss.md", "hnsw.md", "chunking.md"):  # some piece holds one with a stub beside it
        page = project.wiki_dir / name
        _edit(project, name, page.read_text().replace("\n\n", "\n\nEdited.\n\n", 1), 1)
    export(project, out, lint=False)
    _same_as_fresh(project, out, tmp_path / "fresh", "entries lost")


# --- lint's findings: the build's, kept per page, as exact as a full `wikic lint` --------------
def _health(out: Path) -> list[tuple[str, int, str, str, str]]:
    """The findings the health page lists: (path, line, level, rule, message)."""
    text = (out / "health.html").read_text()
    found = []
    for section in re.finditer(r'<section class="findings">\s*<h2>(.*?)</h2>\s*<ul>(.*?)</ul>', text, re.S):
        path = unescape(re.sub(r"<[^>]+>", "", section[1]))
        for item in re.finditer(r'<li class="\w+">line (\d+): (\w+) ([\w-]+): (.*?)</li>', section[2], re.S):
            found.append((path, int(item[1]), item[2], item[3], unescape(item[4])))
    return sorted(found)


def _kept_how(project: Project) -> str | None:
    """How the lint counts kept for the next build's summary were made (lint/totals.py)."""
    with State.open(project.state_path) as state:
        return json.loads(state.get_meta(Meta.LINT_TOTALS) or "{}").get("how")


def _full_lint(project: Project) -> list[tuple[str, int, str, str, str]]:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "lint", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    found = json.loads(result.stdout)
    return sorted((f["path"], f["line"], f["level"], f["rule"], f["message"]) for f in found)


def _lint_state(project: Project) -> list[object]:
    db = sqlite3.connect(project.state_path)
    try:
        rows = db.execute("SELECT * FROM lint_pages ORDER BY rel").fetchall()
        meta = db.execute("SELECT * FROM meta WHERE k = 'lint_across'").fetchall()
    finally:
        db.close()
    return [rows, meta]


def test_with_lint_an_incremental_export_equals_a_fresh_one_and_a_full_lint(
    project: Project, tmp_path: Path
) -> None:
    out = _exported(project, tmp_path)
    assert _health(out) == _full_lint(project)
    hnsw = (project.wiki_dir / "hnsw.md").read_text()
    for step, (what, name, text) in enumerate(_changes(project), 1):
        if what == "aliases added":
            text = hnsw.replace("type: concept", "type: concept\naliases: [Hierarchical graph]")
        _edit(project, name, text, step)
        report = export(project, out)
        assert _health(out) == _full_lint(project), what
        _same_as_fresh(project, out, tmp_path / f"fresh-{step}", what, lint=True)
        assert report.rendered < 14, (what, report.rendered)  # not every page again


def test_a_hand_edit_shows_its_finding_on_the_page_and_only_that_page_is_rendered(
    project: Project, tmp_path: Path
) -> None:
    out = _exported(project, tmp_path)
    faiss = project.wiki_dir / "faiss.md"
    _edit(project, "faiss.md", faiss.read_text().replace("similarity search", "fast similarity search"), 1)
    report = export(project, out)
    assert "hand-edit" in (out / "p" / "faiss.html").read_text()
    assert {"p/faiss.html", "health.html"} <= set(report.written)
    assert not [rel for rel in report.written if rel.startswith("p/") and rel != "p/faiss.html"]
    assert _health(out) == _full_lint(project)


def test_with_lint_after_a_source_edit_with_and_without_a_build(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export(project, out)
    rag = project.sources_dir / "rag.md"
    rag.write_text(rag.read_text().replace("Documents are split into chunks", "Nothing at all"))
    page = out / "p" / "retrieval-augmented-generation.html"
    export(project, out)  # not built yet: its pages are stale, their citations no longer hold
    assert _kept_how(project) == "counted"  # its lint's counts kept, as `wikic lint` keeps them
    assert any(rule == "stale-page" for _, _, _, rule, _ in _health(out))
    assert "stale-page" in page.read_text()  # an unchanged page whose findings changed
    assert _health(out) == _full_lint(project)
    _same_as_fresh(project, out, tmp_path / "fresh-1", "source edited", lint=True)
    # the counts the export's lint kept: the build's closing lint summary patches them
    report = build(project, BuildOptions(), backend_factory=lambda schema: Counting())
    assert _kept_how(project) == "patched"
    assert report.lint == lint(project).counts()
    export(project, out)
    assert not any(rule == "stale-page" for _, _, _, rule, _ in _health(out))
    assert "stale-page" not in page.read_text()
    assert _health(out) == _full_lint(project)
    _same_as_fresh(project, out, tmp_path / "fresh-2", "source built", lint=True)


def test_with_lint_and_no_state_the_whole_wiki_is_linted_and_none_made(
    project: Project, tmp_path: Path
) -> None:
    shutil.rmtree(project.state_dir)
    _edit(project, "graph-search.md", NEW_PAGE + "\nAnd [[Nothing here]].\n", 1)
    out = tmp_path / "site"
    export(project, out)
    assert any(rule == "broken-link" for _, _, _, rule, _ in _health(out))
    assert _health(out) == _full_lint(project)
    assert not project.state_dir.exists()


def test_a_build_holding_the_lock_neither_blocks_the_export_nor_sees_its_cache_written(
    project: Project, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    export(project, out)
    faiss = project.wiki_dir / "faiss.md"
    faiss.write_text(faiss.read_text().replace("similarity search", "fast similarity search"))
    before = _lint_state(project)
    with ProjectLock(project.lock_path, wait=False):  # as a running build holds it
        export(project, out)
        assert _lint_state(project) == before  # read, not stored: the lock's holder writes the state
    assert _health(out) == _full_lint(project)
    assert any(path == "wiki/faiss.md" and rule == "hand-edit" for path, _, _, rule, _ in _health(out))
    export(project, out)
    assert _lint_state(project) != before  # with the lock free, what was checked is kept
