"""What an edit's assembly and closing lint look up, found without a pass over the whole wiki:
a source page's title by bisection of the plan's sources (those read anew come first, out of
path order), the names autolink asks state.db for read in one query per page, and a block's
bad-citation key, which must still tell apart every block whose findings could differ."""

from __future__ import annotations

import hashlib
from typing import Any, cast

from wikic.build.keptplan import Pages, RowsOf
from wikic.build.linker import Linker
from wikic.build.lookups import Rows, Sources, SourceSlugs
from wikic.build.sourceplan import SourceInfo
from wikic.lint.blocks import Keys, key
from wikic.lint.entries import Seen
from wikic.wiki.blocks import read_body


def _plan(paths: list[str]) -> Pages:
    pages = Pages([f"source:{p}" for p in paths], {}, set(), RowsOf({}))
    pages.slugs = {f"source:{p}": p.removeprefix("sources/").removesuffix(".md") for p in paths}
    pages.sources = [SourceInfo(p, f"Title of {p}", None, None) for p in paths]
    return pages


def test_a_source_pages_title_is_its_own_in_any_order_the_plan_lists_them() -> None:
    ordered = [f"sources/s{n:03d}.md" for n in range(200)]
    # the sources read anew come first (intake.py), the rest in path order
    anew = ["sources/s150.md", "sources/s007.md", "sources/zz.md"]
    paths = anew + [p for p in ordered if p not in anew]
    slugs = SourceSlugs(_plan(paths))
    for path in paths:
        assert slugs.title(path) == f"Title of {path}"
        assert slugs.get(path) == path.removeprefix("sources/").removesuffix(".md")
    assert slugs.get("sources/none.md") is None


class _Read:
    def __init__(self, path: str) -> None:
        self.path = path


def test_the_sources_read_are_found_by_path_in_any_order_the_intake_gives_them() -> None:
    ordered = [f"sources/s{n:03d}.md" for n in range(200)]
    anew = ["sources/s150.md", "sources/s007.md", "sources/zz.md"]
    reads = [_Read(p) for p in anew + [p for p in ordered if p not in anew]]
    found = Sources(cast(Any, reads))
    for read in sorted(reads, key=lambda r: r.path):
        assert found[read.path] is read


class _Counted:
    """The names of a wiki as state.db gives them, counting the queries."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names, self.queries = names, 0

    def fetch(self, keys: list[str]) -> dict[str, str]:
        self.queries += 1
        return {k: self.names[k] for k in keys if k in self.names}

    def every(self) -> dict[str, str]:
        self.queries += 1
        return dict(self.names)


NAMES = {"vector database": "vector-database", "hnsw": "hnsw", "faiss": "faiss", "rag": "rag"}
TEXTS = [
    "A vector database answers queries; HNSW is its index, built by FAISS.",
    "RAG reads a vector database first, and [[hnsw|HNSW]] again, then Faiss.",
    "Nothing here names a page at all, not even vectors.",
]


def _linked(names: Any, prefetch: bool) -> list[str]:
    linker = Linker.made(names, {slug: slug for slug in NAMES.values()}, {k[:3] for k in NAMES})
    if prefetch:
        linker.prefetch(TEXTS)
    linked: set[str] = set()
    return [linker.autolink(text, "rag", linked) for text in TEXTS]


def test_names_read_at_once_link_as_names_read_one_by_one() -> None:
    plain = _linked(dict(NAMES), False)
    one_by_one, at_once = _Counted(NAMES), _Counted(NAMES)
    assert _linked(Rows(one_by_one.fetch, one_by_one.every), False) == plain
    assert _linked(Rows(at_once.fetch, at_once.every), True) == plain
    assert "[[vector-database|vector database]]" in plain[0] and "rag" not in plain[1].split("[[")[1]
    assert at_once.queries == 1 < one_by_one.queries


class _Seen:
    settings = "settings"

    def source_repr(self, rel: str) -> str:
        return repr((rel, (10, 1), None))


def _keys(body: str) -> list[str]:
    seen = cast(Seen, _Seen())
    return [key(seen, b, True) for b in read_body(body, 0).blocks if b.citations]


def test_a_blocks_key_tells_apart_every_citation_it_reads() -> None:
    cite = "[a.md:1](../sources/a.md#L1)"
    paragraphs = [
        f"Chunks overlap. {cite}\n",
        "Chunks overlap. [a.md:2](../sources/a.md#L1)\n",  # the label says another line
        "Chunks overlap. [b.md:1](../sources/a.md#L1)\n",  # another file
        "Chunks overlap. [a.md:1](../sources/a.md#L1-L2)\n",
        f"Chunks overlap.\n{cite}\n",  # the citation a line lower
    ]
    keys = [k for body in paragraphs for k in _keys(body)]
    assert len(keys) == len(set(keys)) == len(paragraphs)
    # a heading's text is kept without its marks: these two read alike, their citations do not
    headings = ["# Chunks [a.md:1](../sources/a.md#L1)\n", "# Chunks [a*.md:1](../sources/a.md#L1)\n"]
    blocks = [b for body in headings for b in read_body(body, 0).blocks]
    assert blocks[0].text == blocks[1].text
    assert blocks[0].citations[0].consistent != blocks[1].citations[0].consistent
    heading_keys = [k for body in headings for k in _keys(body)]
    assert len(set(heading_keys)) == 2
    assert _keys(paragraphs[0]) == _keys(paragraphs[0]), "the same block, the same key"


def test_a_blocks_key_is_the_one_the_last_lint_stored() -> None:
    """The keys state.db holds from the last lint are found again: each part after its length,
    joined (settings, prose or not, the text, a heading's citations, each source's part)."""
    seen = cast(Seen, _Seen())

    def made(*parts: str) -> str:
        return hashlib.sha256("".join(f"{len(p)}:{p}" for p in parts).encode()).hexdigest()[:16]

    cite_a, cite_b = "[a.md:1](../sources/a.md#L1)", "[b.md:2](../sources/b.md#L2)"
    body = f"# Top {cite_b}\n\nChunks {cite_b} overlap {cite_a}.\n\n- [[x|X]]: {cite_a}\n"
    top, para, item = read_body(body, 0).blocks
    a, b = (repr((f"sources/{n}.md", (10, 1), None)) for n in "ab")
    keys = Keys(seen)
    assert [keys(top, False), keys(para, True), keys(item, False)] == [
        made("settings", "", top.text, cite_b, "0 True 2 2", b),
        made("settings", "prose", para.text, a, b),
        made("settings", "", item.text, a),
    ]
    assert key(seen, para, True) == keys(para, True)
