"""`wikic lint --llm`: the model-based rules (unsupported-claim, contradiction)
through the backend interface, with answers cached under the key of what they read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lintkit import SOURCE_A, base_pages, built, cite, crafted, invoke, lint_json, page

from wikic.lint.runner import LintOptions, lint
from wikic.state import State


def _calls(log: Path) -> int:
    if not log.exists():
        return 0
    return sum(json.loads(line)["stage"] == "lint" for line in log.read_text().splitlines())


@pytest.fixture
def call_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("WIKIC_SCRIPTED_LOG", str(log))
    return log


def test_model_rules_run_only_with_llm(tmp_path: Path, call_log: Path) -> None:
    project = crafted(tmp_path / "p")
    assert lint_json(project) == (0, [])
    assert _calls(call_log) == 0 and not project.state_path.exists()  # a plain lint never calls the model
    assert lint_json(project, "--llm") == (0, [])
    # three cited paragraphs, one call each; one source shared by three pages, one call
    assert _calls(call_log) == 4


def test_unsupported_claim_fires_for_a_claim_its_lines_do_not_entail(tmp_path: Path, call_log: Path) -> None:
    pages = base_pages()
    pages["penguins.md"] = page(
        "Penguins",
        "Penguins migrate across the frozen southern ocean every winter "
        f"season, unlike [[faiss|FAISS]]. {cite(3)}",
    )
    project = crafted(tmp_path / "p", pages)
    _, findings = lint_json(project, "--llm", "--rule", "unsupported-claim")
    assert [(f["path"], f["rule"], f["level"]) for f in findings] == [
        ("wiki/penguins.md", "unsupported-claim", "warning")
    ]
    assert "not entailed by the lines it cites" in findings[0]["message"]


def test_contradiction_fires_for_pages_of_one_source_that_disagree(tmp_path: Path, call_log: Path) -> None:
    pages = base_pages()
    pages["meta.md"] = page(
        "Meta", f"FAISS is not a library for similarity search written by Meta. {cite(3)}"
    )
    pages["faiss.md"] = page(
        "FAISS",
        f"FAISS is a library for similarity search written by Meta. {cite(3)}\n\n"
        "See [[meta|Meta]] and [[hnsw|HNSW]].",
    )
    project = crafted(tmp_path / "p", pages)
    code, findings = lint_json(project, "--llm", "--rule", "contradiction")
    assert code == 0  # a warning by default
    # meta.md disagrees with faiss.md and with the source's own page, which says the same as faiss.md
    pairs = [(f["path"], f["message"].split("incompatible with ")[1].split(":")[0]) for f in findings]
    assert pairs == [("wiki/faiss.md", "wiki/meta.md"), ("wiki/meta.md", "wiki/notes-on-vector-search.md")]
    assert all("(both from sources/a.md)" in f["message"] for f in findings)


def test_model_rules_are_silent_on_a_freshly_built_wiki(tmp_path: Path, call_log: Path) -> None:
    project = built(tmp_path / "p")
    code, findings = lint_json(project, "--llm", "--rule", "contradiction", "--rule", "unsupported-claim")
    assert (code, findings) == (0, [])
    assert _calls(call_log) > 0


def test_answers_are_cached_by_what_the_call_reads(tmp_path: Path, call_log: Path) -> None:
    project = crafted(tmp_path / "p")
    lint_json(project, "--llm")
    first = _calls(call_log)
    with State.open(project.state_path) as state:
        stages = [r[0] for r in state.db.execute("SELECT stage FROM cache")]
    assert sorted(stages) == ["lint_contradiction"] + ["lint_unsupported"] * 3
    assert lint_json(project, "--llm") == (0, [])
    assert _calls(call_log) == first  # nothing changed: no call
    faiss = project.wiki_dir / "faiss.md"
    faiss.write_text(faiss.read_text().replace("often used with", "and is often used with"))
    lint_json(project, "--llm")
    assert _calls(call_log) == first + 2  # that paragraph's check, and its source's contradiction check
    (project.sources_dir / "a.md").write_text(SOURCE_A.replace("Meta", "Meta AI"))
    lint_json(project, "--llm", "--rule", "unsupported-claim")
    assert _calls(call_log) == first + 4  # the two paragraphs whose cited lines include the changed one


def test_schema_levels_apply_to_model_rules(tmp_path: Path, call_log: Path) -> None:
    pages = base_pages()
    pages["penguins.md"] = page(
        "Penguins", f"Penguins migrate across the frozen southern ocean, see [[faiss]]. {cite(3)}"
    )
    project = crafted(tmp_path / "p", pages, rules={"unsupported-claim": "error", "contradiction": "off"})
    result = invoke(project, "lint", "--llm", "--rule", "unsupported-claim")
    assert result.exit_code == 1 and "error unsupported-claim" in result.stdout
    code, findings = lint_json(project, "--llm")
    assert "contradiction" not in {f["rule"] for f in findings}


@pytest.mark.model
def test_the_embedded_model_runs_the_model_rules(tmp_path: Path) -> None:
    """The real llama backend with SmolLM2: the path works end to end and its answers are cached."""
    pytest.importorskip("llama_cpp")
    from wikic.backends.llama_path import embedded_model_path
    from wikic.errors import ConfigError

    try:
        embedded_model_path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    project = crafted(tmp_path / "p")
    schema = project.schema_path.read_text().replace("backend: scripted", "backend: llama\n  context: 2048")
    project.schema_path.write_text(schema)
    opts = LintOptions(rules=["unsupported-claim", "contradiction"], llm=True)
    first = lint(project, opts)
    assert first.model_calls == 4  # three cited paragraphs, one shared source
    assert {f.rule for f in first.findings} <= {"unsupported-claim", "contradiction"}
    with State.open(project.state_path) as state:
        stages = sorted(r[0] for r in state.db.execute("SELECT stage FROM cache"))
    assert stages == ["lint_contradiction"] + ["lint_unsupported"] * 3  # usable or not, every answer is kept
    again = lint(project, opts)
    assert again.model_calls == 0
    assert [f.to_json() for f in again.findings] == [f.to_json() for f in first.findings]
    assert again.notes == first.notes
