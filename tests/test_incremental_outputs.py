"""The output side of an edit (assemble, publish, index.md, the clean marks) costs what it
changes and makes what a full rebuild makes: after each kind of edit, one after another on
one project, its wiki/ equals `--force`'s (which renders every page again) byte for byte,
a hand edit kept as it is."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.projects import NOTES, make_project, wiki_files
from wikic import snapshot
from wikic.build import logfile
from wikic.build.quick import QUICK as QUICK_LINE
from wikic.build.report import Report
from wikic.build.run import BuildOptions, build
from wikic.lint.runner import lint
from wikic.project import Project
from wikic.prompts import PACKAGE_DIR as PACKAGE_PROMPTS
from wikic.state import Meta, State

SOURCES = {
    **NOTES,
    "graphs.md": "# Graph indexes\n\n## HNSW\n\nHNSW layers small-world graphs so that a search starts "
    "coarse and ends fine.\n",
}
HAND = "---\ntitle: My notes\ntype: concept\n---\n\n# My notes\n\nSee [[HNSW]] and [[Chunking]].\n"


def _build(project: Project, force: bool = False) -> Report:
    report = build(project, BuildOptions(force=force))
    assert report.ok, report.errors
    return report


def _rewrite(p: Project, name: str, old: str, new: str) -> None:
    path = p.sources_dir / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _edit_text(p: Project) -> None:
    _rewrite(p, "rag.md", "a few hundred tokens", "about three hundred words")


def _new_mention(p: Project) -> None:  # a backlink, on a page whose own text stays as it was
    _rewrite(p, "tools.md", "by a few sentences", "by a few sentences, as HNSW layers do,")


def _new_link_target(p: Project) -> None:
    (p.sources_dir / "pq.md").write_text(
        "# Embeddings\n\n## Embeddings\n\nEmbeddings are vectors a model makes from text for FAISS.\n\n"
        "## Product quantization\n\nProduct quantization compresses embeddings into short codes.\n"
    )


def _renamed_topic(p: Project) -> None:
    _rewrite(p, "tools.md", "## FAISS", "## Faiss library")


def _hand_page_added(p: Project) -> None:  # backlinks appear on the pages it links to
    (p.wiki_dir / "my-notes.md").write_text(HAND, encoding="utf-8")


def _hand_page_relinked(p: Project) -> None:  # a backlink more, and no page's own text changes
    (p.wiki_dir / "my-notes.md").write_text(HAND.replace("[[Chunking]]", "[[Chunking]], [[FAISS]]"))


def _hand_page_removed(p: Project) -> None:
    (p.wiki_dir / "my-notes.md").unlink()


def _hand_page_named_in_text(p: Project) -> None:  # source pages whose text names it link to it
    (p.wiki_dir / "chunks.md").write_text("---\ntitle: Chunks\ntype: concept\n---\n\nPieces.\n")


def _write_template(p: Project) -> None:  # the same plan, other prose: a topic page changes
    (p.root / "prompts").mkdir(exist_ok=True)
    template = PACKAGE_PROMPTS / "write.user.j2"
    text = template.read_text(encoding="utf-8").replace("in claims %}", "in claims|reverse %}")
    assert text != template.read_text(encoding="utf-8")
    (p.root / "prompts" / "write.user.j2").write_text(text, encoding="utf-8")


def _deleted_page(p: Project) -> None:  # its own page and its topic's page go
    (p.sources_dir / "graphs.md").unlink()


def _deleted_shared_source(p: Project) -> None:  # the pages it shared are rendered without it
    (p.sources_dir / "vectors.md").unlink()


def _restored(p: Project) -> None:  # the pages come back, under the slugs they had
    for name in ("vectors.md", "graphs.md"):
        (p.sources_dir / name).write_text(SOURCES[name], encoding="utf-8")


EDITS: dict[str, Callable[[Project], None]] = {
    "source text": _edit_text,
    "a new mention": _new_mention,
    "a new link target": _new_link_target,
    "a renamed topic": _renamed_topic,
    "a hand-made page added": _hand_page_added,
    "a hand-made page linking elsewhere": _hand_page_relinked,
    "a hand-made page removed": _hand_page_removed,
    "a hand-made page that source pages' text names": _hand_page_named_in_text,
    "a project's own write template": _write_template,
    "a deleted page": _deleted_page,
    "a deleted shared source": _deleted_shared_source,
    "deleted sources restored": _restored,
}


def _forced_copy(project: Project, where: Path) -> dict[str, bytes]:
    """wiki/ as `--force` makes it from the same sources and state (rendering every page)."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(project.root, where, symlinks=True)
    _build(Project(where), force=True)
    return wiki_files(Project(where))


def _without_log(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if name != "log.md"}


def test_each_edit_in_turn_equals_a_forced_rebuild_byte_for_byte(tmp_path: Path) -> None:
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    for kind, edit in EDITS.items():
        before = wiki_files(project)
        edit(project)
        report = _build(project)
        got = wiki_files(project)
        assert _without_log(got) == _without_log(_forced_copy(project, tmp_path / "full")), kind
        # only what changed was written again, and log.md says what
        changed = {name for name in got if got[name] != before.get(name)} - {"log.md"}
        written = {rel.removeprefix("wiki/") for rel in report.written} - {"log.md"}
        assert written == changed - {"my-notes.md", "chunks.md", "mine.md"}, kind
        # wiki/ as the build recorded it (its walk before, what it touched stat'ed again) is
        # wiki/ as it is: the next build finds nothing to do by stat alone
        assert report.wiki is not None and report.wiki.digest() == snapshot.wiki(project).digest()
        assert _build(project).nothing_to_do, kind
        assert all(name in got["log.md"].decode().rsplit("## ", 1)[-1] for name in sorted(written)[:20])


@pytest.mark.parametrize("kind", ["source text", "a deleted shared source"])
def test_a_hand_edit_is_kept_and_the_rest_equals_a_forced_rebuild(tmp_path: Path, kind: str) -> None:
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    full = tmp_path / "full"
    shutil.copytree(project.root, full, symlinks=True)
    hnsw = project.wiki_dir / "hnsw.md"  # fed by vectors.md and graphs.md
    edited = hnsw.read_text(encoding="utf-8").replace("# HNSW\n", "# HNSW\n\nMy own line.\n")
    hnsw.write_text(edited, encoding="utf-8")
    for p in (project, Project(full)):
        EDITS[kind](p)
        _rewrite(p, "graphs.md", "ends fine", "ends fine, layer by layer")
    report = _build(project)
    assert report.conflicts == ["wiki/hnsw.md"]
    _build(Project(full), force=True)
    want = wiki_files(Project(full))
    assert want["hnsw.md"] != edited.encode()
    want["hnsw.md"] = edited.encode()
    assert _without_log(wiki_files(project)) == _without_log(want)
    # kept on the next build too, and nothing else changes
    again = _build(project)
    assert again.conflicts == ["wiki/hnsw.md"] and again.written == []


def test_after_a_killed_build_its_temporary_files_are_gone_and_the_next_build_does_nothing(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "p", SOURCES)
    _build(project)
    (project.wiki_dir / ".wikic-tmp-left-by-a-kill").write_text("half a page")
    _edit_text(project)
    report = _build(project)
    assert not (project.wiki_dir / ".wikic-tmp-left-by-a-kill").exists()
    assert report.wiki is not None and report.wiki.digest() == snapshot.wiki(project).digest()
    assert _build(project).nothing_to_do


# Edits whose pages the plan knows, on a wiki as the last build left it: assembled the quick
# way (build/quick.py), from those pages' rows alone, and still what a full rebuild makes.
def _mention_of_an_unchanged_page(p: Project) -> None:  # graph-indexes.md, not planned again: a backlink
    _rewrite(p, "tools.md", "no fact is cut in two", "no fact is cut in two, unlike Graph indexes")


def _mention_gone(p: Project) -> None:  # ...and loses it
    _rewrite(p, "tools.md", ", unlike Graph indexes", "")


def _lead_rewritten(p: Project) -> None:  # a page's first sentence: its line in index.md
    _rewrite(p, "rag.md", "RAG retrieves chunks", "RAG fetches chunks")


def _moved(p: Project, name: str, to: str, retitled: tuple[str, str] | None = None) -> None:
    (p.sources_dir / to).parent.mkdir(parents=True, exist_ok=True)
    (p.sources_dir / name).rename(p.sources_dir / to)
    if retitled is not None:
        _rewrite(p, to, *retitled)


def _added(p: Project, name: str, text: str) -> None:
    (p.sources_dir / name).write_text(text, encoding="utf-8")


def _source_named_in_a_summary(p: Project) -> None:  # a page new, that another page's text names
    (p.sources_dir / "nn.md").write_text(
        "# Nearest-neighbour queries\n\nA nearest-neighbour query asks for the vectors closest to a point.\n"
    )


def _topic_gone(p: Project) -> None:  # no source gives Chunking now: its page goes, and no source
    _rewrite(p, "tools.md", "## Chunking\n\nChunks overlap", "Pieces overlap")
    _rewrite(p, "rag.md", "## Chunking\n\nDocuments are split into chunks", "Documents are split into pieces")


def _topic_back(p: Project) -> None:  # ...and comes back, under the slug it had
    _rewrite(p, "tools.md", "Pieces overlap", "## Chunking\n\nChunks overlap")
    _rewrite(p, "rag.md", "Documents are split into pieces", "## Chunking\n\nDocuments are split into chunks")


QUICK: dict[str, Callable[[Project], None]] = {
    "source text": _edit_text,
    "a mention of a page the edit leaves as it was": _mention_of_an_unchanged_page,
    "that mention gone": _mention_gone,
    "a page's first sentence": _lead_rewritten,
    "a new mention": _new_mention,
    # pages that come or go (build/comego.py): the pages whose text names them assembled again
    "a new link target": _new_link_target,
    "a new source that a page's summary names": _source_named_in_a_summary,
    "a topic page gone": _topic_gone,
    "that topic page back": _topic_back,
    "a renamed topic": _renamed_topic,  # a topic page new; FAISS keeps its page (vectors.md names it)
    # a name two pages have: the topic page's, whichever comes (the linker's rule)
    "a source titled as a topic": lambda p: _added(
        p, "faiss2.md", "# FAISS\n\nFAISS runs on GPUs as well.\n"
    ),
    "a topic titled as a source page": lambda p: _added(
        p,
        "tools2.md",
        "# More tools\n\n## Tools we use\n\nTools we use are listed in one place for readers.\n",
    ),
    "a page whose text names one moved": lambda p: _added(
        p, "link.md", "# Linking notes\n\nThe graph indexes page and tools we use page say more.\n"
    ),
    # the pages it links to list it by its title among their backlinks
    "that page retitled": lambda p: _rewrite(p, "link.md", "# Linking notes", "# Linked notes"),
    # a source retitled: its page keeps its slug, its names go as they were and come as they
    # are; a name a topic page has stays the topic page's, and comes back to it
    "a source retitled": lambda p: _rewrite(p, "tools.md", "# Tools we use", "# Tools we like"),
    "then titled as a topic": lambda p: _rewrite(p, "tools.md", "# Tools we like", "# Chunking"),
    "and its title back": lambda p: _rewrite(p, "tools.md", "# Chunking", "# Tools we use"),
    # a source moved: its page, another page to the plan, takes the slug of the page gone
    "a source moved": lambda p: _moved(p, "tools.md", "kept/tools.md"),
    "moved back": lambda p: _moved(p, "kept/tools.md", "tools.md"),
    "moved and retitled": lambda p: _moved(p, "tools.md", "tools-now.md", ("# Tools we use", "# Tools now")),
    "moved back, its title back": lambda p: _moved(
        p, "tools-now.md", "tools.md", ("# Tools now", "# Tools we use")
    ),
    # a topic page takes an alias (a heading like its title), and lets it go: renamed under
    # its slug, its title kept
    "a topic page that takes an alias": lambda p: _rewrite(p, "rag.md", "## Chunking\n", "## Chunkings\n"),
    "its alias let go": lambda p: _rewrite(p, "rag.md", "## Chunkings\n", "## Chunking\n"),
    # a source deleted: its page goes, the page it shared is rendered without it, and it is
    # forgotten everywhere as the full way forgets it (tests/test_privacy_forget.py)
    "a deleted page": _deleted_page,
}


def _source_a_hand_page_names(p: Project) -> None:  # the hand-made page's link resolves now
    (p.wiki_dir / "mine.md").write_text("---\ntitle: Mine\ntype: concept\n---\n\nSee [[Sparse retrieval]].\n")
    _build(p)
    (p.sources_dir / "sparse.md").write_text(
        "# Sparse retrieval\n\nSparse retrieval ranks documents by words.\n"
    )


EDITS["a new source that a hand-made page names"] = _source_a_hand_page_names
# Edits that change the wiki's names or its settings, or wiki/ itself: the full assembly.
FULL = ["a project's own write template"]


def _quick(report: Report) -> list[str]:
    return [e["reason"] for e in report.explain if e["action"] == QUICK_LINE]


def _quick_step(
    project: Project, tmp_path: Path, kind: str, edit: Callable[[Project], None]
) -> tuple[Report, dict[str, bytes], set[str], set[str]]:
    """An edit built the quick way, its wiki/ a forced rebuild's: the report, wiki/, the
    files that changed and those the build wrote (log.md aside)."""
    before = wiki_files(project)
    edit(project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report), kind
    got = wiki_files(project)
    assert _without_log(got) == _without_log(_forced_copy(project, tmp_path / "full")), kind
    changed = {name for name in got if got[name] != before.get(name)} - {"log.md"}
    return report, got, changed, {rel.removeprefix("wiki/") for rel in report.written} - {"log.md"}


def test_an_edit_whose_pages_are_known_is_assembled_from_them_and_equals_a_forced_rebuild(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    for kind, edit in QUICK.items():
        report, got, changed, written = _quick_step(project, tmp_path, kind, edit)
        assert written == changed, kind
        # the figures of the pages' text, and of the actions, as a build of every page counts them
        full = build(Project(tmp_path / "full"), BuildOptions(force=True))
        assert report.page_text == full.page_text and report.pages == full.pages, kind
        assert report.ran + report.cached + report.up_to_date == full.up_to_date, kind
        assert report.wiki is not None and report.wiki.digest() == snapshot.wiki(project).digest()
        assert _build(project).nothing_to_do, kind
        if kind == "a page's first sentence":
            assert "index.md" in changed, kind  # its line, patched
        if kind in ("a topic page that takes an alias", "its alias let go"):
            assert ("Chunkings" in got["chunking.md"].decode()) == ("takes" in kind), kind
            # renamed the quick way (which pages that touches: tests/test_comego.py)
            assert "1 renamed)" in _quick(report)[0], kind


def test_the_quick_way_changes_the_backlinks_of_a_page_the_edit_leaves_as_it_was(tmp_path: Path) -> None:
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    page = project.wiki_dir / "graph-indexes.md"
    _mention_of_an_unchanged_page(project)
    report = build(project, BuildOptions(explain=True))
    assert _quick(report) and "1 whose backlinks it changed" in _quick(report)[0]
    assert "## Linked from\n\n- [[chunking|Chunking]]\n" in page.read_text(encoding="utf-8")
    _mention_gone(project)
    report = build(project, BuildOptions(explain=True))
    assert _quick(report) and "## Linked from" not in page.read_text(encoding="utf-8")
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


@pytest.mark.parametrize("kind", FULL)
def test_an_edit_that_changes_names_or_settings_is_assembled_in_full(tmp_path: Path, kind: str) -> None:
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    EDITS[kind](project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and not _quick(report)
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


def test_deleted_sources_restored_come_back_the_quick_way(tmp_path: Path) -> None:
    """Their pages come back under the slugs they had, and the topic page one of them named
    gets the title it gave it back (its names go as they were and come as they are: a page
    renamed, as it was when the source went), equal to a forced rebuild."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    _deleted_shared_source(project)
    _deleted_page(project)
    _build(project)
    EDITS["deleted sources restored"](project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report)
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


def _hand_page(p: Project, find: str, put: str) -> None:
    path = p.wiki_dir / "my-notes.md"
    text = path.read_text(encoding="utf-8")
    assert find in text
    path.write_text(text.replace(find, put), encoding="utf-8")


# pages in wiki/ the build does not make (build/handmade.py), changed by hand between builds
HAND_EDITS: dict[str, Callable[[Project], None]] = {
    "a hand-made page added": _hand_page_added,  # backlinks appear on the pages it links to
    "linking elsewhere": _hand_page_relinked,
    "its first line, so its line in index.md": lambda p: _hand_page(p, "See [[HNSW]]", "Read [[HNSW]]"),
    # its names: the source pages whose text names it link to it, the pages it links to list
    # it by its title now, and its line in index.md moves
    "retitled as a phrase the sources write": lambda p: _hand_page(p, "title: My notes", "title: Chunks"),
    "an alias": lambda p: _hand_page(p, "type: concept\n", "type: concept\naliases: [Reading list]\n"),
    "and a source edited with it": lambda p: (
        _hand_page(p, "Read [[HNSW]]", "Read [[HNSW]] first"),
        _edit_text(p),
    ),
    "another added, linking to the first": lambda p: (p.wiki_dir / "more.md").write_text(
        "---\ntitle: More notes\ntype: concept\n---\n\nAfter [[Chunks]], [[RAG]] and [[Sparse retrieval]].\n",
        encoding="utf-8",
    ),
    # the pages whose [[links]] the names resolve otherwise now are read again for their links
    "a new source that a hand-made page names": lambda p: _added(
        p, "sparse.md", "# Sparse retrieval\n\nSparse retrieval ranks documents by words.\n"
    ),
    "the first removed": _hand_page_removed,
    "the other removed": lambda p: (p.wiki_dir / "more.md").unlink(),
}


def test_pages_not_the_builds_changed_by_hand_are_assembled_the_quick_way(tmp_path: Path) -> None:
    """A hand-made page added, edited (its links, its first line, its names) or removed: the
    build assembles the pages it changes (their backlinks, the links their text makes to its
    names, index.md's lines), not every page, and wiki/ equals a forced rebuild's."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    for kind, edit in HAND_EDITS.items():
        _, got, changed, written = _quick_step(project, tmp_path, kind, edit)
        assert written == changed - {"my-notes.md", "more.md"}, kind
        if "names" in kind:
            assert "- [[more|More notes]]" in got["sparse-retrieval.md"].decode(), kind  # its backlink
        assert _build(project).nothing_to_do, kind


def test_pages_not_the_builds_kept_by_no_build_yet_are_kept_by_the_next_edit(tmp_path: Path) -> None:
    """A wiki/ an older wikic left keeps no lines of the pages not the build's
    (Meta.FOREIGN_LEFT): the next edit the quick way keeps them, so that a hand edit after
    goes the quick way too; without them, a hand edit takes the full way."""
    project = make_project(tmp_path / "inc", SOURCES)
    _hand_page_added(project)
    _build(project)
    with State.open(project.state_path) as state:
        state.delete_meta(Meta.FOREIGN_LEFT)
    _hand_page_relinked(project)
    assert not _quick(build(project, BuildOptions(explain=True)))  # not known: the full way
    with State.open(project.state_path) as state:
        state.delete_meta(Meta.FOREIGN_LEFT)
    _edit_text(project)
    assert _quick(build(project, BuildOptions(explain=True)))
    _hand_page(project, "See [[HNSW]]", "Read [[HNSW]]")
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report) and report.hand == {"wiki/my-notes.md": "changed"}
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


def test_a_page_of_the_builds_edited_by_hand_is_kept_and_reported_the_quick_way(tmp_path: Path) -> None:
    """Found by the record of what wikic wrote (build/handmade.py): rendered again by every
    build and kept, the conflict reported each time, until it is as the build writes it."""
    project = make_project(tmp_path / "inc", SOURCES)
    _hand_page_added(project)
    _build(project)
    page = project.wiki_dir / "hnsw.md"
    built = page.read_text(encoding="utf-8")
    for text in (built + "\nMine.\n", built + "\nMine, again.\n"):  # edited, then edited again
        page.write_text(text, encoding="utf-8")
        for _ in range(2):  # ...and a build with nothing else changed says so again
            report = build(project, BuildOptions(explain=True))
            assert report.ok and _quick(report) and report.conflicts == ["wiki/hnsw.md"], text
            assert page.read_text(encoding="utf-8") == text and report.written == [], text
    page.write_text(built, encoding="utf-8")  # as the build writes it: no conflict
    report = build(project, BuildOptions(explain=True))
    assert (
        report.ok and _quick(report) and report.conflicts == [] and report.hand == {"wiki/hnsw.md": "changed"}
    )
    assert _build(project).nothing_to_do
    _hand_page_relinked(project)  # the pages not the build's, kept through it all
    assert _quick(build(project, BuildOptions(explain=True)))
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


def test_a_build_of_hand_changes_killed_before_it_saved_leaves_the_next_the_full_way(tmp_path: Path) -> None:
    """A build that published the pages a hand edit changed (their records with them) and was
    killed before it saved what it left (Meta.WIKI_LEFT, FOREIGN_LEFT, CONFLICTS, as restored
    here): the next finds wiki/ changed by more than the pages changed by hand, and assembles
    in full."""
    project = make_project(tmp_path / "inc", SOURCES)
    _hand_page_added(project)
    _build(project)
    marks = (Meta.WIKI_LEFT, Meta.FOREIGN_LEFT, Meta.CONFLICTS)
    with State.open(project.state_path) as state:
        saved = {mark: state.get_meta(mark) for mark in marks}
    _hand_page_relinked(project)  # a backlink more on the page of FAISS
    assert _quick(build(project, BuildOptions(explain=True)))
    with State.open(project.state_path) as state:
        for mark, value in saved.items():
            if value is None:
                state.delete_meta(mark)
            else:
                state.set_meta(mark, value)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and not _quick(report)
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


@pytest.mark.parametrize("mark", [Meta.FOREIGN_LEFT, Meta.CONFLICTS, Meta.OTHERS_LEFT])
@pytest.mark.parametrize("kept", ["not JSON", "[1]"])
def test_what_the_last_build_kept_of_wikis_pages_unreadable_means_the_full_way(
    tmp_path: Path, mark: Meta, kept: str
) -> None:
    """A mark of state.db not as a build wrote it (a damaged or hand-edited database): no
    traceback, the full assembly, which keeps it anew; the next edit the quick way again."""
    project = make_project(tmp_path / "inc", SOURCES)
    _hand_page_added(project)
    _build(project)
    with State.open(project.state_path) as state:
        state.set_meta(mark, kept)
    _hand_page_relinked(project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and not _quick(report)
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))
    _edit_text(project)
    assert _quick(build(project, BuildOptions(explain=True)))


def test_a_page_made_by_hand_under_the_slug_of_a_page_the_build_adds_is_the_full_ways(tmp_path: Path) -> None:
    """The hand-made page is kept and the build says so (a conflict), as the full assembly does."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    mine = "---\ntitle: Sparse retrieval\ntype: concept\n---\n\nMine.\n"
    (project.wiki_dir / "sparse-retrieval.md").write_text(mine, encoding="utf-8")
    _added(project, "sparse.md", "# Sparse retrieval\n\nSparse retrieval ranks documents by words.\n")
    report = build(project, BuildOptions(explain=True))
    assert report.ok and not _quick(report) and report.conflicts == ["wiki/sparse-retrieval.md"]
    assert (project.wiki_dir / "sparse-retrieval.md").read_text(encoding="utf-8") == mine


def _own_index(project: Project) -> str:
    return (project.state_dir / "index-own.md").read_text(encoding="utf-8")  # build/ownindex.py


INDEX_KEPT: dict[str, Callable[[Project], None]] = {
    "nothing else": lambda p: None,
    "source text": _edit_text,
    "a page's first sentence": _lead_rewritten,  # its line in the build's index
    "a new link target": _new_link_target,  # pages listed
    "a hand-made page added": _hand_page_added,
    "a deleted page": _deleted_page,  # pages taken out
    "index.md edited again": lambda p: (p.wiki_dir / "index.md").write_text("Ours.\n", encoding="utf-8"),
}


def test_index_md_edited_by_hand_is_kept_and_each_later_edit_patches_the_builds_own(tmp_path: Path) -> None:
    """The first build after it makes again the index it wrote, from what it kept (checked
    against the record of what it wrote), and keeps the index it makes (build/ownindex.py);
    each edit patches that the quick way, wiki/'s kept and the conflict reported, until it
    is as the build writes it."""
    project = make_project(tmp_path / "inc", SOURCES)
    (project.wiki_dir / "mine.md").write_text("---\ntitle: Mine\ntype: concept\n---\n\nMy own page.\n")
    _build(project)  # index.md lists a page not the build's too, with its description
    index = project.wiki_dir / "index.md"
    first = {"index.md edited": lambda p: index.write_text(index.read_text(encoding="utf-8") + "\nMine.\n")}
    own = project.state_dir / "index-own.md"
    for kind, edit in {**first, **INDEX_KEPT}.items():
        edit(project)
        mine = index.read_text(encoding="utf-8")
        was = own.stat().st_mtime_ns if kind == "nothing else" else None
        report = build(project, BuildOptions(explain=True))
        assert was is None or own.stat().st_mtime_ns == was, kind  # the same: not written again
        assert report.ok and _quick(report) and report.conflicts == ["wiki/index.md"], kind
        kept = {"action": "assemble wiki/index.md", "reason": "hand edit kept (use --force to overwrite)"}
        assert kept in report.explain, kind
        assert index.read_text(encoding="utf-8") == mine, kind
        want = _forced_copy(project, tmp_path / "full")
        assert _own_index(project).encode() == want["index.md"], kind
        got = wiki_files(project)
        assert _without_log(got) | {"index.md": want["index.md"]} == _without_log(want), kind
    index.write_text(_own_index(project), encoding="utf-8")  # as the build writes it: no conflict
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report) and report.conflicts == []
    assert report.hand == {"wiki/index.md": "changed"}
    assert not (project.state_dir / "index-own.md").exists()
    assert _build(project).nothing_to_do
    _new_mention(project)
    assert _quick(build(project, BuildOptions(explain=True)))
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))


@pytest.mark.parametrize("damage", ["deleted", "changed", "its hash"])
def test_the_builds_own_index_not_as_kept_means_the_full_way(tmp_path: Path, damage: str) -> None:
    """Gone, changed or not the one the last build kept (a build killed between writing it and
    saving), where the index the build last wrote cannot be made again either (a description
    changed since: it is not the index wikic wrote): the full assembly makes it anew, and the
    next edit goes the quick way again."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    index = project.wiki_dir / "index.md"
    index.write_text(index.read_text(encoding="utf-8") + "\nMine.\n", encoding="utf-8")
    _build(project)
    _lead_rewritten(project)
    assert _quick(build(project, BuildOptions(explain=True)))
    own = project.state_dir / "index-own.md"
    if damage == "deleted":
        own.unlink()
    elif damage == "changed":
        own.write_text(own.read_text(encoding="utf-8").replace("pages.", "pages!"), encoding="utf-8")
    else:
        with State.open(project.state_path) as state:
            state.set_meta(Meta.INDEX_OWN, "0" * 16)
    _edit_text(project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and not _quick(report) and report.conflicts == ["wiki/index.md"]
    assert _own_index(project).encode() == _forced_copy(project, tmp_path / "full")["index.md"]
    _new_mention(project)
    assert _quick(build(project, BuildOptions(explain=True)))
    assert _own_index(project).encode() == _forced_copy(project, tmp_path / "full")["index.md"]


@pytest.mark.parametrize("edited", [False, True])
@pytest.mark.parametrize("edit", [None, _new_mention, _new_link_target])
def test_index_md_deleted_by_hand_is_written_again_the_quick_way(
    tmp_path: Path, edited: bool, edit: Callable[[Project], None] | None
) -> None:
    """index.md deleted (`edited`: after it was kept as edited by hand), alone or with a source
    edit (a page's text, pages new): the build's written again, made from what the last build
    kept (build/ownindex.py) and patched, every page assembled the quick way, the lint summary
    patched and exact."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    index = project.wiki_dir / "index.md"
    if edited:
        index.write_text(index.read_text(encoding="utf-8") + "\nMine.\n", encoding="utf-8")
        assert _build(project).conflicts == ["wiki/index.md"]
    index.unlink()
    if edit is not None:
        edit(project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report) and report.conflicts == []
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))
    assert not (project.state_dir / "index-own.md").exists()
    with State.open(project.state_path) as state:
        assert json.loads(state.get_meta(Meta.LINT_TOTALS) or "{}")["how"] == "patched"
        assert state.get_meta(Meta.INDEX_OWN) is None
    assert report.lint == lint(project).counts()
    assert _build(project).nothing_to_do


def test_files_not_pages_changed_by_hand_are_assembled_the_quick_way(tmp_path: Path) -> None:
    """An attachment added, edited, moved to another folder, deleted (no page the build makes
    depends on one: build/handmade.py): each the quick way, wiki/ a forced rebuild's, and the
    lint summary patched (the pages that name an attachment come or gone read again)."""
    project = make_project(tmp_path / "inc", SOURCES)
    _hand_page_added(project)
    _build(project)
    image = project.wiki_dir / "img" / "diagram.png"
    steps: dict[str, Callable[[Project], object]] = {
        "an attachment added": lambda p: (image.parent.mkdir(), image.write_bytes(b"\x89PNG one")),
        "edited": lambda p: image.write_bytes(b"\x89PNG two, longer"),
        "moved to another folder, with a source edit": lambda p: (
            (p.wiki_dir / "media").mkdir(),
            image.rename(p.wiki_dir / "media" / "diagram.png"),
            _edit_text(p),
        ),
        "a hidden file beside it": lambda p: (p.wiki_dir / "media" / ".DS_Store").write_bytes(b"\0"),
        "deleted": lambda p: (p.wiki_dir / "media" / "diagram.png").unlink(),
    }
    for kind, edit in steps.items():
        report, got, changed, written = _quick_step(project, tmp_path, kind, edit)
        assert written == changed and report.hand_files, kind
        with State.open(project.state_path) as state:
            how = json.loads(state.get_meta(Meta.LINT_TOTALS) or "{}")["how"]
        assert how == "patched", kind
        assert _build(project).nothing_to_do, kind


@pytest.mark.parametrize("hand", ["a page edited", "index.md edited", "a page deleted", "log.md edited"])
@pytest.mark.parametrize("made", [False, True])
def test_a_page_the_build_wrote_changed_by_hand_with_a_source_edit_goes_the_quick_way(
    tmp_path: Path, hand: str, made: bool
) -> None:
    """A page the build wrote edited or deleted by hand, index.md or log.md edited (`made`: with
    a hand-made page added beside): found by the records of what wikic wrote (build/handmade.py).
    log.md keeps the edit: the build's entry makes it read and written whole (logfile.py)."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    if made:
        _hand_page_added(project)
    names = {"a page edited": "faiss.md", "index.md edited": "index.md", "a page deleted": "hnsw.md"}
    name = names.get(hand, "log.md")
    path = project.wiki_dir / name
    if hand == "a page deleted":
        path.unlink()
    else:
        path.write_text(path.read_text(encoding="utf-8") + "\nMine.\n", encoding="utf-8")
    _edit_text(project)
    report = build(project, BuildOptions(explain=True))
    assert _quick(report)
    want = _forced_copy(project, tmp_path / "full")
    if hand in ("a page deleted", "log.md edited"):
        assert (
            report.ok and report.conflicts == [] and _without_log(wiki_files(project)) == _without_log(want)
        )
    else:  # kept as edited, and reported, as by any build
        assert report.conflicts == [f"wiki/{name}"]
    if hand == "log.md edited":
        log = path.read_text(encoding="utf-8")
        assert "\nMine.\n" in log and log.rstrip().split("\n")[-1].startswith("- written: chunking.md")
        assert report.hand is not None and "wiki/log.md" not in report.hand
        assert _build(project).nothing_to_do


@pytest.mark.parametrize("edit", [False, True])
def test_log_md_deleted_by_hand_is_written_again_the_quick_way(tmp_path: Path, edit: bool) -> None:
    """log.md deleted (`edit`: with a source edit): written again, its head and this build's
    entry alone (logfile.append_log), every page assembled the quick way, the lint patched."""
    project = make_project(tmp_path / "inc", SOURCES)
    _build(project)
    log = project.wiki_dir / "log.md"
    log.unlink()
    if edit:
        _edit_text(project)
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report) and report.conflicts == []
    text = log.read_text(encoding="utf-8")
    assert text.startswith(logfile.HEAD) and text.count("\n## ") == 1
    assert ("- written: chunking.md" in text) == edit
    with State.open(project.state_path) as state:
        assert json.loads(state.get_meta(Meta.LINT_TOTALS) or "{}")["how"] == "patched"
    assert report.lint == lint(project).counts()
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))
    assert _build(project).nothing_to_do


def test_a_hand_made_page_whose_words_name_a_page_new_leaves_the_quick_way_open(tmp_path: Path) -> None:
    """Its [[links]] are what the names resolve, not its words: one that names the new page in
    words alone keeps the quick way; one that links to it (FULL) does not."""
    project = make_project(tmp_path / "inc", SOURCES)
    (project.wiki_dir / "words.md").write_text(
        "---\ntitle: Words\ntype: concept\n---\n\nDense retrieval; [[HNSW]].\n"
    )
    _build(project)
    (project.sources_dir / "dense.md").write_text("# Dense retrieval\n\nDense retrieval ranks by vectors.\n")
    report = build(project, BuildOptions(explain=True))
    assert report.ok and _quick(report)
    assert _without_log(wiki_files(project)) == _without_log(_forced_copy(project, tmp_path / "full"))
