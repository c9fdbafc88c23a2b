"""`wikic lint` as a user meets it: text and JSON output, exit codes, levels
from schema.yaml, --rule, inline suppression, and the summary `wikic build` prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lintkit import base_pages, built, cite, crafted, invoke, lint_json, page

from wikic.project import Project

LINE = re.compile(r"^(wiki/[\w.-]+):(\d+): (error|warning) ([a-z-]+) (.+)$")


def _broken(tmp_path: Path, **kwargs: object) -> Project:
    """The base wiki with one broken link (error) and one orphan page (warning)."""
    pages = base_pages()
    pages["faiss.md"] = pages["faiss.md"].replace("[[hnsw|HNSW]]", "[[hnws|HNSW]]")
    pages["lonely.md"] = page("Lonely", f"Chunks overlap by a few sentences, see [[hnsw|HNSW]]. {cite(5)}")
    return crafted(tmp_path, pages, **kwargs)  # type: ignore[arg-type]


def test_text_output_is_grouped_by_file_with_a_summary(tmp_path: Path) -> None:
    result = invoke(_broken(tmp_path), "lint")
    assert result.exit_code == 1
    lines = result.stdout.rstrip("\n").split("\n")
    assert lines[-1] == "1 error, 1 warning in 2 files (4 pages checked)"
    body = lines[:-2]
    assert [LINE.match(line).groups()[2:4] for line in body if line] == [  # type: ignore[union-attr]
        ("error", "broken-link"),
        ("warning", "orphan-page"),
    ]
    assert body[0].startswith("wiki/faiss.md:") and body[1] == "" and body[2].startswith("wiki/lonely.md:1: ")


def test_json_output_lists_findings_with_their_fields(tmp_path: Path) -> None:
    code, findings = lint_json(_broken(tmp_path))
    assert code == 1
    assert [set(f) for f in findings] == [{"rule", "level", "path", "line", "message", "fix"}] * 2
    broken = findings[0]
    assert broken["rule"] == "broken-link" and broken["fix"] == "relink to [[hnsw|HNSW]]"
    assert findings[1]["fix"] is None


def test_exit_codes(tmp_path: Path) -> None:
    clean = crafted(tmp_path / "clean")
    assert invoke(clean, "lint").exit_code == 0
    warned = crafted(
        tmp_path / "warned", {**base_pages(), "lonely.md": page("Lonely", f"[[faiss]] {cite(3)}")}
    )
    result = invoke(warned, "lint")
    assert result.exit_code == 0 and "orphan-page" in result.stdout  # warnings do not fail
    assert invoke(_broken(tmp_path / "broken"), "lint").exit_code == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rule", "broken-links"], "unknown rule 'broken-links' (did you mean 'broken-link'?)"),
        (["--rule", "contradiction"], "contradiction uses the model: add --llm"),
        (["--force"], "--force only applies with --fix"),
        (["--format", "yaml"], "Invalid value for '--format'"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = invoke(crafted(tmp_path), "lint", *args)
    assert result.exit_code == 2
    assert message in result.output


def test_unknown_rule_in_schema_is_a_configuration_error(tmp_path: Path) -> None:
    result = invoke(crafted(tmp_path, rules={"orphan-pages": "off"}), "lint")
    assert result.exit_code == 2
    assert "lint.rules names unknown rules" in result.stderr and "orphan-page" in result.stderr


def test_no_project_exits_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from wikic.cli.main import cli

    result = CliRunner().invoke(cli, ["-C", str(tmp_path), "lint", "--format", "json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["exit_code"] == 2


def test_levels_come_from_schema(tmp_path: Path) -> None:
    code, findings = lint_json(_broken(tmp_path / "a", rules={"orphan-page": "error", "broken-link": "off"}))
    assert code == 1
    assert [(f["rule"], f["level"]) for f in findings] == [("orphan-page", "error")]
    code, findings = lint_json(_broken(tmp_path / "b", rules={"broken-link": "warning"}))
    assert code == 0 and {f["level"] for f in findings} == {"warning"}


def test_rule_option_runs_only_the_named_rules_even_when_off(tmp_path: Path) -> None:
    project = _broken(tmp_path, rules={"orphan-page": "off"})
    _, findings = lint_json(project)
    assert [f["rule"] for f in findings] == ["broken-link"]
    code, findings = lint_json(project, "--rule", "orphan-page")
    assert code == 0 and [(f["rule"], f["level"]) for f in findings] == [("orphan-page", "warning")]
    _, findings = lint_json(project, "--rule", "orphan-page", "--rule", "broken-link")
    assert sorted(f["rule"] for f in findings) == ["broken-link", "orphan-page"]


def test_inline_suppression_silences_the_named_rules_in_that_page_only(tmp_path: Path) -> None:
    pages = base_pages()
    pages["faiss.md"] = pages["faiss.md"].replace("[[hnsw|HNSW]]", "[[hnws|HNSW]] and [[nowhere]]")
    pages["hnsw.md"] = pages["hnsw.md"].replace("[[faiss|FAISS]]", "[[faiss|FAISS]] and [[nowhere]]")
    pages["lonely.md"] = page("Lonely", f"Chunks overlap by a few sentences, see [[hnsw|HNSW]]. {cite(5)}")
    project = crafted(tmp_path, pages)
    _, before = lint_json(project)
    assert sorted({(f["path"], f["rule"]) for f in before}) == [
        ("wiki/faiss.md", "broken-link"),
        ("wiki/hnsw.md", "broken-link"),
        ("wiki/lonely.md", "orphan-page"),
    ]
    faiss, lonely = project.wiki_dir / "faiss.md", project.wiki_dir / "lonely.md"
    faiss.write_text(faiss.read_text() + "\n<!-- wikic-lint: disable=broken-link -->\n")
    lonely.write_text(lonely.read_text() + "\n<!-- wikic-lint: disable=uncited-claim, orphan-page -->\n")
    _, after = lint_json(project)
    assert sorted({(f["path"], f["rule"]) for f in after}) == [("wiki/hnsw.md", "broken-link")]


def test_suppression_inside_a_code_block_does_not_count(tmp_path: Path) -> None:
    pages = base_pages()
    pages["lonely.md"] = page(
        "Lonely",
        f"Chunks overlap by a few sentences, see [[hnsw|HNSW]]. {cite(5)}\n\n```\n"
        "<!-- wikic-lint: disable=orphan-page -->\n```",
    )
    _, findings = lint_json(crafted(tmp_path, pages))
    assert [f["rule"] for f in findings] == ["orphan-page"]


# --- wikic build's summary and --strict --------------------------------------------
def test_build_prints_a_lint_summary_and_strict_fails_on_lint_errors(tmp_path: Path) -> None:
    project = built(tmp_path)
    result = invoke(project, "build")
    assert result.exit_code == 0
    assert result.stderr.rstrip().split("\n")[-1] == "lint: no problems"
    # A hand-made page with a link to nothing.
    (project.wiki_dir / "mine.md").write_text(
        page("Mine", "About [[nowhere]] and [[hnsw|HNSW]].", type="answer", sources=[])
    )
    result = invoke(project, "build")  # indexes the new page
    assert result.exit_code == 0
    _, findings = lint_json(project)
    errors = sum(f["level"] == "error" for f in findings)
    warnings = len(findings) - errors
    assert errors >= 1 and "broken-link" in {f["rule"] for f in findings}
    assert result.stderr.rstrip().split("\n")[-1] == (
        f"lint: {errors} error{'s' if errors > 1 else ''}, {warnings} warning{'' if warnings == 1 else 's'} "
        "(`wikic lint` for details)"
    )
    result = invoke(project, "build", "--strict")
    assert result.exit_code == 1 and "--strict: build failed" in result.stderr
    result = invoke(project, "build", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["lint"] == {
        "error": errors,
        "warning": warnings,
    }
    (project.wiki_dir / "mine.md").unlink()
    assert invoke(project, "build", "--strict").exit_code == 0
