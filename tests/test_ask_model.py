"""`wikic ask` with the real embedded model and the real llama.cpp server: the
prefix state saved by one process and restored by the next, corrupt or
mismatched entries rebuilt, the size bound, and --save through build and lint.

The wikis are built with the scripted backend (fast); only `ask` uses the model.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from projects import make_project, run_build

from wikic.ask.runner import AskOptions, ask
from wikic.backends.prefix_cache import PrefixCache
from wikic.project import Project
from wikic.wiki.page import split_page

pytestmark = pytest.mark.model

LLAMA_SCHEMA = """\
title: Test wiki
scope: notes for tests
model:
  backend: llama
  name: smollm2
  context: 2048
ask:
  answer_tokens: 24
"""


def ask_json(project: Project, question: str, *args: str) -> dict[str, Any]:
    """`wikic ask --json` in a new process, as a user would run it."""
    command = [sys.executable, "-m", "wikic", "-C", str(project.root), "ask", "--json", *args, question]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, embedded_gguf: Path) -> Project:
    pytest.importorskip("llama_cpp")
    project = make_project(tmp_path_factory.mktemp("ask-model"))
    project.schema_path.write_text(LLAMA_SCHEMA)
    report, _ = run_build(project)  # scripted model answers, recorded against this schema
    assert report.ok, report.errors
    return project


def entries(project: Project) -> list[Path]:
    return sorted((project.state_dir / "prefix").glob("*.bin"))


def test_second_ask_in_a_new_process_restores_the_prefix_state(project: Project) -> None:
    for path in (project.state_dir / "prefix").glob("*"):
        path.unlink()
    cold = ask_json(project, "What is HNSW?")
    assert cold["prefix_cached"] is False
    assert cold["evaluated_tokens"] == cold["prefix_tokens"] + cold["question_tokens"]
    assert len(entries(project)) == 1 and cold["state_bytes"] == entries(project)[0].stat().st_size

    warm = ask_json(project, "Which library did Meta write?")
    assert warm["prefix_cached"] is True and warm["answer_cached"] is False
    assert warm["prefix_tokens"] == cold["prefix_tokens"] > 300
    assert warm["question_tokens"] * 10 < warm["prefix_tokens"]
    assert warm["evaluated_tokens"] == warm["question_tokens"]  # llama.cpp's own count: the question only
    assert warm["seconds"]["prefix"] * 5 < cold["seconds"]["prefix"]
    for report in (cold, warm):
        assert report["answer"].strip()
        assert all((project.root / page).is_file() for page in report["pages"])


def test_a_corrupt_entry_is_discarded_and_rebuilt(project: Project) -> None:
    if not entries(project):
        ask_json(project, "What is FAISS?")
    (entry,) = entries(project)
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))

    rebuilt = ask_json(project, "What is chunking?")
    assert rebuilt["prefix_cached"] is False
    assert rebuilt["evaluated_tokens"] == rebuilt["prefix_tokens"] + rebuilt["question_tokens"]
    (entry,) = entries(project)
    meta = json.loads(entry.with_suffix(".json").read_text())
    assert zlib.crc32(entry.read_bytes()) == meta["crc32"]
    assert ask_json(project, "What is a vector database?")["prefix_cached"] is True


def test_save_round_trips_through_build_and_lint(project: Project) -> None:
    result = ask(project, "What is HNSW used for?", AskOptions(save=True))
    assert result.saved is not None
    path = project.root / result.saved
    page = split_page(path.read_text())
    assert page.meta["type"] == "answer" and page.meta["question"] == "What is HNSW used for?"
    assert [f"wiki/{slug}.md" for slug in page.meta["cites"]] == result.pages
    assert all((project.root / p).is_file() for p in result.pages)
    before = path.read_bytes()
    report, backend = run_build(project)
    assert report.ok and backend.requests == []
    assert path.read_bytes() == before
    assert f"[[{path.stem}|" in (project.wiki_dir / "index.md").read_text()
    lint = pytest.importorskip("wikic.lint.runner")
    mine = [f for f in lint.lint(project).findings if f.path == result.saved]
    assert not [f for f in mine if f.rule == "stale-page"], mine
    assert ask_json(project, "What is HNSW?")["prefix_cached"] is False  # the wiki changed: a new prefix


@pytest.fixture
def llm(llama_backend: Any) -> Any:
    return llama_backend.llama


def _prefix(llm: Any, text: str, n: int = 8) -> list[int]:
    """Evaluate the first `n` tokens of `text` (states of equal length have equal sizes)."""
    tokens = list(llm.tokenize(text.encode(), add_bos=False))[:n]
    assert len(tokens) == n
    llm.reset()
    llm.eval(tokens)
    return tokens


def test_mismatched_entries_are_never_trusted(llm: Any, tmp_path: Path) -> None:
    cache = PrefixCache(tmp_path, 10**9)
    tokens = _prefix(llm, "The wiki says that HNSW is a graph index.")
    cache.save(llm, "model-a", tokens)
    assert cache.restore(llm, "model-a", tokens) and llm.n_tokens == len(tokens)
    assert not cache.restore(llm, "model-b", tokens)  # another model: another entry, none saved
    (meta_path,) = tmp_path.glob("*.json")
    meta = json.loads(meta_path.read_text())
    meta["n_tokens"] += 1
    meta_path.write_text(json.dumps(meta))
    assert not cache.restore(llm, "model-a", tokens)
    assert list(tmp_path.iterdir()) == []  # discarded, not kept around
    cache.save(llm, "model-a", _prefix(llm, "The wiki says that HNSW is a graph index."))
    next(tmp_path.glob("*.bin")).write_bytes(b"truncated")
    assert not cache.restore(llm, "model-a", tokens) and list(tmp_path.iterdir()) == []


def test_entries_are_bounded_in_size_and_stale_ones_removed(llm: Any, tmp_path: Path) -> None:
    one = _prefix(llm, "First prefix about vector databases and their indexes.")
    probe = PrefixCache(tmp_path / "probe", 10**9)
    size = probe.save(llm, "m", one)
    cache = PrefixCache(tmp_path / "c", int(size * 2.5))
    cache.save(llm, "m1", one)
    cache.save(llm, "m2", _prefix(llm, "Second prefix about chunking documents into parts."))
    assert {e.model_id for e in cache.entries()} == {"m1", "m2"}
    cache.save(llm, "m2", _prefix(llm, "Third prefix about chunking, the wiki changed."))
    assert {e.model_id for e in cache.entries()} == {"m1", "m2"}  # the stale m2 entry is gone
    assert len(cache.entries()) == 2
    cache.save(llm, "m3", _prefix(llm, "Fourth prefix from another model with other words."))
    kept = {e.model_id for e in cache.entries()}
    assert kept == {"m2", "m3"}  # over the bound: the least recently used (m1) went
    assert sum(e.size for e in cache.entries()) <= int(size * 2.5)


@pytest.mark.server
def test_openai_compatible_path_against_the_llama_server(llama_server: str, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    schema = LLAMA_SCHEMA.replace("backend: llama", "backend: openai")
    schema = schema.replace("context: 2048", "context: 4096")
    schema = schema.replace("  name: smollm2\n", f"  name: smollm2\n  base_url: {llama_server}\n")
    project.schema_path.write_text(schema)
    report, _ = run_build(project)
    assert report.ok
    first = ask_json(project, "What is HNSW?")
    second = ask_json(project, "Who wrote FAISS?")
    for result in (first, second):
        assert result["answer"].strip() and result["answer_cached"] is False
        assert result["prefix_tokens"] > result["question_tokens"]
        assert all((project.root / page).is_file() for page in result["pages"])
