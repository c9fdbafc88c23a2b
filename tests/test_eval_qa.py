"""bench/eval_qa.py: the scoring functions, and a whole run on a tiny synthetic
question set with the scripted backend (the real model is not needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

from qa_answer import chunk_text  # noqa: E402
from qa_score import best, exact_match, f1, normalise, occurs, summarise  # noqa: E402


def test_normalise_is_squad_style() -> None:
    assert normalise("  The Anglican   Communion! ") == "anglican communion"
    assert normalise("An apple, a pear & THE plum.") == "apple pear plum"
    assert normalise("theatre another") == "theatre another"  # articles only as whole words
    assert normalise("U.S.A.") == "usa"


def test_exact_match_and_f1() -> None:
    assert exact_match("the Victoria Falls.", "Victoria Falls") == 1.0
    assert exact_match("Victoria", "Victoria Falls") == 0.0
    assert f1("Victoria Falls", "Victoria Falls") == 1.0
    assert f1("It is Victoria Falls", "Victoria Falls") == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert f1("Niagara", "Victoria Falls") == 0.0
    assert f1("", "Victoria Falls") == 0.0
    assert f1("the", "a") == 1.0  # both empty after normalisation, as in the SQuAD script


def test_best_is_the_maximum_over_answers() -> None:
    answers = ["Church of England", "the Anglican Communion"]
    assert best(exact_match, "Anglican Communion", answers) == 1.0
    assert best(f1, "the Church", answers) == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    assert best(f1, "anything", []) == 0.0


def test_occurs_matches_whole_normalised_words() -> None:
    assert occurs("35", "There are 35 Publix stores.")
    assert not occurs("35", "In 1350 the town...")
    assert occurs("the Anglican Communion", "part of the anglican communion, and")
    assert not occurs("", "text")


def test_summarise_per_type_skips_missing_values() -> None:
    rows = [
        {"type": "a", "f1": 1.0, "r": None},
        {"type": "a", "f1": 0.0, "r": 0.5},
        {"type": "b", "f1": 0.5, "r": 1.0},
    ]
    out = summarise(rows, ["f1", "r"])
    assert out["overall"] == {"n": 3, "f1": 0.5, "r": 0.75}
    assert out["by_type"]["a"] == {"n": 2, "f1": 0.5, "r": 0.5}


def test_chunks_are_bounded_and_keep_every_word() -> None:
    text = " ".join(f"word{i}" for i in range(300)) + " " + "x" * 1200
    chunks = chunk_text(text, 100)
    assert all(len(c) <= 100 for c in chunks)
    assert "".join(chunks).replace(" ", "") == text.replace(" ", "")


DOCS = {
    "Zorblax.txt": "Zorblax\n\n**Zorblax** is a town in **Quenland**. It was founded in 1871 by Mira Tolk.\n",
    "Quenland.txt": "Quenland\n\n**Quenland** is a province; its capital is Vetrano, on the Ulm.\n",
    "Harbor_cranes.txt": "Harbor cranes\n\n**Harbor cranes** lift containers at the port of Sedd.\n",
}
QUESTIONS = [
    {
        "id": "q1",
        "question": "In which year was the town in Quenland founded?",
        "answer": "1871",
        "answers": ["1871"],
        "evidence": ["Zorblax.txt", "Quenland.txt"],
        "type": "bridge-2hop",
        "decomposition": [{"question": "LEAKMARK which town?", "answer": "Zorblax"}],
    },
    {
        "id": "q2",
        "question": "What is the capital of the province that Zorblax is in?",
        "answer": "Vetrano",
        "answers": ["Vetrano", "Vetrano city"],
        "evidence": ["Zorblax.txt", "Quenland.txt"],
        "type": "other",
        "supporting_facts": ["LEAKMARK"],
    },
]


def make_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "sources").mkdir(parents=True)
    for name, text in DOCS.items():
        (data / "sources" / name).write_text(text)
    (data / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return data


def run_eval(data: Path, out: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """`bench/eval_qa.py` with the scripted model, as a user runs it."""
    argv = [sys.executable, str(BENCH / "eval_qa.py"), "--data", str(data), "--model", "scripted:test"]
    proc = subprocess.run(
        [*argv, "--out", str(out), *extra], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_eval_qa_end_to_end_with_the_scripted_backend(tmp_path: Path) -> None:
    data = make_data(tmp_path)
    # Answers by the prompt's markup: RAG prompts hold <passage>, wikic ask's hold <index>; closed
    # book gets the scripted echo. A prompt holding a diagnostic field would be answered LEAKED.
    script = {
        "text:LEAKMARK": ["LEAKED"] * 9,
        "text:<passage>": ["1871", "The capital is Vetrano."],
        "text:<index>": ["It was 1871.", "Vetrano"],
    }
    (tmp_path / "script.json").write_text(json.dumps(script))
    log = tmp_path / "calls.jsonl"
    env = {
        **os.environ,
        "WIKIC_SCRIPTED_RESPONSES": str(tmp_path / "script.json"),
        "WIKIC_SCRIPTED_LOG": str(log),
    }
    out = tmp_path / "out"
    proc = run_eval(data, out, env, "--project", str(tmp_path / "project"))
    results = json.loads((out / "results.json").read_text())
    assert (out / "results.md").read_text() in proc.stdout
    assert results["questions"] == 2 and results["documents"] == 3
    rows = results["per_question"]
    assert not any("LEAKED" in row[m]["answer"] for row in rows for m in ("closed_book", "rag", "wikic"))
    assert [r["rag"]["answer"] for r in rows] == ["1871", "The capital is Vetrano."]
    assert [r["wikic"]["answer"] for r in rows] == ["It was 1871.", "Vetrano"]

    s = results["summary"]
    assert s["closed_book"]["overall"]["em"] == 0.0 and s["closed_book"]["overall"]["evidence_recall"] is None
    assert s["rag"]["overall"]["em"] == 0.5 and s["rag"]["overall"]["f1"] == pytest.approx(0.75)
    assert s["wikic"]["by_type"]["bridge-2hop"]["f1"] == pytest.approx(0.5)
    assert s["wikic"]["by_type"]["other"]["em"] == 1.0
    assert s["rag"]["overall"]["evidence_recall"] == 1.0  # three small documents: every chunk fits
    assert s["wikic"]["overall"]["evidence_recall"] == 1.0  # the whole wiki fits the budget
    assert results["wikic_context_mismatches"] == 0
    for m in ("rag", "wikic"):
        assert s[m]["overall"]["prompt_tokens"] > s["closed_book"]["overall"]["prompt_tokens"]
    retention = results["fact_retention"]
    assert retention["in_sources"] == 2
    assert retention["retained"] + len(retention["lost"]) == 2

    stages = [json.loads(line)["stage"] for line in log.read_text().splitlines()]
    assert stages.count("text") == 3 * len(QUESTIONS)  # one model call per way per question
    assert stages.count("digest") == 3
    compiled = results["compile"]
    assert compiled["actions_by_stage"]["digest"] == 3 and compiled["actions_by_stage"]["write"] >= 1
    assert compiled["fallbacks"] == {}  # the scripted model's answers are all usable

    # A second run reuses the compiled project: no digest or write call again.
    log.unlink()
    run_eval(
        data,
        out,
        {**env, "WIKIC_SCRIPTED_RESPONSES": ""},
        "--project",
        str(tmp_path / "project"),
        "--limit",
        "1",
    )
    stages = [json.loads(line)["stage"] for line in log.read_text().splitlines()]
    assert set(stages) == {"text"}
    assert json.loads((out / "results.json").read_text())["questions"] == 1


def test_eval_qa_baselines_only_compile_nothing(tmp_path: Path) -> None:
    data = make_data(tmp_path)
    log = tmp_path / "calls.jsonl"
    out = tmp_path / "out"
    run_eval(data, out, {**os.environ, "WIKIC_SCRIPTED_LOG": str(log)}, "--ways", "closed_book,rag")
    results = json.loads((out / "results.json").read_text())
    assert set(results["summary"]) == {"closed_book", "rag"}
    assert results["compile"] is None and results["fact_retention"] is None
    stages = [json.loads(line)["stage"] for line in log.read_text().splitlines()]
    assert stages == ["text"] * 4


def test_ask_modes_measures_the_prefix_and_the_selection_on_a_compiled_project(tmp_path: Path) -> None:
    data = make_data(tmp_path)
    env = {**os.environ, "WIKIC_SCRIPTED_RESPONSES": ""}
    run_eval(data, tmp_path / "out", env, "--project", str(tmp_path / "project"), "--ways", "wikic")
    figures = tmp_path / "modes.json"
    argv = [sys.executable, str(BENCH / "ask_modes.py"), "--data", str(data), "--project"]
    argv += [str(tmp_path / "project"), "--limits", "1,2", "--budgets", "300,600", "--answer"]
    argv += ["--json", str(figures)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(figures.read_text())
    assert [r["questions"] for r in results] == [1, 2]
    for r in results:  # a three-document wiki fits whole: the prefix holds every page
        assert r["prefix_pages"] == r["pages"] > 0
        assert set(r["ways"]) == {"prefix", "select 300", "select 600"}
        assert r["ways"]["prefix"]["recall"] == 1.0 and r["ways"]["prefix"]["f1"] is not None
    assert "| prefix |" in proc.stdout and "| select 600 |" in proc.stdout
