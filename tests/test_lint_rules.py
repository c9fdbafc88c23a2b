"""Each deterministic lint rule: a crafted wiki where it must fire, and one where
it must stay silent (false positives are what users of wiki linters complain
about most)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lintkit import SOURCE_A, base_pages, built, cite, crafted, fired, line_of, lint_json, page, write_index
from projects import NOTES, make_project, run_build
from rapidfuzz import fuzz, process

from wikic.lint.runner import RULES
from wikic.lint.topics import _row_scores, _scores


def test_the_crafted_base_wiki_is_clean(tmp_path: Path) -> None:
    code, findings = lint_json(crafted(tmp_path))
    assert (code, findings) == (0, [])


def test_a_freshly_built_wiki_has_no_error_level_findings(tmp_path: Path) -> None:
    project = built(tmp_path)
    code, findings = lint_json(project)
    assert code == 0
    assert [f for f in findings if f["level"] == "error"] == []


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_is_silent_on_a_freshly_built_wiki(tmp_path: Path, rule: str) -> None:
    assert fired(built(tmp_path), rule) == []


# --- broken-link -----------------------------------------------------------------
def test_broken_link_fires_with_line_and_suggestion(tmp_path: Path) -> None:
    pages = base_pages()
    pages["faiss.md"] = pages["faiss.md"].replace("[[hnsw|HNSW]]", "[[hnws|HNSW index]]")
    project = crafted(tmp_path, pages)
    found = fired(project, "broken-link")
    assert len(found) == 1
    f = found[0]
    assert (f["path"], f["line"], f["level"]) == (
        "wiki/faiss.md",
        line_of(project, "wiki/faiss.md", "[[hnws"),
        "error",
    )
    assert "[[hnws|HNSW index]]" in f["message"] and 'did you mean "HNSW" (hnsw.md)' in f["message"]


def test_broken_link_is_silent_for_slugs_titles_aliases_anchors_and_code(tmp_path: Path) -> None:
    pages = base_pages()
    pages["extra.md"] = page(
        "Extra",
        f"""
Links by slug [[hnsw]], by title [[Hnsw]] and [[FAISS]], by alias [[Hierarchical navigable small world]],
to a heading [[faiss#Sources|the sources]] and with a file name [[faiss.md]]. {cite(3)}

Not links: `[[nowhere]]` and ``[[nowhere either]]``. {cite(3)}

```
[[in a fence]]
```

    [[indented code]]
""",
    )
    project = crafted(tmp_path, pages)
    assert fired(project, "broken-link") == []
    # attachments are files, not pages: a link to one that exists is fine
    (project.wiki_dir / "assets").mkdir()
    (project.wiki_dir / "assets" / "diagram.png").write_bytes(b"\x89PNG")
    extra = project.wiki_dir / "extra.md"
    extra.write_text(extra.read_text() + "\n![[diagram.png]] and ![[missing.png]]\n")
    assert [f["message"] for f in fired(project, "broken-link")] == [
        "[[missing.png]] resolves to no page or alias"
    ]


# --- orphan-page -----------------------------------------------------------------
def test_orphan_page_fires_when_only_the_index_lists_a_page(tmp_path: Path) -> None:
    pages = base_pages()
    pages["lonely.md"] = page("Lonely", f"Chunks overlap by a few sentences, see [[faiss|FAISS]]. {cite(5)}")
    found = fired(crafted(tmp_path, pages), "orphan-page")
    assert [(f["path"], f["level"]) for f in found] == [("wiki/lonely.md", "warning")]


def test_orphan_page_is_silent_for_linked_pages_answers_and_self_links(tmp_path: Path) -> None:
    pages = base_pages()
    pages["answer.md"] = page("What is FAISS?", f"A library by Meta. {cite(3)}", type="answer")
    project = crafted(tmp_path, pages)
    assert fired(project, "orphan-page") == []
    pages["selfish.md"] = page("Selfish", f"About [[selfish|myself]] and [[faiss|FAISS]]. {cite(3)}")
    found = fired(crafted(tmp_path / "again", pages), "orphan-page")
    assert [f["path"] for f in found] == ["wiki/selfish.md"]  # a link to itself does not count


# --- missing-page ----------------------------------------------------------------
def _mentioning(n: int, term: str = "**Milvus**") -> dict[str, str]:
    pages = base_pages()
    for i in range(n):
        pages[f"p{i}.md"] = page(f"Page {i}", f"{term} is compared with [[faiss|FAISS]] here. {cite(3)}")
    return pages


def test_missing_page_fires_for_a_term_treated_as_a_topic_in_three_pages(tmp_path: Path) -> None:
    found = fired(crafted(tmp_path, _mentioning(3)), "missing-page")
    assert len(found) == 1
    assert found[0]["path"] == "wiki/p0.md" and '"Milvus"' in found[0]["message"]
    assert "3 pages" in found[0]["message"]
    # links to nothing count as well
    found = fired(crafted(tmp_path / "links", _mentioning(3, "[[Milvus]]")), "missing-page")
    assert len(found) == 1 and '"Milvus"' in found[0]["message"]


def test_missing_page_is_silent_below_the_threshold_and_for_terms_with_a_page(tmp_path: Path) -> None:
    assert fired(crafted(tmp_path, _mentioning(2)), "missing-page") == []
    # an alias of an existing page is not missing
    aliased = _mentioning(4, "**hierarchical navigable small worlds**")
    assert fired(crafted(tmp_path / "alias", aliased), "missing-page") == []
    # the threshold comes from schema.yaml
    assert len(fired(crafted(tmp_path / "two", _mentioning(2), threshold=2), "missing-page")) == 1


# --- duplicate-page --------------------------------------------------------------
def test_duplicate_page_fires_for_near_identical_titles(tmp_path: Path) -> None:
    pages = base_pages()
    pages["faiss-library.md"] = page("FAISS libary", f"[[faiss|FAISS]] again. {cite(3)}", aliases=["Faiss"])
    found = fired(crafted(tmp_path, pages), "duplicate-page")
    assert len(found) == 1
    assert found[0]["path"] == "wiki/faiss-library.md" and "(wiki/faiss.md, " in found[0]["message"]


def test_duplicate_page_is_silent_for_versions_sources_and_distinct_names(tmp_path: Path) -> None:
    pages = base_pages()
    pages["gpt-3.md"] = page("GPT-3", f"A model, unlike [[gpt-4|GPT-4]]. {cite(3)}")
    pages["gpt-4.md"] = page("GPT-4", f"A model, unlike [[gpt-3|GPT-3]]. {cite(3)}")
    pages["ws-2016.md"] = page("Windows Server 2016", f"See [[ws-2019|2019]]. {cite(3)}")
    pages["ws-2019.md"] = page("Windows Server 2019", f"See [[ws-2016|2016]]. {cite(3)}")
    pages["meeting-2024-01-01.md"] = page("Meeting notes of March", "x " + cite(3), type="source")
    pages["meeting-2024-01-02.md"] = page("Meeting notes of Marcj", "x " + cite(3), type="source")
    pages["hnsw-graphs.md"] = page("Graph indexes", f"Like [[hnsw|HNSW]]. {cite(4)}")
    assert fired(crafted(tmp_path, pages), "duplicate-page") == []


def test_duplicate_page_scores_small_sets_as_the_matrix_does() -> None:
    """Without numpy (a small set of names), the scores and their order are cdist's uint8
    matrix's: a score under the cutoff is no hit, one at or over it rounded half up."""
    np = pytest.importorskip("numpy")
    rng = random.Random(17)
    for _ in range(3000):
        alphabet = rng.choice(["ab ", "abcde ", "xyz-1 2"])
        rows = ["".join(rng.choices(alphabet, k=rng.randint(0, 14))) for _ in range(rng.randint(1, 6))]
        cols = ["".join(rng.choices(alphabet, k=rng.randint(0, 14))) for _ in range(rng.randint(1, 8))]
        cutoff = rng.choice([0, 1, 50, 70, 85, 90, 95, 100])
        matrix = process.cdist(rows, cols, scorer=fuzz.ratio, score_cutoff=cutoff, dtype=np.uint8)
        hits_r, hits_c = np.nonzero(matrix)
        cells = [(r, c, float(matrix[r, c])) for r, c in zip(hits_r.tolist(), hits_c.tolist(), strict=True)]
        assert list(_row_scores(rows, cols, cutoff)) == cells, (rows, cols, cutoff)
        assert list(_scores(rows, cols, cutoff)) == cells


# --- stale-page ------------------------------------------------------------------
def test_stale_page_fires_when_a_source_changes_or_disappears(tmp_path: Path) -> None:
    project = built(tmp_path)
    assert fired(project, "stale-page") == []
    tools = project.sources_dir / "tools.md"
    tools.write_text(tools.read_text().replace("written by Meta", "written by Facebook AI Research"))
    changed = fired(project, "stale-page")
    assert {f["path"] for f in changed} >= {"wiki/faiss.md", "wiki/tools-we-use.md"}
    assert all("sources/tools.md, which changed since the last build" in f["message"] for f in changed)
    assert "wiki/hnsw.md" not in {f["path"] for f in changed}
    (project.sources_dir / "rag.md").unlink()
    gone = [f for f in fired(project, "stale-page") if "rag.md" in f["message"]]
    assert gone and all("no longer exists" in f["message"] for f in gone)


def test_stale_page_is_silent_after_a_touch_or_a_whitespace_edit(tmp_path: Path) -> None:
    project = built(tmp_path)
    tools = project.sources_dir / "tools.md"
    tools.write_text(tools.read_text().replace("\n", "   \n"))  # trailing spaces: normalised away
    assert fired(project, "stale-page") == []
    crafted_project = crafted(tmp_path / "crafted")  # no build state: only missing sources can be told
    assert fired(crafted_project, "stale-page") == []


# --- hand-edit -------------------------------------------------------------------
def test_hand_edit_fires_for_a_page_changed_or_deleted_by_hand(tmp_path: Path) -> None:
    project = built(tmp_path)
    hnsw = project.wiki_dir / "hnsw.md"
    hnsw.write_text(hnsw.read_text() + "\nMy own note.\n")
    (project.wiki_dir / "chunking.md").unlink()
    found = {f["path"]: f["message"] for f in fired(project, "hand-edit")}
    assert set(found) == {"wiki/hnsw.md", "wiki/chunking.md"}
    assert "edited by hand" in found["wiki/hnsw.md"] and "deleted" in found["wiki/chunking.md"]


def test_hand_edit_is_silent_when_only_the_mtime_changed_or_wikic_did_not_write_it(tmp_path: Path) -> None:
    project = built(tmp_path)
    hnsw = project.wiki_dir / "hnsw.md"
    hnsw.write_bytes(hnsw.read_bytes())  # same bytes, new mtime
    (project.wiki_dir / "mine.md").write_text(page("Mine", f"[[hnsw|HNSW]] {cite(3)}", type="answer"))
    assert fired(project, "hand-edit") == []


# --- uncited-claim ---------------------------------------------------------------
def test_uncited_claim_fires_for_a_topic_paragraph_without_citation(tmp_path: Path) -> None:
    pages = base_pages()
    pages["faiss.md"] = pages["faiss.md"].replace(
        "\n## Sources", "\nIt is the fastest library in the world by far.\n\n## Sources"
    )
    project = crafted(tmp_path, pages)
    found = fired(project, "uncited-claim")
    assert [(f["path"], f["line"]) for f in found] == [
        ("wiki/faiss.md", line_of(project, "wiki/faiss.md", "fastest"))
    ]


def test_uncited_claim_is_silent_for_lists_short_lines_and_non_topic_pages(tmp_path: Path) -> None:
    pages = base_pages()
    pages["faiss.md"] = pages["faiss.md"].rstrip() + (
        "\n\nSee also [[hnsw|HNSW]].\n\n- a list item that makes a longer uncited statement\n"
        "\n## Linked from\n\n- [[hnsw|HNSW]]\n"
    )
    pages["answer.md"] = page(
        "An answer", "An answer page may say things without citing lines.", type="answer"
    )
    assert fired(crafted(tmp_path, pages), "uncited-claim") == []


# --- bad-citation ----------------------------------------------------------------
def test_bad_citation_fires_for_missing_sources_lines_and_unsupported_text(tmp_path: Path) -> None:
    pages = base_pages()
    pages["faiss.md"] = page(
        "FAISS",
        f"""
FAISS is a library for similarity search written by Meta. {cite(3, source="gone.md")}

FAISS is a library for similarity search written by Meta. {cite(3, 9)}

Penguins migrate across the frozen southern ocean every winter season. {cite(3)}

FAISS is a library. [a.md:4](../sources/a.md#L3)
""",
    )
    project = crafted(tmp_path, pages)
    found = fired(project, "bad-citation")
    messages = {f["line"]: f["message"] for f in found}
    first = line_of(project, "wiki/faiss.md", "gone.md")
    assert set(messages) == {first, first + 2, first + 4, first + 6}
    assert "sources/gone.md, which does not exist" in messages[first]
    assert "line 9 of sources/a.md, which has 5 lines" in messages[first + 2]
    assert "% of this paragraph's words" in messages[first + 4]
    assert "label and its link name different lines" in messages[first + 6]
    assert all(f["level"] == "error" for f in found)


def test_bad_citation_is_silent_for_paraphrase_with_other_word_forms(tmp_path: Path) -> None:
    pages = base_pages()
    pages["chunks.md"] = page(
        "Chunking",
        f"Overlapping chunks share a few sentences, so no facts are cut in "
        f"two, as [[faiss|FAISS]] users know. {cite(5)}",
    )
    pages["faiss.md"] = pages["faiss.md"].replace("HNSW]].", "HNSW]], see [[chunks|Chunking]].")
    assert fired(crafted(tmp_path, pages), "bad-citation") == []


def test_bad_citation_threshold_comes_from_schema(tmp_path: Path) -> None:
    project = crafted(tmp_path)
    text = project.schema_path.read_text() + "  citation_threshold: 100\n"
    project.schema_path.write_text(text.replace("lint:\n", "lint:\n", 1))
    assert [f["path"] for f in fired(project, "bad-citation")] == ["wiki/faiss.md", "wiki/hnsw.md"]


# --- frontmatter -----------------------------------------------------------------
def test_frontmatter_fires_for_missing_invalid_and_wrong_fields(tmp_path: Path) -> None:
    pages = base_pages()
    pages["bare.md"] = "# Bare\n\nNo front matter, see [[faiss|FAISS]].\n"
    pages["broken.md"] = "---\ntitle: Broken\ntype: [concept\n---\n\n# Broken\n\n[[faiss|FAISS]]\n"
    pages["odd.md"] = "---\ntitle: Odd\ntype: recipe\naliases: Oddity\n---\n\n# Odd\n\n[[faiss|FAISS]]\n"
    found = fired(crafted(tmp_path, pages), "frontmatter")
    by_path = {f["path"]: f for f in found}
    assert set(by_path) == {"wiki/bare.md", "wiki/broken.md", "wiki/odd.md"}
    assert "no front matter" in by_path["wiki/bare.md"]["message"]
    assert "invalid YAML" in by_path["wiki/broken.md"]["message"] and by_path["wiki/broken.md"]["line"] == 4
    odd = [f["message"] for f in found if f["path"] == "wiki/odd.md"]
    assert any("'recipe' is not a page type" in m for m in odd) and any("aliases" in m for m in odd)


def test_frontmatter_is_silent_for_extra_keys_and_answer_pages(tmp_path: Path) -> None:
    pages = base_pages()
    pages["answer.md"] = (
        "---\ntitle: 'Why: a question'\ntype: answer\ntags: [faq, search]\ncssclass: wide\n"
        "---\n\n# Why\n\nBecause [[faiss|FAISS]].\n"
    )
    assert fired(crafted(tmp_path, pages), "frontmatter") == []


# --- empty-page ------------------------------------------------------------------
def test_empty_page_fires_for_a_page_with_only_headings(tmp_path: Path) -> None:
    pages = base_pages()
    pages["empty.md"] = page("Empty", "## Nothing here")
    pages["listy.md"] = page("Listy", "## Sources\n\n- [[faiss|FAISS]]")
    found = fired(crafted(tmp_path, pages), "empty-page")
    assert {f["path"] for f in found} == {"wiki/empty.md", "wiki/listy.md"}


def test_empty_page_is_silent_for_short_pages_with_content(tmp_path: Path) -> None:
    pages = base_pages()
    pages["short.md"] = page("Short", "Tiny.")
    pages["src.md"] = page("A source", "- [[faiss|FAISS]]", type="source")
    assert fired(crafted(tmp_path, pages), "empty-page") == []


# --- index-drift -----------------------------------------------------------------
def test_index_drift_fires_for_unlisted_extra_and_renamed_pages(tmp_path: Path) -> None:
    project = crafted(tmp_path)
    (project.wiki_dir / "new.md").write_text(page("New", f"[[faiss|FAISS]] {cite(3)}"))
    index = project.wiki_dir / "index.md"
    index.write_text(
        index.read_text().replace("[[hnsw|HNSW]]", "[[hnsw|HNSW graphs]]") + "- [[ghost|Ghost]] — gone\n"
    )
    messages = [f["message"] for f in fired(project, "index-drift")]
    assert any("does not list wiki/new.md" in m for m in messages)
    assert any("[[ghost|Ghost]], which is no page" in m for m in messages)
    assert any("as 'HNSW graphs' but its title is 'HNSW'" in m for m in messages)
    assert any("says 3 pages; there are 4" in m for m in messages)
    (project.wiki_dir / "index.md").unlink()
    assert [f["message"] for f in fired(project, "index-drift")] == ["index.md is missing (4 pages exist)"]


def test_index_drift_is_silent_for_an_index_the_build_would_write(tmp_path: Path) -> None:
    pages = base_pages()
    pages["answer.md"] = page("An answer", f"By [[faiss|FAISS]]. {cite(3)}", type="answer")
    project = crafted(tmp_path, pages, index=False)
    write_index(project)
    assert fired(project, "index-drift") == []
    assert SOURCE_A  # the crafted source is what the pages cite


def test_titles_with_link_or_code_marks_are_listed_so_that_the_index_lints_clean(tmp_path: Path) -> None:
    """A title with brackets or backticks cannot be a wikilink's label as it is (`]]` ends the
    link, a backtick pairs with one in the description into code that hides it): the build
    writes it without them in index.md, source lists and backlinks, and lint reads it so."""
    notes = dict(NOTES)
    notes["grep.md"] = "# Using `grep` well\n\nThe `grep` tool searches **FAISS** notes line by line.\n"
    notes["odd.md"] = "# Notes on [[Chunking]] and ]] odd\n\nChunks of **FAISS** notes are short.\n"
    project = make_project(tmp_path / "p", notes)
    hand = page("Odd ]] close `x", f"[[faiss|FAISS]] is a library. {cite(5, source='tools.md')}", sources=[])
    (project.wiki_dir / "odd-close.md").write_text(hand)
    for step in ("built", "a description changed, index.md patched"):
        if step != "built":
            grep = project.sources_dir / "grep.md"
            grep.write_text(grep.read_text().replace("line by line", "with `-r` through folders"))
        report, _ = run_build(project)
        assert report.ok, report.errors
        code, findings = lint_json(project)
        assert [f for f in findings if f["level"] == "error"] == [], step
        index = (project.wiki_dir / "index.md").read_text()
        assert "- [[using-grep-well|Using grep well]] — The `grep` tool" in index, step
        assert "- [[notes-on-chunking-and-odd|Notes on Chunking and odd]] — " in index, step
        assert "- [[odd-close|Odd close x]] — " in index, step
    assert "# Notes on Chunking and ]] odd" in (project.wiki_dir / "notes-on-chunking-and-odd.md").read_text()
    assert "- [[odd-close|Odd close x]]" in (project.wiki_dir / "faiss.md").read_text(), "its backlink"
    faiss = (project.wiki_dir / "faiss.md").read_text()
    assert "[[using-grep-well|Using grep well]]" in faiss, "its sources"
