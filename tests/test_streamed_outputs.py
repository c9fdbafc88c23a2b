"""A full build holds its pages' texts one batch at a time, not all at once: assemble hands
publish how to make each page (outputs.Outputs), publish makes each as it writes it and lets
it go, and a full plan's rows go into state.db as they are made (keptplan.EveryRow). What the
build writes stays what it wrote before (tests/test_incremental_outputs.py: byte for byte)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.projects import NOTES, make_project, run_build, wiki_files
from wikic.build import assemble as assemble_module
from wikic.build import pipeline, publish
from wikic.build.linker import PageEntry
from wikic.build.outputs import Outputs
from wikic.build.plan import PagePlan
from wikic.build.run import BuildOptions, build
from wikic.state import State


def test_outputs_make_each_text_when_taken_and_forget_how() -> None:
    made: list[str] = []

    def page() -> str:
        made.append("b.md")
        return "the page\n"

    out = Outputs()
    out.put("b.md", page)
    out.put("index.md", "the index\n")
    assert made == [] and sorted(out) == ["b.md", "index.md"] and len(out) == 2
    assert out["b.md"] == "the page\n" and made == ["b.md"]  # read: made again when taken
    assert out.take("b.md") == "the page\n" and made == ["b.md", "b.md"]
    assert "b.md" in out and len(out) == 2  # still named: publish prunes by the names
    with pytest.raises(KeyError, match="taken by publish"):
        out["b.md"]
    assert out.take("index.md") == "the index\n"


def test_a_full_build_makes_each_page_as_publish_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No page's text exists when assemble returns; publish makes each once and keeps none."""
    made: list[str] = []
    render = assemble_module.page_text

    def counted(page: PagePlan, body: str, extra: list[assemble_module.PageEntry]) -> str:
        made.append(page.slug)
        return render(page, body, extra)

    seen: dict[str, object] = {}
    handed = pipeline.publish

    def spy(root: Path, outputs: Mapping[str, str], *args: object, **kwargs: object) -> None:
        seen["made before publish"] = list(made)
        seen["outputs"] = outputs
        handed(root, outputs, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(assemble_module, "page_text", counted)
    monkeypatch.setattr(pipeline, "publish", spy)
    project = make_project(tmp_path / "p", NOTES)
    assert build(project, BuildOptions()).ok
    outputs = seen["outputs"]
    assert isinstance(outputs, Outputs)
    assert seen["made before publish"] == []
    pages = sorted(name for name in outputs if name != "index.md")
    assert sorted(f"{slug}.md" for slug in made) == pages  # each made once, by publish
    assert set(wiki_files(project)) >= set(outputs)
    for name in outputs:  # every text taken: none left held
        with pytest.raises(KeyError):
            outputs[name]


def test_a_full_plan_keeps_a_row_for_every_page(tmp_path: Path) -> None:
    """Its rows are made as state.db takes them (EveryRow): one for each page, headed by its slug."""
    project = make_project(tmp_path / "p", NOTES)
    report = build(project, BuildOptions())
    assert report.ok and report.pages > len(NOTES)
    with sqlite3.connect(project.state_path) as db:
        rows = dict(db.execute("SELECT id, page FROM kept_pages").fetchall())
    slugs = {bytes(row).split(b"\n", 1)[0].decode() for row in rows.values()}
    assert len(rows) == report.pages
    assert {f"{slug}.md" for slug in slugs} == set(wiki_files(project)) - {"index.md", "log.md"}


def test_a_kept_blob_reads_back_as_written(tmp_path: Path) -> None:
    """Written into its row in place (state.incremental.put_kept), not bound as a parameter."""
    state = State.open(tmp_path / "state.db")
    try:
        big = bytes(range(256)) * 4096  # 1 MB, no run of zeros
        state.keep("merge", big)
        state.keep("merge", b"since", b"x\x00y")  # beside it: merge+
        state.keep("empty", b"")
        assert state.kept("merge") == big and state.kept("merge+") == b"x\x00y"
        assert state.kept("empty") == b""
        state.keep("merge", big[::-1])  # replaced, and merge+ let go
        assert state.kept("merge") == big[::-1] and state.kept("merge+") is None
    finally:
        state.close()


def _io() -> tuple[int, int]:
    """Bytes this process wrote and read through the kernel so far (/proc/self/io)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["wchar"]), int(fields["rchar"])


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts the bytes by /proc/self/io")
def test_a_kept_blob_written_with_room_spills_less_to_the_wal(tmp_path: Path) -> None:
    """A blob put in place of another with room in SQLite's cache (state.incremental.roomy):
    each page written about once, not once for each of the zeroing, the allocating and the
    writing, nor read back; read back the same, and the cache as it was after."""

    def written_and_read(room: bool) -> tuple[float, float]:
        state = State.open(tmp_path / f"{room}.db")
        try:
            old, new = bytes(range(256)) * 32768, bytes(range(255, -1, -1)) * 32768  # 8 MB each
            state.keep("merge", old)
            state.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cache = state.db.execute("PRAGMA cache_size").fetchone()[0]
            before = _io()
            state.keep("merge", new, room=room)
            after = _io()
            assert state.kept("merge") == new
            assert state.db.execute("PRAGMA cache_size").fetchone()[0] == cache
            return (after[0] - before[0]) / len(new), (after[1] - before[1]) / len(new)
        finally:
            state.close()

    plain, roomy = written_and_read(False), written_and_read(True)
    assert plain[0] > 3 and plain[1] > 4  # the blob's size, written and read
    assert roomy[0] < 2.5 and roomy[1] < 2.5


def test_index_pieces_end_as_the_index_text_did(monkeypatch: pytest.MonkeyPatch) -> None:
    """index.md made a few lines at a time: its text as one made whole was, its end stripped
    (blank lines, the last line's trailing spaces) and only there."""
    entries = [PageEntry("b", "B", "concept", [], "said  "), PageEntry("a", "A", "entity", [], "too  ")]
    entries += [PageEntry(f"c{n}", f"C{n}", "concept") for n in range(5)]
    whole = assemble_module.render_index("Wiki", "", entries, ["entity", "concept"])
    assert whole == (
        "# Wiki\n\n7 pages.\n\n## Entities\n\n- [[a|A]] — too  \n\n## Concepts\n\n- [[b|B]] — said  \n"
        + "".join(f"- [[c{n}|C{n}]]\n" for n in range(5))
    )
    reordered = assemble_module.render_index("Wiki", "", entries, ["concept", "entity"])
    assert reordered.endswith("- [[c4|C4]]\n\n## Entities\n\n- [[a|A]] — too\n")  # stripped at its end
    monkeypatch.setattr(assemble_module, "INDEX_PIECE", 2)
    pieces = assemble_module.index_pieces("Wiki", "", entries, ["entity", "concept"])
    assert len(pieces) > 3 and all(p.endswith("\n") for p in pieces) and "".join(pieces) == whole


def test_a_file_is_compared_with_its_new_bytes_a_piece_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(publish, "PIECE", 4)
    path, data = tmp_path / "index.md", b"0123456789abcdef-"
    assert publish.holds(path, data) is None
    path.write_bytes(data)
    assert publish.holds(path, data) is True
    path.write_bytes(data[:-2] + b"x-")  # the same size, its last piece not the same
    assert publish.holds(path, data) is False
    path.write_bytes(data + b"more")
    assert publish.holds(path, data) is False
    path.write_bytes(b"0123")  # one piece or less: read at once
    assert publish.holds(path, b"0123") is True and publish.holds(path, b"0124") is False


def test_pages_compared_by_pieces_are_written_kept_and_forced_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every page and index.md longer than a piece: nothing written again where nothing changed;
    a page changed by hand to its own size (its last pieces differ) written again by --force; one
    edited by hand kept (a conflict, hashed from the file) until --force."""
    monkeypatch.setattr(publish, "PIECE", 64)
    project = make_project(tmp_path / "p", NOTES)
    first, _ = run_build(project)
    assert first.ok and "wiki/index.md" in first.written
    again, _ = run_build(project, force=True)
    assert again.written == [] and again.conflicts == []
    page = project.wiki_dir / "faiss.md"
    text = page.read_text()
    at = text.rindex("Meta")  # past the first pieces
    assert at > 64
    page.write_text(text[:at] + "Mata" + text[at + 4 :])  # the same size
    report, _ = run_build(project, force=True)
    assert report.written == ["wiki/faiss.md"] and page.read_text() == text
    edited = text + "\nMy own note.\n"
    page.write_text(edited)
    (project.sources_dir / "tools.md").write_text(
        (project.sources_dir / "tools.md").read_text().replace("by Meta", "by Meta AI")
    )
    report, _ = run_build(project)
    assert report.conflicts == ["wiki/faiss.md"] and page.read_text() == edited
    report, _ = run_build(project, force=True)
    assert "wiki/faiss.md" in report.written and page.read_text() != edited and report.conflicts == []


def test_a_page_deleted_by_hand_while_publish_looks_at_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page found not as the build makes it, then gone before publish hashes it (deleted by
    hand meanwhile): written, not an error; one gone before a --force build removes it: its
    record dropped, nothing reported removed."""
    project = make_project(tmp_path / "p", NOTES)
    run_build(project)
    page = project.wiki_dir / "faiss.md"
    page.write_text(page.read_text() + "\nMy own note.\n")
    looked = publish.holds

    def then_deleted(path: Path, data: bytes) -> bool | None:
        same = looked(path, data)
        if path.name == "faiss.md":
            path.unlink()
        return same

    monkeypatch.setattr(publish, "holds", then_deleted)
    tools = project.sources_dir / "tools.md"
    tools.write_text(tools.read_text().replace("by Meta", "by Meta AI"))
    report, _ = run_build(project)
    assert report.ok and report.conflicts == [] and "wiki/faiss.md" in report.written
    assert "Meta AI" in page.read_text()
    monkeypatch.setattr(publish, "holds", looked)
    tools.unlink()  # its page goes; deleted by hand first
    gone = project.wiki_dir / "tools-we-use.md"
    assert gone.exists()
    gone.unlink()
    report, _ = run_build(project, force=True)
    assert report.ok and "wiki/tools-we-use.md" not in report.removed and not gone.exists()
    with State.open(project.state_path) as state:
        assert "wiki/tools-we-use.md" not in state.files()
