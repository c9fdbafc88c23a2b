"""`wikic lint --fix`: relink near misses, drop links to nothing, rebuild the
index; never touch a hand edit without --force; keep the build's records true."""

from __future__ import annotations

import json
from pathlib import Path

from lintkit import base_pages, built, cite, crafted, invoke, lint_json, page

from wikic.lock import ProjectLock


def _rules(findings: list[dict[str, object]]) -> set[tuple[object, object]]:
    return {(f["path"], f["rule"]) for f in findings}


def test_fix_round_trip_on_a_built_wiki(tmp_path: Path) -> None:
    project = built(tmp_path)
    wiki = project.wiki_dir
    # A page renamed by hand, file and title: links to [[faiss|FAISS]] now miss it by a letter.
    renamed = (wiki / "faiss.md").read_text().replace("title: FAISS", "title: FAISSS")
    (wiki / "faisss.md").write_text(renamed)
    (wiki / "faiss.md").unlink()
    (wiki / "chunking.md").unlink()  # links to [[chunking|Chunking]] now point at nothing
    _, before = lint_json(project)
    assert {
        ("wiki/hnsw.md", "broken-link"),
        ("wiki/tools-we-use.md", "broken-link"),
        ("wiki/index.md", "index-drift"),
    } <= _rules(before)

    result = invoke(project, "lint", "--fix")
    assert result.exit_code == 0, result.output
    assert "[[faiss|FAISS]] -> [[faisss|FAISS]]" in result.stdout
    assert "dropped [[chunking|Chunking]], kept its text 'Chunking'" in result.stdout
    assert "fixed: wiki/index.md: rebuilt" in result.stdout
    tools = (wiki / "tools-we-use.md").read_text()
    assert "[[chunking" not in tools and "- Chunking: [tools.md:9]" in tools

    _, after = lint_json(project)
    assert [f for f in after if f["level"] == "error"] == []
    assert not {"broken-link", "index-drift"} & {f["rule"] for f in after}
    # the fixed pages are still wikic's own: only the pages deleted by hand show as hand edits
    assert {f["path"] for f in after if f["rule"] == "hand-edit"} == {"wiki/faiss.md", "wiki/chunking.md"}
    fixed = {line.split(":")[1].strip() for line in result.stdout.splitlines() if line.startswith("fixed: ")}
    report = json.loads(invoke(project, "build", "--json").stdout)
    assert report["conflicts"] == [] and report["errors"] == []
    assert fixed <= set(report["written"])  # the build took the fixed pages back as its own


def test_fix_leaves_hand_edited_pages_alone_unless_forced(tmp_path: Path) -> None:
    project = built(tmp_path)
    wiki = project.wiki_dir
    (wiki / "chunking.md").unlink()
    tools = wiki / "tools-we-use.md"
    tools.write_text(tools.read_text() + "\nMy own remark.\n")
    edited = tools.read_bytes()

    result = invoke(project, "lint", "--fix")
    assert "skipped: wiki/tools-we-use.md: not fixed, it was edited by hand (use --force)" in result.stderr
    assert tools.read_bytes() == edited
    assert (
        "[[chunking" not in (wiki / "retrieval-augmented-generation.md").read_text()
    )  # not hand edited: fixed

    result = invoke(project, "lint", "--fix", "--force")
    assert "fixed: wiki/tools-we-use.md" in result.stdout
    assert "[[chunking" not in tools.read_text() and "My own remark." in tools.read_text()
    # still a hand edit: --fix --force does not adopt it, so the build keeps it and says so
    _, findings = lint_json(project, "--rule", "hand-edit")
    assert "wiki/tools-we-use.md" in {f["path"] for f in findings}
    report = json.loads(invoke(project, "build", "--json").stdout)
    assert report["conflicts"] == ["wiki/tools-we-use.md"]


def test_fix_relinks_foreign_pages_only_with_force_and_never_inside_code(tmp_path: Path) -> None:
    pages = base_pages()
    pages["answer.md"] = page(
        "An answer",
        f"HNSW is a graph index for approximate nearest neighbour search. {cite(4)}\n\n"
        "Use [[Hierarchical navigable small wrld]] (not `[[Hierarchical navigable small wrld]]`) "
        "with [[faiss|FAISS]].",
        type="answer",
    )
    project = crafted(tmp_path, pages)
    answer = project.wiki_dir / "answer.md"
    result = invoke(project, "lint", "--fix")
    assert result.exit_code == 1
    assert (
        "not fixed, there is no build state to tell wikic's edits from yours (use --force)" in result.stderr
    )
    result = invoke(project, "lint", "--fix", "--force")
    assert result.exit_code == 0, result.output
    text = answer.read_text()
    assert (
        "Use [[hnsw|Hierarchical navigable small wrld]] (not `[[Hierarchical navigable small wrld]]`)" in text
    )
    assert lint_json(project) == (0, [])


def test_fix_writes_a_missing_index_and_reports_nothing_to_fix_otherwise(tmp_path: Path) -> None:
    project = crafted(tmp_path, index=False)
    result = invoke(project, "lint", "--fix")
    assert result.exit_code == 0 and "fixed: wiki/index.md: written" in result.stdout
    assert lint_json(project) == (0, [])
    result = invoke(project, "lint", "--fix")
    assert "fixed: nothing to fix mechanically" in result.stdout


def test_fix_takes_the_project_lock(tmp_path: Path) -> None:
    project = crafted(tmp_path, index=False)
    with ProjectLock(project.lock_path):
        result = invoke(project, "lint", "--fix", "--no-wait")
    assert result.exit_code == 1 and "another wikic process" in result.stderr
    assert not (project.wiki_dir / "index.md").exists()
