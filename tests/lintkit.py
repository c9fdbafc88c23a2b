"""Helpers for the lint tests: crafted wikis written by hand, built wikis, and
running `wikic lint` as a user does (no pytest fixtures here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from projects import make_project, run_build

from wikic.cli.main import cli
from wikic.config import load_schema
from wikic.lint.fix import index_text
from wikic.project import Project, init_project
from wikic.wiki.frontmatter import render_front_matter

SCHEMA = """\
title: Lint test
model:
  backend: scripted
lint:
  rules: {rules}
  missing_page_threshold: {threshold}
"""

# Line numbers matter: pages cite them.
SOURCE_A = """\
# Notes on vector search

FAISS is a library for similarity search written by Meta.
HNSW is a graph index used for approximate nearest neighbour search.
Chunks overlap by a few sentences so that no fact is cut in two.
"""


def cite(line: int, end: int | None = None, source: str = "a.md") -> str:
    lines = f"{line}" if end is None else f"{line}-{end}"
    anchor = f"L{line}" if end is None else f"L{line}-L{end}"
    return f"[{source}:{lines}](../sources/{source}#{anchor})"


def page(
    title: str,
    body: str,
    type: str = "concept",
    sources: list[str] | None = None,
    aliases: list[str] | None = None,
) -> str:
    meta: dict[str, Any] = {"title": title, "type": type}
    if aliases:
        meta["aliases"] = aliases
    meta["sources"] = ["sources/a.md"] if sources is None else sources
    return render_front_matter(meta) + f"\n# {title}\n\n{body.strip()}\n"


SOURCES_SECTION = "\n\n## Sources\n\n- [[notes-on-vector-search|Notes on vector search]]: "


def base_pages() -> dict[str, str]:
    """A small, healthy wiki: two topic pages and the source's page, all linked."""
    return {
        "faiss.md": page(
            "FAISS",
            f"FAISS is a library for similarity search written by Meta, "
            f"often used with [[hnsw|HNSW]]. {cite(3)}{SOURCES_SECTION}{cite(3)}",
        ),
        "hnsw.md": page(
            "HNSW",
            f"HNSW is a graph index for approximate nearest neighbour search, "
            f"as in [[faiss|FAISS]]. {cite(4)}{SOURCES_SECTION}{cite(4)}",
            aliases=["Hierarchical navigable small world"],
        ),
        "notes-on-vector-search.md": page(
            "Notes on vector search",
            f"FAISS is a library for similarity search written by Meta. {cite(1, 5)}\n\n## Topics\n\n"
            f"- [[faiss|FAISS]]: {cite(3)}\n- [[hnsw|HNSW]]: {cite(4)}",
            type="source",
        ),
    }


def crafted(
    root: Path,
    pages: dict[str, str] | None = None,
    sources: dict[str, str] | None = None,
    rules: dict[str, str] | None = None,
    threshold: int = 3,
    index: bool = True,
) -> Project:
    """A project whose wiki/ is written here by hand (no build, so no build state)."""
    project = init_project(root)
    project.schema_path.write_text(
        SCHEMA.format(rules=json.dumps(rules or {}), threshold=threshold), encoding="utf-8"
    )
    for name, text in ({"a.md": SOURCE_A} if sources is None else sources).items():
        (project.sources_dir / name).write_text(text, encoding="utf-8")
    for name, text in (base_pages() if pages is None else pages).items():
        (project.wiki_dir / name).write_text(text, encoding="utf-8")
    if index:
        write_index(project)
    return project


def write_index(project: Project) -> None:
    text = index_text(project, load_schema(project.schema_path))
    (project.wiki_dir / "index.md").write_text(text, encoding="utf-8")


def built(root: Path, notes: dict[str, str] | None = None) -> Project:
    """A project built by `wikic build` with the scripted backend (tests/projects.py's notes)."""
    project = make_project(root, notes)
    report, _ = run_build(project)
    assert report.ok, report.errors
    return project


def invoke(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project.root), *args], catch_exceptions=False)


def lint_json(project: Project, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = invoke(project, "lint", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def line_of(project: Project, rel: str, needle: str) -> int:
    """The 1-based line of the first line of `rel` containing `needle`."""
    lines = (project.root / rel).read_text(encoding="utf-8").split("\n")
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def fired(project: Project, rule: str, *args: str) -> list[dict[str, Any]]:
    """The findings of one rule (run alone, as `--rule RULE`)."""
    _, findings = lint_json(project, "--rule", rule, *args)
    assert {f["rule"] for f in findings} <= {rule}
    return findings
