"""One reading of a page's [[links]] for lint, the viewer and the build's backlinks: none inside
code spans, code blocks or raw HTML (Page.link_targets)."""

from __future__ import annotations

from pathlib import Path

from projects import run_build
from test_web_render import LINK_BODIES
from webkit import built_project

from wikic.build.assemble import foreign_entry
from wikic.project import Project
from wikic.web.model import Model
from wikic.wiki.page import split_page
from wikic.wiki.read import read_wiki


def test_the_build_lint_and_the_viewer_read_the_same_links() -> None:
    for body in LINK_BODIES:
        text = "---\ntitle: T\n---\n\n" + body
        page = split_page(text, "wiki/t.md")
        lints = sorted({link.target for link in page.links if link.target})
        assert page.link_targets() == lints, body
        assert sorted(foreign_entry("t", text).links) == lints, body


HAND_MADE = """---
title: Notes by hand
type: note
---

# Notes by hand

Inline `[[hnsw]]` is code, and so is this block:

```
[[faiss]]
```

But [[chunking]] is a link.
"""


def test_a_hand_made_pages_links_in_code_give_no_backlinks(tmp_path: Path) -> None:
    project: Project = built_project(tmp_path / "p")
    (project.wiki_dir / "notes-by-hand.md").write_text(HAND_MADE)
    run_build(project)
    linked_from = {
        name: (project.wiki_dir / f"{name}.md").read_text().partition("## Linked from")[2]
        for name in ("hnsw", "faiss", "chunking")
    }
    assert "notes-by-hand" in linked_from["chunking"]
    assert "notes-by-hand" not in linked_from["hnsw"]
    assert "notes-by-hand" not in linked_from["faiss"]
    wiki = read_wiki(project.root, project.wiki_dir)  # the viewer's and lint's link graphs agree
    model = Model.load(project, lint=False, wiki=wiki)
    assert model.outbound["notes-by-hand"] == {"chunking"}
    assert wiki.outlinks(wiki.pages["notes-by-hand"]) == {"chunking"}  # lint's link graph
    # The viewer's links and backlinks, made page by page when first asked (then all at once,
    # past a few pages), are lint's, page for page.
    assert {slug: model.inbound[slug] for slug in wiki.pages} == wiki.inbound()
    out = {slug: wiki.outlinks(page) - {slug} for slug, page in wiki.pages.items()}
    assert {slug: model.outbound[slug] for slug in wiki.pages} == out


def test_a_hand_made_pages_links_by_title_or_any_case_give_backlinks_as_lint_has_them(tmp_path: Path) -> None:
    project: Project = built_project(tmp_path / "p")
    wiki = read_wiki(project.root, project.wiki_dir)
    title = wiki.pages["chunking"].title
    (project.wiki_dir / "by-title.md").write_text(
        f"---\ntitle: By title\ntype: note\n---\n\n# By title\n\nSee [[{title.upper()}]], [[FAISS]], "
        "[[hnsw.md|the index]] and [[no such page]].\n"
    )
    run_build(project)
    wiki = read_wiki(project.root, project.wiki_dir)
    linked = wiki.outlinks(wiki.pages["by-title"])  # lint's reading: slug any case, title, file name
    assert linked == {"chunking", "faiss", "hnsw"}
    for slug in linked:
        assert "by-title" in (project.wiki_dir / f"{slug}.md").read_text().partition("## Linked from")[2]
