"""The build's closing lint summary kept as counts and patched from what the build changed
(lint/totals.py): after each kind of edit it equals a full lint's counts; it is patched (a few
pages read, and index.md where the build rewrote it) only after an edit that kept wiki/ as the
last lint saw it, and counted again from the cache whenever the kept counts cannot be trusted
(a hand edit, other settings, a build killed before its lint, --force)."""

from __future__ import annotations

import json
import marshal
import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from projects import HAND_PAGES, NOTES, Counting, make_project

from wikic.build import pipeline
from wikic.build.progress import Progress
from wikic.build.report import Report
from wikic.build.run import BuildOptions, build
from wikic.lint import came as came_module
from wikic.lint import names as names_module
from wikic.lint import totals
from wikic.lint.names import KeptNames
from wikic.lint.runner import lint, lint_cached
from wikic.project import Project
from wikic.state import Meta, State
from wikic.wiki.page import Page

# hand-made pages citing a line the edits below reword: the first loses the support of its
# line, the second says the same but turns the rule off
CITING = {
    "overlap-notes.md": """---
title: Overlap notes
type: concept
---

# Overlap notes

Chunks overlap by a few sentences so that no fact is cut. [tools.md:9](../sources/tools.md#L9)

See [[My notes]].
""",
    "quiet-notes.md": """---
title: Quiet notes
type: concept
---

<!-- wikic-lint: disable=bad-citation -->
# Quiet notes

Chunks overlap by a few sentences so that no fact is cut. [tools.md:9](../sources/tools.md#L9)

See [[Overlap notes]].
""",
}
# an edit in a row of them: what it is, the edit, the summary's way, what a full lint finds of a rule
Step = tuple[str, Callable[[Project], None], str, tuple[str, int]]
OVERLAP = "Chunks overlap by a few sentences so that no fact is cut in two."
REWORDED = "Pieces share their edges, whence nothing important is lost."


def _build(project: Project, force: bool = False) -> Report:
    report = build(project, BuildOptions(force=force), backend_factory=lambda schema: Counting())
    assert report.ok, report.errors
    return report


def _kept(project: Project) -> dict[str, Any]:
    with State.open(project.state_path) as state:
        return dict(json.loads(state.get_meta(Meta.LINT_TOTALS) or "{}"))


def _source(name: str, find: str, put: str) -> Callable[[Project], None]:
    return _rewrite(lambda p: p.sources_dir / name, find, put)


def _page(name: str, find: str, put: str) -> Callable[[Project], None]:
    return _rewrite(lambda p: p.wiki_dir / name, find, put)


def _rewrite(where: Callable[[Project], Path], find: str, put: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        path = where(p)
        text = path.read_text(encoding="utf-8")
        assert find in text
        path.write_text(text.replace(find, put, 1), encoding="utf-8")

    return edit


def _moved(name: str, to: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        (p.sources_dir / to).parent.mkdir(parents=True, exist_ok=True)
        (p.sources_dir / name).rename(p.sources_dir / to)

    return edit


def _new_source(p: Project) -> None:  # a page named by words other pages link to already
    (p.sources_dir / "pq.md").write_text(
        "# Product quantization\n\n## Product quantization\n\n"
        "Product quantization compresses embeddings into short codes for FAISS.\n"
    )


def _threshold(p: Project) -> None:
    path = p.root / "schema.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "lint:\n  citation_threshold: 90\n", encoding="utf-8")


def _project(root: Path) -> Project:
    project = make_project(root, dict(NOTES))
    _build(project)
    for name, text in {**HAND_PAGES, **CITING}.items():
        (project.wiki_dir / name).write_text(text, encoding="utf-8")
    report = _build(project)
    assert report.lint == lint(project).counts()
    return project


# (what is edited; then a build's summary: "patched" from the kept counts, or "counted")
STEPS: list[tuple[str, Callable[[Project], None], str]] = [
    ("a cited line reworded", _source("tools.md", OVERLAP, REWORDED), "patched"),
    ("a source's later sentence", _source("vectors.md", "It trades memory", "It spends memory"), "patched"),
    ("the cited line back", _source("tools.md", REWORDED, OVERLAP), "patched"),
    ("a new link target", _new_source, "patched"),  # a source page and a topic page new (lint/came.py)
    ("then a source edit", _source("vectors.md", "It spends memory", "It trades memory"), "patched"),
    # a page not the build's deleted (build/handmade.py): patched as a page gone
    ("a hand-made page deleted", lambda p: (p.wiki_dir / "third-notes.md").unlink(), "patched"),
    ("a built page deleted by hand", lambda p: (p.wiki_dir / "hnsw.md").unlink(), "patched"),  # written again
    ("a renamed topic", _source("tools.md", "## FAISS", "## Faiss library"), "patched"),  # a page new
    ("a cited line reworded again", _source("tools.md", OVERLAP, REWORDED), "patched"),
    # a page of the build's edited by hand: kept and reported (build/handmade.py), and read again
    ("a hand edit of a built page", _page("hnsw.md", "\n\n", "\n\nA line of mine.\n\n"), "patched"),
    ("a description, so index.md", _source("rag.md", "RAG retrieves", "RAG fetches"), "patched"),
    ("a hand edit of a hand-made page", _page("my-notes.md", "twice.", "twice. See [[Nowhere]]."), "patched"),
    (
        "log.md edited by hand",
        _page("log.md", "# Build log", "# Build log\n\nMine."),
        "patched",
    ),  # not linted
    ("a lint setting", _threshold, "counted"),
    ("the cited line back again", _source("tools.md", REWORDED, OVERLAP), "patched"),
]


def test_the_summary_patched_or_counted_equals_a_full_lint_after_each_kind_of_edit(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    before = lint(project).counts()
    for what, edit, how in STEPS:
        edit(project)
        report, _ = _built_and_checked(project, tmp_path, what, how, 6)
        if what.startswith("a cited line"):
            assert report.lint != before, f"{what}: the rewording changes what lint finds"
        before = report.lint


def test_a_patched_summary_counts_the_findings_of_the_pages_read_again(tmp_path: Path) -> None:
    """The counts move with what the pages read again say (not only kept as they were)."""
    project = _project(tmp_path / "p")
    counts = _kept(project)["counts"]
    _source("tools.md", OVERLAP, REWORDED)(project)
    report = _build(project)
    kept = _kept(project)
    assert kept["how"] == "patched"
    assert kept["counts"]["bad-citation"] == counts["bad-citation"] + 1  # quiet-notes.md's is off
    assert report.lint == lint(project).counts()
    assert {f.path for f in lint(project).findings if f.rule == "bad-citation"} >= {"wiki/overlap-notes.md"}


def test_a_build_killed_before_its_lint_leaves_no_counts_to_patch(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    totals.take(project)  # a build that took them, and was killed before writing anything
    assert _kept(project) == {}
    _source("vectors.md", "It trades memory", "It spends memory")(project)
    report = _build(project)
    assert _kept(project)["how"] == "counted"
    assert report.lint == lint(project).counts()
    # killed between writing the wiki and its lint: the pipeline ran, the summary did not
    totals.take(project)
    _source("tools.md", OVERLAP, REWORDED)(project)
    pipeline.build(project, BuildOptions(), Progress(quiet=True), lambda schema: Counting())
    _source("vectors.md", "It spends memory", "It trades memory")(project)
    report = _build(project)
    assert _kept(project)["how"] == "counted"
    assert report.lint == lint(project).counts()


def test_the_kept_counts_are_patched_only_while_they_hold(tmp_path: Path) -> None:
    """A lint that stores its cache (`wikic lint`) keeps its own counts in place of those made
    with the old one, as a build's summary keeps them: the next edit's summary patches them;
    --force counts again; the next edit's summary is patched once more."""
    project = _project(tmp_path / "p")
    lint_result = lint(project)
    from lintkit import lint_json

    assert lint_json(project)[1] == [f.to_json() for f in lint_result.findings]
    _source("tools.md", OVERLAP, REWORDED)(project)
    report = _build(project)
    assert report.lint == lint(project).counts()
    _page("overlap-notes.md", "See [[My notes]].", "See [[My notes]] and [[Nowhere]].")(project)
    assert lint_json(project)[1] == [f.to_json() for f in lint(project).findings]  # stores its cache
    assert _kept(project)["how"] == "counted", "the lint's own counts, in place of those it let go"
    _source("tools.md", REWORDED, OVERLAP)(project)
    report = _build(project)
    assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts())
    assert _build(project, force=True).lint == lint(project).counts()
    assert _kept(project)["how"] == "counted"
    _source("tools.md", OVERLAP, REWORDED)(project)
    report = _build(project)
    assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts())


def test_counts_kept_by_wikic_lint_before_a_source_edit_is_built_are_patched_by_the_build(
    tmp_path: Path,
) -> None:
    """`wikic lint` between a source edit and its build finds the pages citing the source
    stale; the build reads the source again and patches those pages' findings out of the
    counts the lint kept."""
    from lintkit import lint_json

    project = _project(tmp_path / "p")
    _source("tools.md", OVERLAP, REWORDED)(project)
    assert any(f["rule"] == "stale-page" for f in lint_json(project)[1])
    assert _kept(project)["how"] == "counted"
    report = _build(project)
    assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts())
    assert not any(f.rule == "stale-page" for f in lint(project).findings)


@pytest.mark.parametrize("stale", ["wiki", "settings", "wiki, a hand-made page edited"])
def test_kept_counts_of_another_wiki_or_settings_are_never_patched(tmp_path: Path, stale: str) -> None:
    """Counts kept for another wiki/ (as an older wikic, or a lint between, left them) or
    made with other settings are counted again, not patched; so are they where a page not
    the build's changed since the build left wiki/ as another."""
    project = _project(tmp_path / "p")
    kept = _kept(project)
    kept[stale.partition(",")[0]] = "0" * 64
    kept["counts"] = {"bad-citation": 40}  # what patching them would show
    with State.open(project.state_path) as state:
        state.set_meta(Meta.LINT_TOTALS, json.dumps(kept))
    if "hand" in stale:
        _page("my-notes.md", "twice.", "twice. See [[Nowhere]].")(project)
    else:
        _source("tools.md", OVERLAP, REWORDED)(project)
    report = _build(project)
    assert report.lint == lint(project).counts()
    assert _kept(project)["how"] == "counted"


def test_a_block_checked_before_keeps_its_findings_where_it_moved(tmp_path: Path) -> None:
    """bad-citation by block (lint/blocks.py): a block whose text and cited sources are as
    they were is not checked again, and its findings move with it."""
    project = _project(tmp_path / "p")
    two = CITING["overlap-notes.md"].replace(
        "See [[My notes]].", "HNSW trades memory for fast search. [vectors.md:8](../sources/vectors.md#L8)"
    )
    (project.wiki_dir / "overlap-notes.md").write_text(two, encoding="utf-8")
    _build(project)
    _source("tools.md", OVERLAP, REWORDED)(project)  # its first block's citation goes bad
    report = _build(project)
    assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts())
    _page("overlap-notes.md", "# Overlap notes\n", "# Overlap notes\n\nA line of mine.\n\nAnd one more.\n")(
        project
    )
    _build(project)  # a hand edit: counted, the blocks kept as they were
    _source("vectors.md", "It trades memory", "It spends memory")(project)  # its second block's
    report = _build(project)
    full = lint(project)
    assert (_kept(project)["how"], report.lint) == ("patched", full.counts())
    assert _kept(project)["reused"] >= 1, "the first block's findings, as kept"
    with State.open(project.state_path) as state:
        cached = lint_cached(project, state, store=False)
    assert [f.to_json() for f in cached.findings] == [f.to_json() for f in full.findings]
    moved = [f for f in full.findings if f.rule == "bad-citation" and f.path == "wiki/overlap-notes.md"]
    assert moved and moved[0].line == 12, "the first block's finding, four lines down"


def test_a_page_read_again_by_every_lint_is_counted_again_by_every_patch(tmp_path: Path) -> None:
    """A page the cache keeps no row of (unreadable here; a saved answer, whose staleness
    depends on other pages) is read and checked again each time, its old findings kept apart."""
    project = _project(tmp_path / "p")
    (project.wiki_dir / "broken.md").write_bytes(b"# Broken\n\nNot UTF-8: \xff\xfe.\n")
    _source("vectors.md", "It trades memory", "It spends memory")(project)
    report = _build(project)
    assert (_kept(project)["how"], report.lint) == ("counted", lint(project).counts())
    assert list(_kept(project)["always"]) == ["wiki/broken.md"]
    assert any(f.path == "wiki/broken.md" for f in lint(project).findings)
    for find, put in [(OVERLAP, REWORDED), (REWORDED, OVERLAP)]:
        _source("tools.md", find, put)(project)
        report = _build(project)
        assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts())


def test_index_md_rewritten_with_findings_of_its_own_is_patched_exactly(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    # a page the build cannot read, so index.md cannot list it: it neither lists it nor counts it
    (project.wiki_dir / "broken.md").write_bytes(b"# Broken\n\nNot UTF-8: \xff\xfe.\n")
    report = _build(project)
    assert (_kept(project)["how"], report.lint) == ("counted", lint(project).counts())
    assert _kept(project)["index"] == {"index-drift": 2}
    for find, put in [("RAG retrieves", "RAG fetches"), ("RAG fetches", "RAG retrieves")]:
        _source("rag.md", find, put)(project)
        report = _build(project)
        assert "wiki/index.md" in report.written, "the description changed"
        assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts())
        assert _kept(project)["index"] == {"index-drift": 2}
        assert [f.rule for f in lint(project).findings if f.path == "wiki/index.md"] == ["index-drift"] * 2


def test_pages_whose_links_or_mentions_changed_are_patched_exactly(tmp_path: Path) -> None:
    """A source edit that makes its pages link to a page or stop (an orphan no longer, then
    again) or name other things: the counts across pages patched from those pages' before and
    after, and what the cached lint patches from next kept in step with a full lint."""
    project = _project(tmp_path / "p")
    orphans = ["wiki/quiet-notes.md", "wiki/third-notes.md"]
    steps = [
        (
            "a page now links to an orphan",
            _source("rag.md", "Documents are split", "Third notes say documents are split"),
        ),
        ("and no longer", _source("rag.md", "Third notes say documents are split", "Documents are split")),
        (
            "a page names another thing",
            _source("vectors.md", "It trades memory", "Graph indexes trade memory"),
        ),
        (
            "a page names a missing one",
            _source("vectors.md", "Graph indexes trade memory", "The IVF index trades memory"),
        ),
        (
            "and links to the orphan again",
            _source("rag.md", "Documents are split", "Third notes say documents are split"),
        ),
    ]
    seen = []
    for what, edit in steps:
        edit(project)
        report = _build(project)
        full = lint(project)
        assert (_kept(project)["how"], report.lint) == ("patched", full.counts()), what
        with State.open(project.state_path) as state:
            cached = lint_cached(project, state, store=False)
        assert [f.to_json() for f in cached.findings] == [f.to_json() for f in full.findings], what
        seen.append(sorted(f.path for f in full.findings if f.rule == "orphan-page"))
    assert seen == [orphans[:1], orphans, orphans, orphans, orphans[:1]]


RENAMED: list[Step] = [
    # a hand-made page that links to a source's page by its title
    (
        "a link by a title",
        _page("third-notes.md", "see [[My notes]]", "see [[Tools we use]], [[My notes]]"),
        "patched",
        ("broken-link", 3),
    ),
    # the source retitled: its page keeps its slug, not its names; the link breaks
    (
        "the source retitled",
        _source("tools.md", "# Tools we use", "# Our tools"),
        "patched",
        ("broken-link", 4),
    ),
    ("and back", _source("tools.md", "# Our tools", "# Tools we use"), "patched", ("broken-link", 3)),
    # a title that is a topic page's: the topic page keeps the name (topic pages come first)
    (
        "a title another page has",
        _source("tools.md", "# Tools we use", "# Chunking"),
        "patched",
        ("broken-link", 4),
    ),
    ("its own again", _source("tools.md", "# Chunking", "# Tools we use"), "patched", ("broken-link", 3)),
    # the source moved: its page (another to the plan) keeps the slug; the hand-made pages'
    # citations of it break, and are whole again where it comes back
    ("the source moved", _moved("tools.md", "kept/tools.md"), "patched", ("bad-citation", 3)),
    ("moved back", _moved("kept/tools.md", "tools.md"), "patched", ("bad-citation", 2)),
    # a topic page takes an alias (a heading like its title): the pages linking to it by its
    # title or slug link as they did, and only those naming the alias are looked at again
    (
        "a topic page takes an alias",
        _source("rag.md", "## Chunking\n", "## Chunkings\n"),
        "patched",
        ("bad-citation", 2),
    ),
    ("and lets it go", _source("rag.md", "## Chunkings\n", "## Chunking\n"), "patched", ("bad-citation", 2)),
]


# pages not the build's (build/handmade.py), changed by hand between builds: (what, edit,
# what the full lint finds of a rule)
HAND: list[tuple[str, Callable[[Project], None], tuple[str, int]]] = [
    ("a link broken", _page("my-notes.md", "twice.", "twice. See [[Nowhere]]."), ("broken-link", 4)),
    ("mended", _page("my-notes.md", "See [[Nowhere]].", "See [[FAISS]]."), ("broken-link", 3)),
    (
        "retitled: a link to it breaks",
        _page("my-notes.md", "title: My notes", "title: Our notes"),
        ("broken-link", 5),
    ),
    ("its title back", _page("my-notes.md", "title: Our notes", "title: My notes"), ("broken-link", 3)),
    (
        "a page added that links to an orphan",
        lambda p: (p.wiki_dir / "fourth-notes.md").write_text(
            "---\ntitle: Fourth notes\ntype: concept\n---\n\n# Fourth notes\n\nSee [[Quiet notes]].\n"
        ),
        ("orphan-page", 2),
    ),
    ("a page deleted", lambda p: (p.wiki_dir / "overlap-notes.md").unlink(), ("bad-citation", 2)),
    # a saved answer (`wikic ask --save`): read again by every lint, the lint keeps no facts of
    # it; new, what the rules across pages read of it is taken as a full lint reads it
    (
        "an answer saved",
        lambda p: (p.wiki_dir / "what-is-chunking.md").write_text(
            "---\ntitle: what is chunking?\ntype: answer\nquestion: what is chunking?\ncites:\n- chunking\n"
            "---\n\n# what is chunking?\n\nChunks overlap, as [[Chunking]] and [[Fourth notes]] say.\n",
            encoding="utf-8",
        ),
        ("orphan-page", 1),  # it links to the orphan
    ),
    # ...edited or deleted by hand: patched from what the last summary kept of it
    ("the answer's link gone", _page("what-is-chunking.md", " and [[Fourth notes]]", ""), ("orphan-page", 2)),
    (
        "a link to a page new",
        _page("what-is-chunking.md", "[[Chunking]]", "[[Fifth notes]]"),
        ("broken-link", 5),
    ),
    (
        "that page made",
        lambda p: (p.wiki_dir / "fifth-notes.md").write_text(
            "---\ntitle: Fifth notes\ntype: concept\n---\n\n# Fifth notes\n\nSee [[HNSW]].\n"
        ),
        ("broken-link", 4),
    ),
    ("the page it links to deleted", lambda p: (p.wiki_dir / "fifth-notes.md").unlink(), ("broken-link", 5)),
    (
        "the answer retitled, an alias not a list",  # a finding of its own (frontmatter)
        _page("what-is-chunking.md", "title: what is chunking?", "title: Overlaps\naliases: Chunks"),
        ("frontmatter", 1),
    ),
    ("the answer deleted", lambda p: (p.wiki_dir / "what-is-chunking.md").unlink(), ("frontmatter", 0)),
]


def test_pages_not_the_builds_changed_by_hand_are_patched_exactly(tmp_path: Path) -> None:
    """A hand-made page edited (its links, its title), added or deleted between builds: the
    build tells the summary which (build/handmade.py), and it is patched from them as from the
    pages a build writes, adds or removes; the summary and what the lint stored equal a full
    lint's."""
    project = _project(tmp_path / "p")
    for what, edit, (rule, found) in HAND:
        edit(project)
        report, full = _built_and_checked(project, tmp_path, what, "patched", 6)
        assert sum(f.rule == rule for f in full.findings) == found, what
        assert report.hand is not None and not {*report.written} & {*report.hand}, what


def _image(where: str, data: bytes | None) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        for old in p.wiki_dir.glob("*/diagram.png"):
            old.unlink()
        if data is not None:
            (p.wiki_dir / where).mkdir(exist_ok=True)
            (p.wiki_dir / where / "diagram.png").write_bytes(data)

    return edit


# the files in wiki/ not pages (attachments), changed by hand: (what, edit, the summary's way,
# what a full lint finds of broken links: a hand-made page links to the image)
FILES: list[tuple[str, Callable[[Project], None], str, int]] = [
    (
        "a link to an image not there",
        _page("my-notes.md", "twice.", "twice. See [[diagram.png]]."),
        "patched",
        4,
    ),
    ("the image added", _image("img", b"\x89PNG one"), "patched", 3),
    ("edited", _image("img", b"\x89PNG two, longer"), "patched", 3),
    ("moved to another folder", _image("media", b"\x89PNG two, longer"), "patched", 3),
    ("deleted", _image("media", None), "patched", 4),
]


def test_files_not_pages_changed_by_hand_are_patched_where_the_names_links_may_name_are_the_same(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path / "p")
    for what, edit, how, found in FILES:
        edit(project)
        _, full = _built_and_checked(project, tmp_path, what, how, 6)
        assert sum(f.rule == "broken-link" for f in full.findings) == found, what
        # what the findings across pages depend on besides the pages, as a full lint stores it
        # (the attachments' names: `wikic lint` patches from it, and counts again where it differs)
        bases = []
        for root in (project.root, tmp_path / "full"):
            with State.open(Project(root).state_path) as state:
                bases.append(json.loads(state.get_meta(Meta.LINT_ACROSS) or "{}")["base"])
        assert bases[0] == bases[1], what


def test_a_saved_answer_changed_since_the_lint_read_it_is_not_kept_as_it_was(tmp_path: Path) -> None:
    """What the summary keeps of a saved answer for the next patch is what the lint read of it:
    one changed since (by hand, while the build ran) is kept as nothing, and the next build
    that finds it so counts again."""
    project = _project(tmp_path / "p")
    answer = project.wiki_dir / "what-is-chunking.md"
    answer.write_text(
        "---\ntitle: what is chunking?\ntype: answer\nquestion: what is chunking?\ncites:\n- chunking\n"
        "---\n\n# what is chunking?\n\nChunks overlap, as [[Chunking]] says.\n",
        encoding="utf-8",
    )
    _build(project)
    rel = "wiki/what-is-chunking.md"
    with State.open(project.state_path) as state:
        assert rel in totals._answers(project, state, state.lint_always())
        answer.write_text(answer.read_text(encoding="utf-8").replace("[[Chunking]]", "[[HNSW]]"))
        assert rel not in totals._answers(project, state, state.lint_always())


def _index_as_the_build_writes_it(p: Project) -> None:
    own = (p.state_dir / "index-own.md").read_text(encoding="utf-8")  # build/ownindex.py
    (p.wiki_dir / "index.md").write_text(own, encoding="utf-8")


# index.md edited by hand, kept as it is by every build (build/ownindex.py): (what, edit, the
# summary's way, index.md's findings in a full lint)
INDEX_KEPT: list[tuple[str, Callable[[Project], None], str, int]] = [
    ("index.md edited by hand", _page("index.md", "\n## ", "\nMine.\n\n## "), "patched", 1),  # hand-edit
    ("pages it does not list added", _new_source, "patched", 4),  # index-drift: not listed, the count
    ("a source edited", _source("vectors.md", "It trades memory", "It spends memory"), "patched", 4),
    ("index.md edited again", _page("index.md", "Mine.", "Ours."), "patched", 4),
    ("a source deleted: a page it lists goes", lambda p: (p.sources_dir / "rag.md").unlink(), "patched", 5),
    ("index.md as the build writes it", _index_as_the_build_writes_it, "patched", 0),
]


def test_index_md_kept_as_edited_by_hand_is_read_again_by_each_patch(tmp_path: Path) -> None:
    """Kept as the person left it while pages come and go: what it lists and what it does not
    changes with them, and each build's summary equals a full lint's."""
    project = _project(tmp_path / "p")
    for what, edit, how, found in INDEX_KEPT:
        edit(project)
        report, full = _built_and_checked(project, tmp_path, what, how, 6)
        assert report.conflicts == ([] if found == 0 else ["wiki/index.md"]), what
        assert len([f for f in full.findings if f.path == "wiki/index.md"]) == found, what


def test_pages_that_changed_their_names_are_patched_exactly(tmp_path: Path) -> None:
    """A source retitled keeps its page's slug but not its names, which every link resolves
    against: its names go as they were and come as they are (lint/came.py), and the summary
    and what the lint stored equal a full lint's."""
    project = _project(tmp_path / "p")
    for what, edit, how, (rule, found) in RENAMED:
        edit(project)
        report, full = _built_and_checked(project, tmp_path, what, how, 6)
        assert sum(f.rule == rule for f in full.findings) == found, what
        if "retitled" in what:
            assert "wiki/tools-we-use.md" in report.written


def test_index_md_is_read_again_unless_only_plain_descriptions_changed_in_it(tmp_path: Path) -> None:
    """The build patches index.md's lines of the pages whose description changed; where every
    description, old and new, is plain text, the index's links are as they were and the summary
    does not read it; a description with code or brackets in it has it read and checked."""
    project = _project(tmp_path / "p")
    for find, put, plain in [
        ("RAG retrieves", "RAG `retrieves`", False),  # a code span in the description
        ("RAG `retrieves`", "RAG retrieves", False),  # the old one had it
        ("RAG retrieves", "RAG fetches", True),
    ]:
        _source("rag.md", find, put)(project)
        report = _build(project)
        assert "wiki/index.md" in report.written, put
        assert report.index_same_links is plain, put
        assert (_kept(project)["how"], report.lint) == ("patched", lint(project).counts()), put


def _added(name: str, text: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        (p.sources_dir / name).write_text(text, encoding="utf-8")

    return edit


def _two_mentions(p: Project) -> None:  # a missing page is one two pages mention
    path = p.root / "schema.yaml"
    path.write_text(
        path.read_text(encoding="utf-8") + "lint:\n  missing_page_threshold: 2\n", encoding="utf-8"
    )


def _hand(name: str, text: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        (p.wiki_dir / name).write_text(text, encoding="utf-8")

    return edit


def _pages(*edits: Callable[[Project], None]) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        for one in edits:
            one(p)

    return edit


FOAM = "Quantum\u2014foam"  # its topic key is "quantum foam"; its names text holds neither name nor slug


def _foam_apart(plural: str = "") -> list[Step]:
    """Two pages mention Quantum foam in bold words apart (`plural`: the second's with an s),
    then a page of it comes: no page treats it as a missing one."""
    apart = _pages(
        _page("third-notes.md", "Quantum foam", FOAM),
        _page("quiet-notes.md", "See [[Overlap notes]].", f"See [[Overlap notes]]. **{FOAM}{plural}**"),
    )
    page = _added("foam.md", "# Quantum foam\n\nFoam of space, at small lengths.\n")
    return [
        ("bold words apart", apart, "patched", ("missing-page", 1)),
        ("a topic four pages mention", page, "patched", ("missing-page", 0)),
    ]


# (what is edited, the summary's way, and what the full lint finds of a rule: rule, how many)
ADDED: list[Step] = [
    ("two mentions make a missing page", _two_mentions, "counted", ("missing-page", 1)),
    # a source page new, that a broken link of a hand-made page names: resolved, and an orphan new
    (
        "its link's page",
        _added("pq2.md", "# Product quantization\n\nIt splits vectors into parts.\n"),
        "patched",
        ("broken-link", 2),
    ),
    # ...that four pages mention in bold, two of them (with no broken links) in words whose names
    # text holds neither its name nor its slug: their mentions go by its topic key
    *_foam_apart(),
    # bold words that are a file name, in pages with no broken links: a page's by its stem once it comes
    (
        "a bold file name",
        _pages(
            _page("overlap-notes.md", "See [[My notes]].", "See [[My notes]]. **notes/ivf-lists**"),
            _page("quiet-notes.md", "See [[Overlap notes]].", "See [[Overlap notes]], **notes/ivf-lists**"),
        ),
        "patched",
        ("missing-page", 1),
    ),
    (
        "the page it names",
        _added("ivf.md", "# IVF lists\n\nIt keeps each cluster's vectors together.\n"),
        "patched",
        ("missing-page", 0),
    ),
    # a broken link that suggests pages: a page new like it is suggested
    (
        "a link misspelt",
        _page("third-notes.md", "see [[My notes]]", "see [[Sparse retreival]], [[My notes]]"),
        "patched",
        ("broken-link", 3),
    ),
    (
        "a page like it",
        _added("sparse.md", "# Sparse retrieval\n\nIt ranks by the words shared.\n"),
        "patched",
        ("broken-link", 3),
    ),
    # a topic page new (with its source's page), a twin of a hand-made page's name
    (
        "a topic page new, a page's twin",
        _added("twin.md", "# Twin notes\n\n## Overlap note\n\nOverlap notes say what chunks share.\n"),
        "patched",
        ("duplicate-page", 1),
    ),
    # a source titled as a topic page's alias, its slug before the topic page's: the name stays
    # the topic page's (name_table: pages no source's first), the link to it too
    # a hand-made page's title, a source new titled so: the name stays the hand-made page's
    # (name_table: pages no source's first), though the source's slug sorts before its
    (
        "a hand-made page named",
        _pages(
            _hand(
                "zeta-notes.md", "---\ntitle: Graph walks\ntype: concept\n---\n\n# Graph walks\n\nWalks.\n"
            ),
            _page("my-notes.md", "and read about", "and [[Graph walks]] and read about"),
        ),
        "patched",
        ("orphan-page", 5),
    ),
    (
        "a source of its title",
        _added("walks.md", "# Graph walks\n\nIt walks the graph.\n"),
        "patched",
        ("orphan-page", 6),
    ),
    # a topic page new titled as a source's page: the name goes to it (pages no source's first)
    (
        "a topic titled as a source page",
        _added("tools2.md", "# More tools\n\n## Tools we use\n\nTools we use are listed in one place.\n"),
        "patched",
        ("orphan-page", 6),
    ),
    (
        "a link by a topic page's alias",
        _page("third-notes.md", "and [[More notes]]", "and [[More notes]], [[Vector database]]"),
        "patched",
        ("broken-link", 3),
    ),
    (
        "a source of that title",
        _added("vdb.md", "# Vector database\n\nA vector database keeps embeddings.\n"),
        "patched",
        ("orphan-page", 5),
    ),
    # a name some page has already: it goes to the first of its pages by (type is "source", slug)
    (
        "a page's name again",
        _added("ivf2.md", "# IVF lists\n\nThe lists are probed a few at a time.\n"),
        "patched",
        ("broken-link", 3),
    ),
]


def test_pages_a_build_adds_are_patched_exactly(tmp_path: Path) -> None:
    """A source new whose page alone comes (lint/came.py): the pages whose links, bold terms or
    Topics items name it are read again, and the summary and what the lint stored equal a full
    lint's."""
    project = _project(tmp_path / "p")
    for what, edit, how, (rule, found) in ADDED:
        edit(project)
        _, full = _built_and_checked(project, tmp_path, what, how, 4)
        assert sum(f.rule == rule for f in full.findings) == found, what


def _removed(name: str) -> Callable[[Project], None]:
    def edit(p: Project) -> None:
        (p.sources_dir / name).unlink()

    return edit


# (what is edited, the summary's way, and what the full lint finds of a rule: rule, how many);
# each source deleted takes its page (and the topic pages only it made) out of the wiki
GONE: list[Step] = [
    ("two mentions make a missing page", _two_mentions, "counted", ("missing-page", 1)),
    (
        "a page a broken link names",
        _added("pq2.md", "# Product quantization\n\nIt splits vectors.\n"),
        "patched",
        ("broken-link", 2),
    ),
    # its link broken again, and its topic key no page's: the link is a mention of one page only
    ("...deleted", _removed("pq2.md"), "patched", ("broken-link", 3)),
    ("a page no page links to", _added("empty.md", "# Empty thing\n"), "patched", ("orphan-page", 3)),
    ("...deleted: no orphan", _removed("empty.md"), "patched", ("orphan-page", 2)),
    # bold words whose names text holds neither the name nor the slug of the page they name,
    # one of them plural
    *_foam_apart("s"),
    # its topic key no page's again: every page that treats it as a topic says so again, those
    # whose names text holds only its words too
    ("...deleted: a missing page again", _removed("foam.md"), "patched", ("missing-page", 1)),
    # a topic page (and its source's page) gone: the twin it was of a hand-made page's name
    (
        "a topic page new, a page's twin",
        _added("twin.md", "# Twin notes\n\n## Overlap note\n\nOverlap notes say what chunks share.\n"),
        "patched",
        ("duplicate-page", 1),
    ),
    ("...deleted: no twin", _removed("twin.md"), "patched", ("duplicate-page", 0)),
    # a name two pages have: where the page it resolves to goes, the other takes it
    (
        "a page a link names",
        _added("ivf.md", "# IVF index\n\nIt keeps clusters together.\n"),
        "patched",
        ("broken-link", 2),
    ),
    (
        "another of that name",
        _added("ivf2.md", "# IVF index\n\nIts lists are probed.\n"),
        "patched",
        ("orphan-page", 3),
    ),
    ("...the first deleted", _removed("ivf.md"), "patched", ("orphan-page", 2)),
    # a source that topic pages share: they are written without it
    ("a source topic pages share, deleted", _removed("rag.md"), "patched", ("broken-link", 2)),
]


def test_pages_a_build_removes_are_patched_exactly(tmp_path: Path) -> None:
    """A source deleted, whose pages go (lint/came.py): the names shrink by theirs (a name
    another page has goes to it), the pages that name them or treat a topic key no page has now
    as a topic are read again from their stored facts, and the summary and what the lint stored
    equal a full lint's."""
    project = _project(tmp_path / "p")
    for what, edit, how, (rule, found) in GONE:
        edit(project)
        report, full = _built_and_checked(project, tmp_path, what, how, 4)
        assert sum(f.rule == rule for f in full.findings) == found, what
        assert ("deleted" in what) == bool(report.removed), what


def _built_and_checked(
    project: Project, tmp_path: Path, what: str, how: str, most: int
) -> tuple[Report, Any]:
    """A build whose summary equals a full lint's, made the way `how` says (reading at most
    `most` pages where patched), and whose stored lint is what a full one stores: every finding
    every line, and (where patched) what the next lint patches from."""
    report = _build(project)
    full = lint(project)
    assert report.lint == full.counts(), what
    with State.open(project.state_path) as state:
        cached = lint_cached(project, state, store=False)
    assert [f.to_json() for f in cached.findings] == [f.to_json() for f in full.findings], what
    kept = _kept(project)
    assert kept.get("how") == how, what
    if how == "patched":
        assert kept["checked"] <= most, f"{what}: only the pages the edit touched are read"
        assert _stored(project) == _stored(_fully_linted(project, tmp_path / "full")), what
    return report, full


def _fully_linted(project: Project, copy: Path) -> Project:
    """A copy of the project, its lint stored as a lint of every page stores it."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(project.root, copy, symlinks=True)
    with State.open(Project(copy).state_path) as state:
        lint_cached(Project(copy), state, fresh=True)
    return Project(copy)


def _stored(project: Project) -> dict[str, Any]:
    """What a lint stores for the next to patch from: the names (with the additions since),
    the findings across pages, the mentions, each page's names text and the sources it cites,
    in no particular order."""
    with State.open(project.state_path) as state:
        kept = KeptNames.stored(state, set())
        decoded = kept.decoded()
        assert decoded is not None and kept.topics is not None
        names, have = decoded
        assert kept.shared is not None and kept.keyed is not None
        across = json.loads(state.get_meta(Meta.LINT_ACROSS) or "{}")["across"]
        db = state.db
        return {
            "pages": {slug: list(named) for slug, named in names.pages.items()},
            "names": names.names,
            "have": sorted(have),
            "topics": sorted(kept.topics),
            "shared": kept.shared,
            "keyed": kept.keyed,
            "unread": kept.unread,
            "across": across,
            "mentions": sorted(db.execute("SELECT key, rel, line, terms FROM lint_mentions").fetchall()),
            "text": sorted(db.execute("SELECT rel, text FROM lint_text").fetchall()),
            "deps": sorted(db.execute("SELECT source, rel FROM lint_deps").fetchall()),
            "records": sorted(
                db.execute("SELECT rel, size, across, hash, cached, orphanable FROM lint_records")
            ),
        }


def test_a_source_added_is_checked_in_index_md_on_its_line_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the build only listed the pages it added in index.md (build/indexpatch.py) and the
    index had no finding, the summary checks their lines, not every link of the index."""
    project = make_project(tmp_path / "p", dict(NOTES))
    _build(project)
    read: list[str] = []
    whole = totals._index
    monkeypatch.setattr(totals, "_index", lambda *a: read.append("index.md") or whole(*a))
    _added("pq2.md", "# Product quantization\n\nIt splits vectors into parts.\n")(project)
    report = _build(project)
    assert "wiki/product-quantization.md" in report.written and "wiki/index.md" in report.written
    assert (_kept(project)["how"], report.lint, read) == ("patched", lint(project).counts(), [])
    # a source retitled: its line taken out and put where it sorts now, checked alone too
    _source("tools.md", "# Tools we use", "# Our tools")(project)
    report = _build(project)
    assert "wiki/index.md" in report.written and report.index_listed
    assert (_kept(project)["how"], report.lint, read) == ("patched", lint(project).counts(), [])
    # a description of another kind in the index: read whole, as before
    _source("rag.md", "RAG retrieves", "RAG `retrieves`")(project)
    report = _build(project)
    assert (_kept(project)["how"], report.lint, read) == ("patched", lint(project).counts(), ["index.md"])


def test_the_names_added_are_written_into_the_whole_every_so_often(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each addition's names are kept apart (Meta.LINT_NAMES_MORE), until FOLD changes are
    written into the names whole: what the next lint reads stays the same, and few; a removal's
    are written whole at once (no byte of a page gone stays), a rename's kept apart."""
    monkeypatch.setattr(names_module, "FOLD", 2)
    project = make_project(tmp_path / "p", dict(NOTES))
    _build(project)
    kept_apart = []
    edits = [
        _added("new0.md", "# Product quantization\n\nIt is one more way to search vectors.\n"),
        _added("new1.md", "# IVF index\n\nIt is one more way to search vectors.\n"),
        _added("new2.md", "# IVF index\n\nIts lists are probed.\n"),  # a name two pages have
        _removed("new0.md"),
        _removed("new1.md"),  # its name handed to the other page, in the names written whole
        _added("new3.md", "# Graph search\n\nIt walks a graph of vectors.\n"),
        _added("new4.md", "# Sparse search\n\nIt ranks by the words shared.\n"),
        # a source retitled: its old names go and its new ones come, kept apart (two: FOLD, whole)
        _source("tools.md", "# Tools we use", "# Our tools"),
    ]
    for n, edit in enumerate(edits):
        edit(project)
        _built_and_checked(project, tmp_path, str(n), "patched", 4)
        with State.open(project.state_path) as state:
            kept_apart.append(len(json.loads(state.get_meta(Meta.LINT_NAMES_MORE) or "[]")))
    assert kept_apart == [1, 0, 1, 0, 0, 1, 0, 0]


def test_names_kept_without_who_else_has_them_are_counted_once_where_pages_go(tmp_path: Path) -> None:
    """Names a wikic before this kept (without the names and topic keys more than one page has)
    cannot say who takes a name a page gone had: the first build that removes a page counts
    every page, and keeps them whole; the next is patched."""
    project = make_project(tmp_path / "p", {**NOTES, "pq.md": "# Product quantization\n\nIt splits.\n"})
    (project.sources_dir / "ivf.md").write_text("# IVF index\n\nIt keeps clusters.\n", encoding="utf-8")
    _build(project)
    with State.open(project.state_path) as state:
        data = names_module.names_data(state.get_meta_blob(Meta.LINT_NAMES) or b"")
        del data["shared"], data["keyed"]
        blob = names_module.names_blob(data)
        state.set_meta(Meta.LINT_NAMES, blob)
        across = json.loads(state.get_meta(Meta.LINT_ACROSS) or "{}")
        across["names"] = names_module.names_key(blob)
        state.set_meta(Meta.LINT_ACROSS, json.dumps(across))
    _removed("pq.md")(project)
    _built_and_checked(project, tmp_path, "the first removal", "counted", 4)
    _removed("ivf.md")(project)
    _built_and_checked(project, tmp_path, "the next", "patched", 4)


@pytest.mark.parametrize(
    "kept",
    [
        json.dumps({"names": {"pages": {}, "names": {}}, "have": []}),  # an older wikic's JSON
        marshal.dumps({"names": {}, "have": []}),  # marshalled without its key before it
        b"0123456789abcdef\n\x00 not marshal",
        b"short",
    ],
)
def test_names_kept_not_as_this_wikic_keeps_them_are_counted_once(tmp_path: Path, kept: str | bytes) -> None:
    """The names state.db keeps are not what this wikic writes (names.names_blob): the first
    build whose pages come or go counts every page, and keeps them anew; the next is patched."""
    project = make_project(tmp_path / "p", {**NOTES, "pq.md": "# Product quantization\n\nIt splits.\n"})
    (project.sources_dir / "ivf.md").write_text("# IVF index\n\nIt keeps clusters.\n", encoding="utf-8")
    _build(project)
    with State.open(project.state_path) as state:
        state.set_meta(Meta.LINT_NAMES, kept)
    _removed("pq.md")(project)
    _built_and_checked(project, tmp_path, "the first removal", "counted", 4)
    _removed("ivf.md")(project)
    _built_and_checked(project, tmp_path, "the next", "patched", 4)


def test_a_key_gone_is_looked_for_by_its_words_as_whole_words() -> None:
    """The pages that may treat a topic key gone as a topic hold each of its words whole (or
    with an s): a topic page listing "note 1504" is no such page for "note 504"."""
    word = re.compile(r"504s?(?!\w)")
    assert not totals._whole(word, "note 1504: lazy vacuuming\nnote 5040\nnote_504")
    assert totals._whole(word, "note 1504\nnote 504: lazy vacuuming")
    assert totals._whole(word, "504s") and totals._whole(word, "(504)") and not totals._whole(word, "5045")


def test_a_page_renamed_under_its_path_is_looked_for_by_the_names_it_lost_or_took() -> None:
    """A topic page that took an alias is looked for in the other pages' names texts by that
    alias alone (a link by its title or slug resolves as it did), not by the title that every
    page linking to it holds; one whose type changed by all its names, as are pages new and
    gone; a topic key it keeps, or a page new has, is no key gone."""

    def page(rel: str, title: str, kind: str, aliases: list[str] | None = None) -> Page:
        return Page(rel, "", {"title": title, "type": kind, "aliases": aliases or []}, "# x\n")

    raft = "wiki/raft.md"
    went = {raft: page(raft, "Raft", "concept"), "wiki/old.md": page("wiki/old.md", "Old notes", "source")}
    came = {
        raft: page(raft, "Raft", "concept", ["Raft consensus"]),
        "wiki/new.md": page("wiki/new.md", "Paxos", "concept"),
    }
    keys = {"raft": 0, "old note": 0, "old": 0, "paxo": 0}  # Gone.keys(): each topic key's pages left
    found, words = came_module.looked_for(went, came, keys)
    assert found == ["new", "old", "old notes", "paxos", "raft consensus"]
    assert words == [["old", "note"], ["old"]]  # not raft's, which it keeps, nor the new page's
    # another type: every name, before and after (the linker's order of pages is by type)
    came[raft] = page(raft, "Raft", "source", ["Raft consensus"])
    found, _ = came_module.looked_for(went, came, keys)
    assert {"raft", "raft consensus"} <= set(found)


def test_pages_that_come_go_or_are_renamed_with_rules_across_pages_off(tmp_path: Path) -> None:
    """With missing-page, orphan-page and duplicate-page off (no topic keys, inbound counts or
    twins kept), pages added, removed and renamed are still patched, as a full lint counts."""
    project = make_project(tmp_path / "p", dict(NOTES))
    schema = project.root / "schema.yaml"
    off = "lint:\n  rules:\n    missing-page: off\n    orphan-page: off\n    duplicate-page: off\n"
    schema.write_text(schema.read_text(encoding="utf-8") + off, encoding="utf-8")
    _build(project)
    for what, edit in [
        ("a source added", _added("pq.md", "# Product quantization\n\nIt splits vectors.\n")),
        ("a source retitled", _source("tools.md", "# Tools we use", "# Our tools")),
        ("a source deleted", _removed("pq.md")),
    ]:
        edit(project)
        _built_and_checked(project, tmp_path, what, "patched", 4)


@pytest.mark.parametrize("added", [False, True])
def test_a_page_gone_leaves_no_byte_of_its_names_in_the_kept_names(tmp_path: Path, added: bool) -> None:
    """A source deleted, its page gone the patched way: its names are in neither the names a
    full lint kept nor the changes kept beside them (names.KeptNames: written whole, as the
    plan's base is), whether the full lint saw it (`added`: no, a build added it after); a
    page renamed keeps the changes apart."""
    word = "Zq" + uuid.uuid4().hex[:10]
    secret = f"# {word} notes\n\nThe {word} service keeps its vectors in FAISS.\n"
    project = make_project(tmp_path / "p", {**NOTES, **({} if added else {"secret.md": secret})})
    _build(project)
    if added:
        _added("secret.md", secret)(project)
        _built_and_checked(project, tmp_path, "added", "patched", 4)
    _removed("secret.md")(project)
    _built_and_checked(project, tmp_path, "deleted", "patched", 4)
    with State.open(project.state_path) as state:
        state.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        kept = [
            state.get_meta_blob(Meta.LINT_NAMES) or b"",
            (state.get_meta(Meta.LINT_NAMES_MORE) or "").encode(),
        ]
    assert kept[1] == b"[]" and not any(word.lower().encode() in k.lower() for k in kept)
    assert word.lower().encode() not in project.state_path.read_bytes().lower()
    _source("tools.md", "# Tools we use", "# Our tools")(project)  # renamed: kept apart, not whole
    _built_and_checked(project, tmp_path, "renamed", "patched", 4)
    with State.open(project.state_path) as state:
        assert len(json.loads(state.get_meta(Meta.LINT_NAMES_MORE) or "[]")) == 2
