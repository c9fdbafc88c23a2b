"""One front-matter parser: the build, lint and ask read tricky front matter the
same way (they had two parsers with different rules before)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from wikic.ask.context import load_pages
from wikic.wiki.frontmatter import (
    NOT_A_MAPPING,
    NOT_CLOSED,
    _quick_front_matter,
    render_front_matter,
    simple_yaml,
    split_front_matter,
)
from wikic.wiki.page import split_page
from wikic.wiki.read import read_wiki

# name: (text, meta, error (a part of it) or None, has front matter, body, body line)
CASES: dict[str, tuple[str, dict[str, Any], str | None, bool, str, int]] = {
    "none": ("# Cats\n\nCats sleep.\n", {}, None, False, "# Cats\n\nCats sleep.\n", 1),
    "simple": (
        "---\ntitle: Cats\ntype: concept\n---\nCats sleep.\n",
        {"title": "Cats", "type": "concept"},
        None,
        True,
        "Cats sleep.\n",
        5,
    ),
    "invalid yaml": (
        "---\ntitle: [unclosed\n---\n# Cats\n\nCats sleep.\n",
        {},
        "line 3: invalid YAML",
        True,
        "# Cats\n\nCats sleep.\n",
        4,
    ),
    "not a mapping": ("---\n- a\n- b\n---\nCats sleep.\n", {}, NOT_A_MAPPING, True, "Cats sleep.\n", 5),
    "a scalar": ("---\njust words\n---\nCats sleep.\n", {}, NOT_A_MAPPING, True, "Cats sleep.\n", 4),
    "crlf": (
        "---\r\ntitle: Cats\r\naliases:\r\n- Felines\r\n---\r\n# Cats\r\n\r\nCats sleep.\r\n",
        {"title": "Cats", "aliases": ["Felines"]},
        None,
        True,
        "# Cats\n\nCats sleep.\n",
        6,
    ),
    "--- in the body": (
        "---\ntitle: Cats\n---\nIntro.\n\n---\n\nmore: x\n---\n",
        {"title": "Cats"},
        None,
        True,
        "Intro.\n\n---\n\nmore: x\n---\n",
        4,
    ),
    "unicode": (
        "---\ntitle: Café — naïve 日本\naliases:\n- Ça va\n---\nÉté.\n",
        {"title": "Café — naïve 日本", "aliases": ["Ça va"]},
        None,
        True,
        "Été.\n",
        6,
    ),
    "empty": ("---\n---\nCats sleep.\n", {}, None, True, "Cats sleep.\n", 3),
    "blank": ("---\n\n---\nCats sleep.\n", {}, None, True, "Cats sleep.\n", 4),
    "not closed": (
        "---\ntitle: Cats\nCats sleep.\n",
        {},
        NOT_CLOSED,
        True,
        "---\ntitle: Cats\nCats sleep.\n",
        1,
    ),
    "closed at the end": ("---\ntitle: Cats\n---", {"title": "Cats"}, None, True, "", 3),
    "typed values": (
        "---\ntitle: 'yes'\ncount: 3\nok: true\n---\nx\n",
        {"title": "yes", "count": 3, "ok": True},
        None,
        True,
        "x\n",
        6,
    ),
    "dashes not at the start": (
        "\n---\ntitle: Cats\n---\nx\n",
        {},
        None,
        False,
        "\n---\ntitle: Cats\n---\nx\n",
        1,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_one_parser_on_tricky_front_matter(name: str) -> None:
    text, meta, error, present, body, body_line = CASES[name]
    fm = split_front_matter(text)
    assert fm.meta == meta
    assert (fm.error is None) if error is None else (fm.error is not None and error in fm.error)
    assert (fm.present, fm.body, fm.body_line) == (present, body, body_line)
    page = split_page(text, "wiki/cats.md")
    assert (page.meta, page.meta_error, page.body, page.body_line) == (
        fm.meta,
        fm.error,
        fm.body,
        fm.body_line,
    )
    assert "\r" not in page.text


def test_the_shortcut_and_pyyaml_agree_on_the_cases() -> None:
    for text, *_ in CASES.values():
        fm_text = text.replace("\r\n", "\n")
        if not fm_text.startswith("---\n") or fm_text.find("\n---", 3) == -1:
            continue
        block = fm_text[4 : fm_text.find("\n---", 3)]
        quick = simple_yaml(block)
        if quick is not None:
            assert quick == (yaml.safe_load(block) or {}), block


def test_build_lint_and_ask_read_the_same_front_matter(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for i, (text, *_) in enumerate(CASES.values()):
        (wiki / f"page-{i}.md").write_bytes(text.encode("utf-8"))
    linted = read_wiki(tmp_path).pages
    asked = {p.slug: p for p in load_pages(wiki)}
    for i, (_, meta, _, _, body, _) in enumerate(CASES.values()):
        slug = f"page-{i}"
        built = split_page((wiki / f"{slug}.md").read_text(encoding="utf-8"))  # as the build reads a page
        assert linted[slug].meta == asked[slug].meta == built.meta == meta, slug
        assert linted[slug].body == asked[slug].body == built.body == body, slug
        assert linted[slug].title == asked[slug].title, slug


_TOKENS = [
    "Note", "0:", "Gossip", "it's", "yes", "No", "null", "O'Brien", "é", "a-b", "(x)", "#1", "a#b", ":", "x:",
    "–", "1977", "'", "''", "-", "?", "&", "*", "!", "%", "@", "`", "[a]", "{b}", "sources/s01.md", "~", "=",
    "<<", ".5", "\u00a0", "Ünïcödé", "漢字", "\U0001d400", "|", ">", ",", "a,b", "true:", "  ", "\t", "\n",
]  # fmt: skip


def test_front_matter_written_without_the_representer_is_pyyamls() -> None:
    """The quick writer (plain and single-quoted strings, lists of them) writes what yaml.dump
    does, with PyYAML's emitter and libyaml's, or leaves the page to them."""
    rng = random.Random(3)

    def text() -> str:
        return rng.choice(["", " ", ": "]).join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 5)))

    quick = 0
    for _ in range(6000):
        for meta in ({"title": text()}, {"sources": [text(), text()], "type": "concept"}):
            written = _quick_front_matter(meta)
            if written is not None:
                quick += 1
                for dumper in (yaml.SafeDumper, yaml.CSafeDumper):
                    dumped = yaml.dump(meta, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)
                    assert written == f"---\n{dumped}---\n", meta
    assert quick > 1500
    long = {"title": "a: " + "b " * 600, "sources": ["x" * 950]}
    assert _quick_front_matter(long) is None
    assert (
        render_front_matter(long)
        == f"---\n{yaml.dump(long, sort_keys=False, allow_unicode=True, width=1000)}---\n"
    )


def test_a_long_list_of_paths_is_written_as_pyyaml_writes_it() -> None:
    """A topic page's thousands of sources, written in one pass where every item is a plain
    path: the same bytes as yaml.dump, and PyYAML's answer for a list with any other item."""
    paths = [f"sources/s{n:05d}.md" for n in range(3000)] + ["sources/a-b_c/d.e", "x/", "Notes/2024.md"]
    others = [
        "sources/a\nsources/b",
        "sources/ä.md",
        "sources/a b.md",
        "yes",
        "1/2",
        "/etc",
        "s" + "/x" * 500,
    ]
    for extra in [None, *others]:
        meta = {"title": "Chunking", "sources": paths + ([extra] if extra is not None else [])}
        for dumper in (yaml.SafeDumper, yaml.CSafeDumper):
            dumped = yaml.dump(meta, Dumper=dumper, sort_keys=False, allow_unicode=True, width=1000)
            assert render_front_matter(meta) == f"---\n{dumped}---\n", extra
