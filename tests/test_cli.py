"""The command line as a user meets it: init, discovery, -C, errors and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from projects import make_project

from wikic import __version__
from wikic.cli.main import cli


def invoke(*args: str, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    old = Path.cwd()
    if cwd:
        os.chdir(cwd)
    try:
        return runner.invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_init_creates_a_working_project_and_refuses_to_overwrite(tmp_path: Path) -> None:
    result = invoke("-C", str(tmp_path), "init", "notes")
    assert result.exit_code == 0, result.output
    root = tmp_path / "notes"
    assert (root / "schema.yaml").is_file() and (root / "sources").is_dir() and (root / "wiki").is_dir()
    assert ".wikic/" in (root / ".gitignore").read_text().split()
    schema_before = (root / "schema.yaml").read_text()
    result = invoke("-C", str(root), "init")
    assert result.exit_code == 2
    assert "already" in result.output
    assert (root / "schema.yaml").read_text() == schema_before


def test_init_schema_validates_as_is(tmp_path: Path) -> None:
    from wikic.config import load_schema

    invoke("-C", str(tmp_path), "init")
    schema = load_schema(tmp_path / "schema.yaml")
    assert schema.model.backend == "llama" and schema.model.name == "smollm2"


def test_build_from_a_subfolder_and_with_C(tmp_path: Path) -> None:
    make_project(tmp_path)
    sub = tmp_path / "sources"
    result = invoke("build", "--json", cwd=sub)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["sources"] == 3 and report["actions"]["ran"] > 0
    result = invoke("-C", str(tmp_path), "build", "--json")
    report = json.loads(result.stdout)
    assert report["actions"]["ran"] == 0 and report["llm"]["calls"] == 0 and report["written"] == []


def test_json_report_has_the_documented_fields(tmp_path: Path) -> None:
    make_project(tmp_path)
    report = json.loads(invoke("-C", str(tmp_path), "build", "--json").stdout)
    assert set(report) >= {
        "sources",
        "pages",
        "actions",
        "llm",
        "written",
        "removed",
        "conflicts",
        "errors",
        "seconds",
    }
    assert set(report["actions"]) == {"ran", "cached", "up_to_date", "failed"}
    assert set(report["llm"]) == {"calls", "prompt_tokens", "completion_tokens", "cached_tokens"}


def test_no_project_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("-C", str(tmp_path), "build")
    assert result.exit_code == 2
    assert "wikic init" in result.output


def test_bad_schema_lists_every_problem_with_lines(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "schema.yaml").write_text("title: x\nmodel:\n  backend: nope\n  temprature: 1\nrules: 5\n")
    result = invoke("-C", str(tmp_path), "build", "--json")
    assert result.exit_code == 2
    assert "schema.yaml:3: model.backend" in result.output
    assert "schema.yaml:4: model.temprature: unknown key" in result.output
    assert "schema.yaml:5: rules" in result.output
    assert "Traceback" not in result.output
    assert json.loads(result.stdout.splitlines()[0])["exit_code"] == 2


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    make_project(tmp_path)
    (tmp_path / "schema.yaml").write_text("title: x\nmodel: [unclosed\n")
    result = invoke("-C", str(tmp_path), "build")
    assert result.exit_code == 2 and "schema.yaml:" in result.output and "invalid YAML" in result.output


def test_failed_action_exits_1_and_keeps_the_rest(tmp_path: Path) -> None:
    make_project(tmp_path)
    invoke("-C", str(tmp_path), "build")
    (tmp_path / "sources" / "new.md").write_text("# New\n\n## Thing\n\nA new thing.\n")
    result = invoke("-C", str(tmp_path), "build", "--offline", "--json")
    assert result.exit_code == 1
    assert "digest sources/new.md" in result.output
    assert (tmp_path / "wiki" / "faiss.md").exists()


def test_explain_and_dry_run_print_reasons(tmp_path: Path) -> None:
    make_project(tmp_path)
    result = invoke("-C", str(tmp_path), "build", "--dry-run")
    assert result.exit_code == 0
    assert "would run: digest sources/rag.md" in result.output
    assert not list((tmp_path / "wiki").glob("*.md"))
    invoke("-C", str(tmp_path), "build")
    (tmp_path / "sources" / "rag.md").write_text("# RAG\n\n## Chunking\n\nChunks are small.\n")
    result = invoke("-C", str(tmp_path), "build", "--explain")
    assert "explain: digest sources/rag.md: source changed" in result.output


def test_noop_build_imports_no_model_library(tmp_path: Path) -> None:
    make_project(tmp_path)
    invoke("-C", str(tmp_path), "build")
    code = (
        "import sys\n"
        "from wikic.cli.main import cli\n"
        f"try:\n    cli(['-C', {str(tmp_path)!r}, 'build', '-q'])\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "print(sorted(m for m in ('openai', 'llama_cpp', 'httpx') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
