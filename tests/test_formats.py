"""PDF, DOCX, PPTX, XLSX, CSV, HTML and EPUB sources: each builds to pages whose
citations open the right lines of its extracted text (and, for a PDF, the right
page); the extracted text is stored and reused; editing one rebuilds only its pages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import formatkit as fk
import pytest
from projects import make_project, run_build

from wikic.backends.base import Request
from wikic.build.actions import action_key
from wikic.config import SourcesConfig
from wikic.project import Project
from wikic.sources.extract import store_dir
from wikic.sources.formats import DEFAULT_INCLUDE, format_of
from wikic.sources.read import source_text
from wikic.wiki.page import parse_citations, split_page

PDF_PAGES = [
    ["Ninja is a small build system written by Evan Martin.", "It keeps a build log of commands."],
    ["Restat gives Ninja early cutoff for unchanged outputs.", "Generated headers benefit most."],
    ["Make compares file timestamps to decide what to rebuild."],
]
FILES = {
    "report.pdf": lambda: fk.pdf(PDF_PAGES),
    "notes.docx": lambda: fk.docx(
        "Build notes",
        {"Make": ["Make was written by Stuart Feldman in 1976.", "- Makefiles list rules"]},
        [["tool", "year"], ["make", "1976"]],
    ),
    "talk.pptx": lambda: fk.pptx([("Bazel overview", ["Bazel caches actions remotely"], "Mention Blaze")]),
    "tools.xlsx": lambda: fk.xlsx({"Tools": [["tool", "year"], ["make", 1976], ["ninja", 2012]]}),
    "years.csv": lambda: b"tool,year\nscons,2000\ntup,2008\n",
    "article.html": lambda: fk.ARTICLE.encode(),
    "book.epub": lambda: fk.epub(
        "Builds", [("Chapter one", "<p>Tup was written by Mike Shal.</p>"), ("Chapter two", "<p>Ok.</p>")]
    ),
}


def formats_project(root: Path, names: list[str] | None = None) -> Project:
    project = make_project(root, {"plain.md": "# Plain\n\nA plain note about Shake, a build system.\n"})
    for name in names or list(FILES):
        (project.sources_dir / name).write_bytes(FILES[name]())
    return project


def extracted_lines(project: Project, rel: str) -> list[str]:
    raw = (project.root / rel).read_bytes()
    return source_text(rel, raw, store_dir(project.root)).text.splitlines()


def citations(project: Project) -> list[tuple[str, int, int, str]]:
    """Every citation in the wiki: (source, start, end, link target)."""
    found = []
    for page in project.wiki_dir.glob("*.md"):
        text = page.read_text(encoding="utf-8")
        for cite, offset in parse_citations(text):
            link = re.match(r"\[[^\]]*\]\(([^)]*)\)", text[offset:])
            assert link is not None
            found.append((cite.source, cite.start, cite.end, link.group(1)))
    return found


def test_the_default_include_patterns_are_the_formats_read() -> None:
    assert sorted(SourcesConfig().include) == sorted(DEFAULT_INCLUDE)
    assert format_of("sources/a/Report.PDF") is not None
    assert format_of("sources/a.md") is None and format_of("sources/v1.2/notes") is None


def test_every_format_builds_to_pages_citing_its_extracted_lines(tmp_path: Path) -> None:
    project = formats_project(tmp_path)
    report, backend = run_build(project)
    assert report.errors == [], report.errors
    assert report.sources == len(FILES) + 1
    cited = citations(project)
    for name in FILES:
        rel = f"sources/{name}"
        mine = [c for c in cited if c[0] == rel]
        assert mine, f"no citation of {rel}"
        lines = extracted_lines(project, rel)
        for _, start, end, _ in mine:
            assert 1 <= start <= end <= len(lines)
            assert any(line.strip() for line in lines[start - 1 : end])
    pages = {
        split_page(p.read_text(encoding="utf-8")).meta.get("title") for p in project.wiki_dir.glob("*.md")
    }
    assert "How restat gives ninja early cutoff" in pages  # the article's title, not the site's


def test_a_pdf_citation_links_to_the_page_its_lines_are_on(tmp_path: Path) -> None:
    project = formats_project(tmp_path, ["report.pdf"])
    run_build(project)
    lines = extracted_lines(project, "sources/report.pdf")
    pdf_cites = [c for c in citations(project) if c[0] == "sources/report.pdf"]
    assert pdf_cites
    for _, start, _end, target in pdf_cites:
        page = int(re.search(r"#page=(\d+)&L", target).group(1))  # type: ignore[union-attr]
        assert target.startswith("../sources/report.pdf#page=")
        assert lines[start - 1] in PDF_PAGES[page - 1], (start, page)
    assert {int(re.search(r"page=(\d+)", c[3]).group(1)) for c in pdf_cites} >= {1, 2}  # type: ignore[union-attr]


def test_the_extracted_text_is_stored_and_not_extracted_again(tmp_path: Path) -> None:
    project = formats_project(tmp_path, ["report.pdf", "notes.docx"])
    run_build(project)
    store = store_dir(project.root)
    stored = {p.name: p.stat().st_mtime_ns for p in store.iterdir()}
    assert len([n for n in stored if n.endswith(".md")]) == 2
    assert any("Restat gives Ninja early cutoff" in p.read_text() for p in store.glob("*.md"))
    (project.sources_dir / "plain.md").write_text("# Plain\n\nShake is a build system by Neil Mitchell.\n")
    report, backend = run_build(project)
    assert backend.digests == 1  # the edited note only
    assert {p.name: p.stat().st_mtime_ns for p in store.iterdir()} == stored  # read from the store


def test_editing_a_pdf_rebuilds_only_its_pages(tmp_path: Path) -> None:
    project = formats_project(tmp_path, ["report.pdf", "notes.docx"])
    run_build(project)
    before = {p.name: p.read_bytes() for p in project.wiki_dir.glob("*.md")}
    (project.sources_dir / "report.pdf").write_bytes(
        fk.pdf([*PDF_PAGES[:2], ["Make was first released in 1976."]])
    )
    report, backend = run_build(project)
    assert report.errors == []
    assert backend.digests == 1
    changed = {
        n
        for n, data in before.items()
        if (project.wiki_dir / n).exists() and (project.wiki_dir / n).read_bytes() != data
    }
    for name in changed - {"index.md", "log.md"}:
        meta = split_page((project.wiki_dir / name).read_text(encoding="utf-8")).meta
        assert "sources/report.pdf" in (meta.get("sources") or []), name
    assert len(list(store_dir(project.root).glob("*.md"))) == 2  # the old PDF's text is pruned


def test_the_extractor_is_part_of_the_key() -> None:
    request = Request(messages=[{"role": "user", "content": "x"}], schema=None, max_tokens=10)
    plain = action_key("digest", request, "m")
    assert action_key("digest", request, "m", "") == plain  # text sources keep their keys
    assert action_key("digest", request, "m", "pdf/1 pypdf 7.1.1") != plain
    assert action_key("digest", request, "m", "pdf/1 pypdf 7.1.1") != action_key(
        "digest", request, "m", "pdf/1 pypdf 7.2.0"
    )


def test_the_extractor_is_an_input_of_the_digest(tmp_path: Path) -> None:
    from wikic.state import State

    project = formats_project(tmp_path, ["report.pdf"])
    run_build(project)
    state = State.open(project.state_path)
    try:
        records = state.actions()
    finally:
        state.close()
    assert records["digest:sources/report.pdf"].inputs["extractor"].startswith("pdf/1 pypdf ")
    assert "extractor" not in records["digest:sources/plain.md"].inputs


@pytest.mark.parametrize(
    ("name", "wanted", "unwanted"),
    [
        ("notes.docx", ["# Build notes", "## Make", "- Makefiles list rules", "| make | 1976 |"], []),
        (
            "talk.pptx",
            ["## Slide 1: Bazel overview", "- Bazel caches actions remotely", "Notes: Mention Blaze"],
            [],
        ),
        ("tools.xlsx", ["## Tools", "| tool | year |", "| ninja | 2012 |"], []),
        ("years.csv", ["| tool | year |", "| tup | 2008 |"], []),
        ("article.html", ["# How restat gives ninja early cutoff", "## Why it matters"], list(fk.CHROME)),
        ("book.epub", ["# Chapter one", "Tup was written by Mike Shal."], ["Chapter two\n\n# Chapter one"]),
    ],
)
def test_each_format_extracts_to_markdown(
    tmp_path: Path, name: str, wanted: list[str], unwanted: list[str]
) -> None:
    fmt = format_of(name)
    assert fmt is not None
    text = source_text(name, FILES[name](), None).text
    for piece in wanted:
        assert piece in text.splitlines() or piece in text, (piece, text)
    for piece in unwanted:
        assert piece not in text, (piece, text)


def test_a_sheet_is_read_to_a_bounded_number_of_rows(tmp_path: Path) -> None:
    rows: list[list[object]] = [["n", "square"]] + [[n, n * n] for n in range(5000)]
    text = source_text("big.xlsx", fk.xlsx({"Squares": rows}), None).text
    assert "| 999 | 998001 |" in text and "| 1000 | 1000000 |" not in text
    assert "(only the first 1,000 rows of 5,001 are read)" in text


def test_a_saved_page_in_latin_1_is_read_by_its_declared_charset() -> None:
    page = fk.ARTICLE.replace("<head>", '<head><meta charset="iso-8859-1">').replace(
        "rarely", "rarely (café)"
    )
    text = source_text("old.html", page.encode("latin-1"), None).text
    assert "rarely (café) change" in text


def test_a_leading_front_matter_is_blank_lines_for_the_build() -> None:
    note = '---\nurl: "https://example.org/a"\ntags:\n  - build\n---\n\n# Make\n\nMake was written in 1976.\n'
    text = source_text("sources/a.md", note.encode(), None).text
    assert text.splitlines()[:5] == [""] * 5 and text.splitlines()[6] == "# Make"
    ruled = "---\nA line between two rules.\n---\n\nText.\n"
    assert source_text("sources/b.md", ruled.encode(), None).text == ruled


def test_the_mcp_read_source_tool_reads_the_extracted_text(tmp_path: Path) -> None:
    from wikic.mcp.tools import Tools

    project = formats_project(tmp_path, ["report.pdf"])
    run_build(project)
    out = Tools(project).read_source("sources/report.pdf", "1-2")
    lines = extracted_lines(project, "sources/report.pdf")
    assert out["total_lines"] == len(lines)
    assert PDF_PAGES[0][0] in json.dumps(out)


def test_a_deleted_pdf_leaves_no_extracted_text(tmp_path: Path) -> None:
    project = formats_project(tmp_path, ["report.pdf", "notes.docx"])
    run_build(project)
    (project.sources_dir / "report.pdf").unlink()
    report, _ = run_build(project)
    assert report.errors == []
    texts = [p.read_text(encoding="utf-8") for p in store_dir(project.root).glob("*.md")]
    assert len(texts) == 1 and not any("Restat gives Ninja" in t for t in texts)


def test_the_viewer_shows_a_pdf_as_its_extracted_lines_and_follows_its_citations(tmp_path: Path) -> None:
    from wikic.sources.scan import list_sources
    from wikic.web.model import read_source_lines
    from wikic.web.render import CITE_HREF

    project = formats_project(tmp_path, ["report.pdf"])
    run_build(project)
    files, _ = list_sources(project.root, SourcesConfig())
    pdf = next(f for f in files if f.path == "sources/report.pdf")
    assert read_source_lines(pdf) == extracted_lines(project, "sources/report.pdf")
    target = next(c[3] for c in citations(project) if c[0] == "sources/report.pdf")
    m = CITE_HREF.fullmatch(target)
    assert m is not None and m.group(1) == "sources/report.pdf"
