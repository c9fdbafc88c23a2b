"""Real builds: the embedded model in-process, and the same GGUF behind the real
llama.cpp server through the openai backend. Slow; marked `model` / `server`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wikic.project import init_project
from wikic.wiki.page import parse_citations, parse_links, split_page

NOTES = {
    "ninja.md": "# Ninja\n\nNinja is a small build system written by Evan Martin.\n\n## Restat\n\n"
    "A restat rule lets Ninja skip work when an output did not change.\n",
    "make.md": "# Make\n\nMake rebuilds a target when a prerequisite is newer.\n\n## Timestamps\n\n"
    "Make compares file modification times.\n",
}


def make(root: Path, model_yaml: str) -> Path:
    init_project(root)
    (root / "schema.yaml").write_text(f"title: Build tools\nmodel:\n{model_yaml}  max_tokens: 256\n")
    for name, text in NOTES.items():
        (root / "sources" / name).write_text(text)
    return root


def build(root: Path) -> tuple[int, dict[str, object], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "wikic", "-C", str(root), "build", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def check_wiki(root: Path) -> None:
    """What must hold whatever the model wrote: a valid, self-consistent wiki."""
    wiki = root / "wiki"
    stems = {p.stem for p in wiki.glob("*.md")}
    index = (wiki / "index.md").read_text()
    source_pages = 0
    for page in wiki.glob("*.md"):
        text = page.read_text()
        for link in parse_links(text):
            assert link.target in stems, (page.name, link.target)
        if page.name in ("index.md", "log.md"):
            continue
        meta = split_page(text).meta
        assert meta["title"] and meta["type"] and meta["sources"], page.name
        source_pages += meta["type"] == "source"
        assert f"[[{page.stem}|" in index
        for cite, _ in parse_citations(text):
            lines = (root / cite.source).read_text().splitlines()
            assert 1 <= cite.start <= cite.end <= len(lines), (page.name, cite)
    assert source_pages == len(NOTES)


def run_twice(root: Path) -> dict[str, object]:
    code, report, err = build(root)
    assert code in (0, 1), err
    assert not re.search(r"Traceback", err)
    assert report["llm"]["calls"] >= len(NOTES)  # type: ignore[index]
    check_wiki(root)
    again_code, again, _ = build(root)
    if code == 0:
        assert again_code == 0 and again["nothing_to_do"] and again["llm"]["calls"] == 0  # type: ignore[index]
        assert again["written"] == []
    return report


@pytest.mark.model
def test_embedded_model_builds_a_valid_wiki(tmp_path: Path) -> None:
    report = run_twice(make(tmp_path, "  backend: llama\n  name: smollm2\n  context: 4096\n"))
    assert report["llm"]["prompt_tokens"] > 0  # type: ignore[index]


@pytest.mark.server
def test_openai_backend_against_the_llama_cpp_server(tmp_path: Path, llama_server: str) -> None:
    model = f"  backend: openai\n  name: smollm2\n  base_url: {llama_server}\n  context: 4096\n"
    report = run_twice(make(tmp_path, model))
    assert report["llm"]["prompt_tokens"] > 0  # type: ignore[index]
