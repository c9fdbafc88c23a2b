"""Every benchmark script runs, at a tiny size, as a user runs it (`python bench/X.py`),
so that a change that breaks one fails here and not the next time someone measures.
Figures are printed, never asserted on; what is asserted is that the script finished
and printed them, and the checks that do not depend on timing (the edit's minimal calls,
the same pages at every -j)."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# Scripts smoked in this file, and those whose own test runs them end to end.
SMOKED = {
    "build_scaling.py",
    "parallel.py",
    "lint_scale.py",
    "watch_latency.py",
    "ask_latency.py",
    "support_check.py",
    "page_quality.py",
    "entity_pages.py",
    "mcp_latency.py",
    "redact_scale.py",
    "web_scale.py",
    "extract.py",
    "log_append.py",
    "ask_scale.py",
}
ELSEWHERE = {"eval_qa.py": "test_eval_qa.py", "ask_modes.py": "test_eval_qa.py"}


def bench(script: str, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`python bench/<script> <args>` from the repository root, this checkout's wikic first."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc


def test_build_scaling(tmp_path: Path) -> None:
    raw = tmp_path / "figures.json"
    args = ("--sizes", "20", "--runs", "1", "--edits", "1", "--latency", "0", "--json", str(raw))
    out = bench("build_scaling.py", *args).stdout
    assert "| 20 " in out  # the table's row
    assert "no-op under 0.5 s:" in out
    # Without ninja the script compares with the floor only; it must still finish.
    assert ("ninja not run" in out) == (shutil.which("ninja") is None)
    assert "one-source edit = minimal calls: [4] vs 4 -> met" in out
    assert "one-source edit within 1 s:" in out and "engine time per action within 1.5 ms:" in out
    assert "(quick/patched: assembly/lint summary)" in out  # a source added costs what it changed
    assert "a source deleted within 1 s:" in out and "a source moved within 1 s:" in out
    assert "a source retitled within 1 s:" in out  # its page renamed under its slug
    assert "a heading misspelt where its topic's name was first written within 1 s:" in out
    assert "a hand-made page added or edited within 1 s:" in out  # build/handmade.py
    assert "a saved answer saved, edited or deleted within 1 s:" in out  # the index's part of answers made
    assert out.count("(quick/patched: assembly/lint summary)") == 7
    (figures,) = json.loads(raw.read_text())
    assert figures["sources"] == 20 and figures["full"]["calls"] > 0 and figures["noop"]["calls"] == 0


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="--baseline reads another commit from git")
def test_build_scaling_against_another_commit(tmp_path: Path) -> None:
    """--baseline: the full build with another commit's wikic and this one's, in turn, each on
    a fresh copy of one project; a name that is no commit is said so, before any build."""
    raw = tmp_path / "figures.json"
    args = ("--sizes", "20", "--runs", "1", "--edits", "1", "--latency", "0", "--no-ninja")
    out = bench(
        "build_scaling.py", *args, "--baseline", "HEAD", "--baseline-runs", "1", "--json", str(raw)
    ).stdout
    assert "engine time per call, HEAD's vs this checkout's, in turn: " in out
    assert "engine CPU per call, HEAD's vs this checkout's, in turn: " in out
    assert "called 2.7 ms" not in out  # judged against the code on main when the issue was filed only
    compared = json.loads(raw.read_text())[-1]["baseline"]
    assert compared["sources"] == 20 and len(compared["per_call_ms"]["baseline"]) == 1
    assert len(compared["engine_ms"]["this"]) == 1 and compared["engine_ratio"] > 0
    assert (
        compared["commit"]
        == subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    wrong = subprocess.run(
        [sys.executable, "bench/build_scaling.py", *args, "--baseline", "no-such-commit"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        wrong.returncode != 0 and "--baseline no-such-commit: not a commit of this checkout" in wrong.stderr
    )


def test_build_scaling_judges_issue_17s_target_against_the_code_it_was_filed_on() -> None:
    """1.5 ms of engine time per call where the issue says that code took 2.7 ms: a ratio of
    1.5/2.7 or less, of the engine's time (wall less latency, as the issue measured it); the
    CPU's beside it."""
    sys.path.insert(0, str(BENCH))
    try:
        import build_scaling as bs
    finally:
        sys.path.remove(str(BENCH))
    big = bs.SizeResult(20, full={"cpu": 1.0, "overhead": 0.012, "calls": 10}, noop={"wall": 0.1})
    big.edit = {"calls": [4], "expected_calls": 4, "minimal": True, "wall": 0.5}
    # the engine's time per action (wall less latency), its CPU beside it (children's too)
    assert "  engine time per action within 1.5 ms: 1.20 ms -> met (CPU 100.00 ms)" in bs.targets([big])

    def said(engine: float, commit: str, cpu: float = 0.9) -> list[str]:
        compared = {
            "ref": "x",
            "commit": commit,
            "per_call_ms": {"baseline": [2.7], "this": [2.7 * cpu]},
            "engine_ms": {"baseline": [2.7], "this": [2.7 * engine]},
        }
        lines = bs.targets([big], compared | {"ratio": cpu, "engine_ratio": engine})
        return [line for line in lines if f"of {bs.FILED}'s, the code issue 17 called 2.7 ms" in line]

    filed = bs.FILED + "db2864d97acdadd49d8c6244dc1f3c0c5"
    assert said(0.55, filed)[0].endswith("0.550 -> met (CPU 0.900)")
    assert said(0.56, filed, cpu=0.5)[0].endswith("0.560 -> NOT met (CPU 0.500)")  # time, not CPU
    assert said(0.3, "0" * 40) == []  # another commit: its ratios printed, the target not judged
    # the median of the pairs' ratios, each pair built one after the other: not the medians' ratio
    # (0.618 here, where one slow hour made the baseline's 5.52 ms)
    paired = bs._paired({"baseline": [5.52, 3.46, 3.51], "this": [2.25, 1.74, 2.17]})
    assert round(paired, 3) == round(1.74 / 3.46, 3)


def test_parallel(tmp_path: Path) -> None:
    raw = tmp_path / "figures.json"
    out = bench(
        "parallel.py", "--sources", "6", "--latency", "0.01", "--jobs", "1,4", "--json", str(raw)
    ).stdout
    rows = [line for line in out.splitlines() if line.startswith(("| 1 |", "| 4 |"))]
    assert len(rows) == 2
    assert all(row.endswith("| yes |") for row in rows), out  # the same pages at every -j
    assert "target at -j 4" in out
    assert [r["jobs"] for r in json.loads(raw.read_text())["rows"]] == [1, 4]


def test_log_append() -> None:
    out = bench("log_append.py", "--entries", "30", "--names", "3", "--runs", "2").stdout
    assert "| appended |" in out and "| written whole |" in out
    assert "same bytes: yes" in out


def test_lint_scale() -> None:
    out = bench("lint_scale.py", "--pages", "40", "--per-rule").stdout
    assert "lint (in-process, all deterministic rules): 40 pages in" in out
    assert "--rule broken-link:" in out
    assert "wikic lint (CLI, end to end):" in out and "exit 0" in out
    assert "wikic lint again (CLI, nothing changed, from the lint cache):" in out


def test_web_scale(tmp_path: Path) -> None:
    raw = tmp_path / "figures.json"
    out = bench("web_scale.py", "--pages", "40", "--requests", "5", "--json", str(raw)).stdout
    assert "serve (lint): first request" in out and "site (no_lint): full export" in out
    figures = json.loads(raw.read_text())
    assert figures["serve_lint"]["requests"] == 5
    assert figures["site_no_lint"]["nothing_changed_s"] >= 0 and figures["site_lint"]["files"] > 40


def test_watch_latency() -> None:
    out = bench("watch_latency.py", "--sources", "12", "--runs", "2", "--debounce", "50").stdout
    figures = json.loads(out)
    assert figures["sources"] == 12 and figures["pages"] > 12
    assert figures["latency"]["median_s"] > 0
    assert figures["burst"]["builds"] >= 1 and figures["burst"]["model_calls"] > 0
    assert figures["sigterm_exit"] == 0


def test_mcp_latency() -> None:
    pytest.importorskip("mcp")
    figures = json.loads(bench("mcp_latency.py", "--pages", "40", "--calls", "3").stdout)
    assert figures["pages"] == 40 and figures["calls"] == 3
    for where in ("in_process", "stdio"):
        assert figures[where]["search"]["median_ms"] > 0 and figures[where]["read_page"]["median_ms"] > 0


@pytest.mark.model
def test_ask_latency() -> None:
    """Prefix caching is what it measures, and only the embedded model has it."""
    out = bench("ask_latency.py", "--questions", "1", "--animals", "1", timeout=600).stdout
    figures = json.loads(out)
    assert figures["questions"] == 1 and figures["prefix_tokens"] > 0
    assert figures["state_bytes_per_prefix_token"] > 0


def test_ask_scale() -> None:
    figures = json.loads(bench("ask_scale.py", "--pages", "40", "--questions", "2").stdout)
    assert figures["pages"] == 40 and figures["questions"] == 2 and figures["same"] is True
    assert set(figures["seconds"]) == {"read_all", "first", "next_all_bodies", "next", "one_changed"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names


def test_every_bench_script_has_a_smoke_run() -> None:
    """A new script gets a smoke run here; a helper is run by the scripts that import it."""
    scripts, helpers = set(), set()
    for path in sorted(BENCH.glob("*.py")):
        (scripts if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8") else helpers).add(path)
    assert {p.name for p in scripts} == SMOKED | set(ELSEWHERE)
    for script, test in ELSEWHERE.items():
        assert f'"{script}"' in (ROOT / "tests" / test).read_text(encoding="utf-8")
    imported = set().union(*(_imports(p) for p in scripts | helpers))
    assert {p.stem for p in helpers} <= imported, "a helper no script imports: smoke it, or remove it"


def test_support_check() -> None:
    out = bench("support_check.py").stdout
    assert "precision" in out and "recall" in out


def test_redact_scale(tmp_path: Path) -> None:
    raw = tmp_path / "figures.json"
    out = bench("redact_scale.py", "--sizes", "0.01", "0.02", "--json", str(raw)).stdout
    assert "(1 = linear)" in out
    rows = json.loads(raw.read_text())
    assert len(rows) == 4 and all(r["placeholders"] > 0 for r in rows if not r["hostile"])


def test_page_quality() -> None:
    out = bench("page_quality.py", ".", "--json").stdout  # this repository's committed sample
    figures = json.loads(out)
    assert figures["notes_kept_pct"] == 100.0 and figures["sentences"] > 0


def test_entity_pages() -> None:
    data = ROOT.parent / "shared" / "eval" / "hotpotqa"  # third-party data, never in the repo
    if not (data / "questions.jsonl").is_file():
        pytest.skip("../shared/eval/hotpotqa is not beside this checkout")
    out = bench("entity_pages.py", "--data", str(data)).stdout
    assert "answer entities have a page" in out


def test_extract(tmp_path: Path) -> None:
    raw = tmp_path / "figures.json"
    args = ("--pdf-pages", "4", "--docx", "2", "--sources", "3", "--runs", "1", "--json", str(raw))
    out = bench("extract.py", *args).stdout
    assert "ms a page" in out and "ms a file" in out
    figures = json.loads(raw.read_text())
    assert figures["noop"]["store_untouched"] is True and figures["noop"]["errors"] == 0
    page = tmp_path / "page.html"
    page.write_text("<html><body><article><h1>A</h1><p>Ninja is a build system.</p></article></body></html>")
    out = bench("extract.py", "--compare", str(page)).stdout
    assert "| page.html | trafilatura |" in out and "| page.html | readability-lxml |" in out
