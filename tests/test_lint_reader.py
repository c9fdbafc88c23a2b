"""Reading a wiki (wikic/wiki/read.py, blocks.py, frontmatter.py): the quick line scanner
gives exactly markdown-it's blocks, the front matter shortcut exactly PyYAML's
mapping, and the graph agrees with a peer reader, obsidiantools."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from lintkit import built, cite, invoke, lint_json, page

from wikic.wiki.blocks import markdown_blocks, simple_blocks
from wikic.wiki.frontmatter import LOADER, render_front_matter, simple_yaml
from wikic.wiki.page import split_page
from wikic.wiki.read import read_wiki

LINES = [
    "",
    " ",
    "# Title",
    "## Sources",
    "###### Deep",
    "# ",
    "### Closed #",
    "#tag",
    "- item [[a|A]]",
    "- **bold** x",
    "- ",
    "-",
    "- - nested",
    "Plain text with [[link]].",
    "**Bold** start",
    "*emph*",
    "* star item",
    "+ plus",
    "1. one",
    "2) two",
    "2024 was",
    "1.5 million",
    "---",
    "===",
    "***",
    "> quote",
    "<!-- c -->",
    "<div>",
    "    indented",
    "  two spaces",
    "```",
    "~~~",
    "text `code [[x]]`",
    "| a | b |",
    "\u00a0",
    "a\u00a0b",
    "- item\u00a0",
    "[ref]: http://x",
    "\\# escaped",
    "Trailing  ",
    "(paren)",
    "- [[x|X]]: [a.md:1](../sources/a.md#L1)",
    "a <!-- c --> b",
]


@pytest.mark.parametrize("seed", range(4))
def test_the_line_scanner_gives_markdown_its_blocks(seed: int) -> None:
    rng = random.Random(seed)
    quick = 0
    for _ in range(2500):
        body = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 10))) + rng.choice(
            ["", "\n", "\n\n"]
        )
        scanned = simple_blocks(body)
        if scanned is not None:
            quick += 1
            assert scanned == markdown_blocks(body), repr(body)
    assert quick > 100  # the comparison covered the scanner, not only its refusals


def test_built_pages_take_the_quick_path_and_read_the_same(tmp_path: Path) -> None:
    project = built(tmp_path)
    for path in sorted(project.wiki_dir.glob("*.md")):
        body = split_page(path.read_text(), f"wiki/{path.name}").text
        body = body.split("\n---\n", 1)[-1] if body.startswith("---\n") else body
        scanned = simple_blocks(body)
        assert scanned is not None, path.name
        assert scanned == markdown_blocks(body), path.name


def _agrees(raw: str) -> int:
    """1 where the shortcut reads the front matter (as PyYAML does), 0 where it leaves it to PyYAML."""
    quick = simple_yaml(raw)
    if quick is None:
        return 0
    assert quick == yaml.load(raw, Loader=LOADER), raw
    return 1


def test_front_matter_shortcut_agrees_with_pyyaml() -> None:
    rng = random.Random(5)
    alphabet = "abXZ09 .,/()'+&-:#é_!\"[]{}*?|>%@`~=<"
    checked = 0
    for _ in range(20000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 8)))
        text = render_front_matter({"title": value, "type": "concept", "aliases": [value, "x"]})[4:-5]
        checked += _agrees(text) + _agrees(f"title: {value}\nsources:\n- {value}")
    assert checked > 1000


def test_single_quoted_front_matter_agrees_with_pyyaml() -> None:
    """The shortcut reads single-quoted scalars (a title with a colon): PyYAML's answer or none."""
    rng = random.Random(6)
    alphabet = "aZ9 :#'\"-[]{}\\\t\u00a0\u2028\ufeff\U0001f600é"
    checked = 0
    for _ in range(20000):
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        quoted = rng.choice([f"'{value}'", "'" + value.replace("'", "''") + "'", f"'{value}' ", f"'{value}"])
        checked += _agrees(f"title: {quoted}\nsources:\n- {quoted}\n- x")
    assert checked > 2000
    written = render_front_matter({"title": "Note 0: Gossip Routing", "sources": ["sources/it's.md"]})[4:-5]
    assert simple_yaml(written) == {"title": "Note 0: Gossip Routing", "sources": ["sources/it's.md"]}


def test_links_lines_and_code(tmp_path: Path) -> None:
    text = page(
        "A",
        f"""
See [[b|B]] and `[[in code]]`. {cite(3)}
Second line [[c]].

```
[[in fence]]
```

- [[d#Part|D]]
""",
    ).replace("\n", "\r\n")
    parsed = split_page(text, "wiki/a.md")
    links = [(link.target, link.anchor, link.label, link.line) for link in parsed.links]
    assert links == [("b", None, "B", 10), ("c", None, None, 11), ("d", "Part", "D", 17)]
    assert [c.line for c in parsed.citations] == [10]


def test_obsidiantools_reads_the_same_pages_links_and_orphans(tmp_path: Path) -> None:
    otools = pytest.importorskip("obsidiantools.api")
    project = built(tmp_path)
    (project.wiki_dir / "extra.md").write_text(
        page(
            "Extra",
            "Links [[faiss|FAISS]], [[hnsw#Sources|anchored]] and an embed ![[chunking]]; "
            "not `[[in code]]`.\n\n```\n[[in a fence]]\n```",
            type="answer",
        )
    )
    (project.wiki_dir / "lonely.md").write_text(
        page("Lonely", "Nothing links here.", type="answer", sources=[])
    )
    vault = otools.Vault(project.wiki_dir).connect().gather()
    wiki = read_wiki(project.root)

    notes = set(vault.md_file_index) - {"index", "log"}
    assert notes == set(wiki.pages)
    for slug, parsed in wiki.pages.items():
        theirs = set(vault.wikilinks_index[slug]) | set(vault.embedded_files_index.get(slug, []))
        assert {link.target for link in parsed.links} == theirs, slug
        assert wiki.outlinks(parsed) == theirs, slug  # every link resolves, for both readers
    assert vault.nonexistent_notes == []
    ours = wiki.inbound()
    embedders = {
        s: {n for n, embeds in vault.embedded_files_index.items() if s in embeds} for s in wiki.pages
    }
    theirs = {s: (set(vault.get_backlinks(s)) | embedders[s]) - {"index", s} for s in wiki.pages}
    assert theirs == ours  # obsidiantools lists embeds apart; Obsidian counts them as links, as wikic does
    orphans_theirs = {s for s in wiki.pages if not theirs[s]}
    assert orphans_theirs == {"extra", "lonely"}
    _, findings = lint_json(project, "--rule", "orphan-page", "--rule", "broken-link")
    assert findings == []  # answers may be orphans; nothing is broken
    (project.wiki_dir / "lonely.md").write_text(page("Lonely", "Nothing links here.", sources=[]))
    _, findings = lint_json(project, "--rule", "orphan-page")
    assert [f["path"] for f in findings] == ["wiki/lonely.md"]
    assert invoke(project, "lint", "--rule", "orphan-page").exit_code == 0
