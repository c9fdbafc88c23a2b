"""`wikic graph`: the dependency graph as JSON, dot and GraphML; and the SVG layout."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from webkit import built_project

from wikic.cli.main import cli
from wikic.project import Project
from wikic.web.graph import Graph, to_json_lines
from wikic.web.layout import force_layout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return built_project(tmp_path_factory.mktemp("graph"))


def graph(project: Project, fmt: str) -> str:
    result = CliRunner().invoke(cli, ["-C", str(project.root), "graph", "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_json_has_sources_actions_pages_and_edges(project: Project) -> None:
    data = json.loads(graph(project, "json"))
    kinds = {n["kind"] for n in data["nodes"]}
    assert kinds == {"source", "action", "page"}
    ids = {n["id"] for n in data["nodes"]}
    pages = {f"wiki/{p.name}" for p in project.wiki_dir.glob("*.md")} - {"wiki/index.md", "wiki/log.md"}
    assert pages <= ids
    assert all(e["from"] in ids and e["to"] in ids for e in data["edges"])
    edges = {(e["from"], e["to"], e["kind"]) for e in data["edges"]}
    assert ("sources/tools.md", "digest:sources/tools.md", "input") in edges
    assert ("digest:sources/tools.md", "wiki/faiss.md", "output") in edges
    assert ("wiki/faiss.md", "wiki/hnsw.md", "link") in edges


def test_json_is_a_node_or_an_edge_per_line(project: Project) -> None:
    """Readable by a person and by line tools (grep, wc -l), as the indented JSON it replaced."""
    text = graph(project, "json")
    data = json.loads(text)
    lines = text.splitlines()
    items = [json.loads(line.strip().rstrip(",")) for line in lines if line.startswith("    ")]
    assert items == data["nodes"] + data["edges"] and items
    assert len(lines) == len(items) + 6  # the braces, and each list's opening and closing line
    assert json.loads(to_json_lines(Graph())) == {"nodes": [], "edges": []}


def test_dot_and_graphml_carry_the_same_graph(project: Project) -> None:
    data = json.loads(graph(project, "json"))
    dot = graph(project, "dot")
    assert dot.startswith("digraph wikic {") and dot.count(" -> ") == len(data["edges"])
    root = ET.fromstring(graph(project, "graphml"))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == len(data["nodes"])
    assert len(root.findall(".//g:edge", ns)) == len(data["edges"])


def test_without_a_build_state_sources_feed_pages_directly(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    for path in project.state_dir.glob("state.db*"):
        path.unlink()
    data = json.loads(graph(project, "json"))
    assert not [n for n in data["nodes"] if n["kind"] == "action"]
    assert {"from": "sources/tools.md", "to": "wiki/faiss.md", "kind": "input"} in data["edges"]
    assert not project.state_path.exists()  # graph reads the state, never creates it


def test_layout_is_deterministic_and_inside_the_picture() -> None:
    edges = [(i, i + 1) for i in range(29)]
    first, second = force_layout(30, edges), force_layout(30, edges)
    assert first == second
    assert all(0 <= x <= 1000 and 0 <= y <= 1000 for x, y in first)


def test_a_big_wiki_draws_its_most_linked_pages_only(tmp_path: Path) -> None:
    project = built_project(tmp_path / "p")
    from wikic.web.layout import wiki_svg
    from wikic.web.model import Model

    svg, note = wiki_svg(Model.load(project, lint=False), "graph.html", limit=3)
    assert svg.count('<circle class="page') == 3
    assert "The 3 most linked of" in note
