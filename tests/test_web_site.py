"""`wikic site OUT`: a static copy of the viewer, relative links, incremental rewrites."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from projects import run_build
from webkit import built_project

from wikic.cli.main import cli
from wikic.project import Project
from wikic.web.site import MANIFEST, export


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return built_project(tmp_path / "p")


def test_export_writes_every_view(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "site"
    report = export(project, out)
    for rel in ("index.html", "search.html", "graph.html", "health.html", "data/search.js", "assets/app.js"):
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
    manifest["../victim.txt"] = {"key": "x", "hash": "y"}
    (out / MANIFEST).write_text(json.dumps(manifest))
    export(project, out)
    assert victim.read_text() == "keep"


def test_cli_site_json(project: Project, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "site", str(tmp_path / "s"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["pages"] > 0 and "index.html" in report["written"]
