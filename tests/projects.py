"""Helpers that make small wikic projects for tests (no pytest fixtures here)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from wikic.backends.scripted import ScriptedBackend
from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress, Report
from wikic.config import ModelConfig
from wikic.project import Project, init_project

SCRIPTED_SCHEMA = """\
title: Test wiki
scope: notes for tests
model:
  backend: scripted
  name: {name}
  latency: {latency}
rules: {rules}
"""

NOTES = {
    "vectors.md": """# Vector databases

A **vector database** stores embeddings and answers nearest-neighbour queries.

## HNSW

HNSW is a graph index used by **FAISS** and most vector stores.
It trades memory for fast approximate search.
""",
    "rag.md": """# Retrieval-augmented generation

RAG retrieves chunks from a **vector database** before the model answers.

## Chunking

Documents are split into chunks of a few hundred tokens.
""",
    "tools.md": """# Tools we use

## FAISS

FAISS is a library for similarity search written by Meta.

## Chunking

Chunks overlap by a few sentences so that no fact is cut in two.
""",
}


# Pages a person keeps in wiki/ beside the build's: findings that depend on other pages
# (links, missing pages) and on the sources' lines (a citation), so that an edit elsewhere
# changes them while these files stay as they are.
HAND_PAGES = {
    "my-notes.md": """---
title: My notes
type: concept
---

# My notes

We should try [[Product quantization]] and read about [[HNSW]] and [[Graph Indexes]].
The **Quantum foam** idea came up twice. Chunks are split [rag.md:7](../sources/rag.md#L7).
""",
    "more-notes.md": """---
title: More notes
type: concept
---

# More notes

Again **Quantum foam**, and [[Vector databases]] and [[IVF index]].
""",
    "third-notes.md": """---
title: Third notes
type: concept
---

# Third notes

Yet again **Quantum foam**; see [[My notes]] and [[More notes]].
""",
}


def make_project(
    root: Path,
    notes: dict[str, str] | None = None,
    name: str = "v1",
    latency: float = 0.0,
    rules: list[str] | None = None,
) -> Project:
    project = init_project(root)
    write_schema(project, name=name, latency=latency, rules=rules)
    for fname, text in (NOTES if notes is None else notes).items():
        path = project.sources_dir / fname
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return project


def write_schema(
    project: Project, name: str = "v1", latency: float = 0.0, rules: list[str] | None = None
) -> None:
    text = SCRIPTED_SCHEMA.format(name=name, latency=latency, rules=json.dumps(rules or []))
    project.schema_path.write_text(text, encoding="utf-8")


class Counting:
    """A scripted backend that records every request it is given."""

    def __init__(self, name: str = "v1") -> None:
        self.inner = ScriptedBackend(ModelConfig(backend="scripted", name=name))
        self.model_id = self.inner.model_id
        self.requests: list[str] = []

    def complete(self, request):  # type: ignore[no-untyped-def]
        user = request.messages[1]["content"]
        self.requests.append("digest" if "<document" in user else "write")
        return self.inner.complete(request)

    @property
    def digests(self) -> int:
        return self.requests.count("digest")

    @property
    def writes(self) -> int:
        return self.requests.count("write")


def run_build(project: Project, backend: Counting | None = None, **opts: object) -> tuple[Report, Counting]:
    backend = backend or Counting()
    report = build(
        project,
        BuildOptions(**opts),
        Progress(quiet=True),  # type: ignore[arg-type]
        backend_factory=lambda schema: backend,
    )
    return report, backend


def wiki_files(project: Project) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(project.wiki_dir.glob("*.md"))}


def replace_in_source(project: Project, name: str, old: str, new: str) -> None:
    path = project.sources_dir / name
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def forced_equal(project: Project, folder: Path) -> bool:
    """Whether the wiki an edit left is the one a forced build of a copy (in `folder`) makes."""
    from wikic.build.run import build as run

    forced = Project(shutil.copytree(project.root, folder / "forced"))
    assert run(forced, BuildOptions(force=True)).ok
    return wiki_files(project) == wiki_files(forced)


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env
