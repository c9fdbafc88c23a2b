"""The incremental build: exact model-call counts for every kind of change."""

from __future__ import annotations

from pathlib import Path

from projects import Counting, make_project, run_build, wiki_files, write_schema

from wikic.wiki.page import parse_links, split_page


def test_first_build_writes_pages_index_and_log(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    report, backend = run_build(project)
    assert report.ok, report.errors
    files = wiki_files(project)
    assert {"index.md", "log.md", "faiss.md", "chunking.md", "hnsw.md"} <= set(files)
    assert backend.digests == 3
    assert report.calls == len(backend.requests) == report.ran
    chunking = split_page(files["chunking.md"].decode())
    assert chunking.meta["type"] == "concept"
    assert chunking.meta["sources"] == ["sources/rag.md", "sources/tools.md"]
    assert "[rag.md:7](../sources/rag.md#L7)" in chunking.body
    index = files["index.md"].decode()
    for name in files:
        if name not in ("index.md", "log.md"):
            assert f"[[{name[:-3]}|" in index


def test_second_build_makes_no_calls_and_writes_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    before = {p: p.stat().st_mtime_ns for p in project.wiki_dir.iterdir()}
    report, backend = run_build(project)
    assert backend.requests == []
    assert report.written == [] and report.removed == []
    assert report.up_to_date > 0 and report.ran == 0
    assert report.nothing_to_do  # decided by stat calls alone
    assert {p: p.stat().st_mtime_ns for p in project.wiki_dir.iterdir()} == before


def test_editing_one_source_reruns_its_digest_and_only_the_pages_it_feeds(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    path = project.sources_dir / "vectors.md"
    path.write_text(path.read_text().replace("fast approximate search", "fast approximate search on CPUs"))
    report, backend = run_build(project, explain=True)
    # The HNSW section changed: its digest, then the HNSW page. FAISS's claim (line 7) is unchanged.
    assert backend.digests == 1
    assert backend.writes == 1
    reasons = {e["action"]: e["reason"] for e in report.explain}
    assert reasons["digest sources/vectors.md"] == "source changed"
    assert "notes changed" in reasons["write concept: HNSW"]
    assert "wiki/hnsw.md" in report.written
    assert "wiki/chunking.md" not in report.written


def test_whitespace_only_edit_costs_no_page_writes(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    path = project.sources_dir / "rag.md"
    text = path.read_text()
    path.write_text(text.replace("\n", "  \r\n"))  # trailing spaces and CRLF: same normalised text
    report, backend = run_build(project)
    assert backend.requests == [] and report.written == []
    path.write_text("\n" + text)  # a blank line on top: line numbers shift, claims do not
    report, backend = run_build(project)
    assert backend.digests <= 1 and backend.writes == 0
    chunking = (project.wiki_dir / "chunking.md").read_text()
    assert "[rag.md:8](../sources/rag.md#L8)" in chunking  # citations follow the lines


def test_adding_a_source_relinks_existing_pages_without_rewriting_prose(tmp_path: Path) -> None:
    notes = {"vectors.md": NOTE_WITHOUT_PAGE}
    project = make_project(tmp_path, notes)
    run_build(project)
    assert "[[" not in (project.wiki_dir / "hnsw.md").read_text().split("## Sources")[0]
    (project.sources_dir / "faiss.md").write_text(
        "# FAISS notes\n\n## Quantization\n\nFAISS compresses vectors.\n"
    )
    report, backend = run_build(project)
    assert backend.digests == 1
    assert backend.writes == 1  # only the new Quantization page
    hnsw = (project.wiki_dir / "hnsw.md").read_text()
    assert "[[quantization|Quantization]]" in hnsw  # re-linked by code
    assert "wiki/hnsw.md" in report.written


NOTE_WITHOUT_PAGE = """# Vector databases

## HNSW

HNSW is a graph index; Quantization makes it smaller.
"""


def test_deleting_a_source_removes_only_the_pages_it_alone_fed(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    (project.sources_dir / "tools.md").unlink()
    report, backend = run_build(project)
    assert backend.digests == 0
    assert sorted(report.removed) == ["wiki/tools-we-use.md"]
    # FAISS and Chunking were shared: they stay, rewritten from the remaining sources.
    faiss = split_page((project.wiki_dir / "faiss.md").read_text())
    assert faiss.meta["sources"] == ["sources/vectors.md"]
    assert backend.writes == 2
    index = (project.wiki_dir / "index.md").read_text()
    assert "tools-we-use" not in index


def test_prompt_template_change_reruns_exactly_the_actions_that_use_it(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first, _ = run_build(project)
    prompts = project.root / "prompts"
    prompts.mkdir()
    from wikic.prompts import PACKAGE_DIR

    text = (PACKAGE_DIR / "write.system.j2").read_text() + "\nBe brief.\n"
    (prompts / "write.system.j2").write_text(text)
    report, backend = run_build(project, explain=True)
    assert backend.digests == 0
    assert backend.writes == first.ran - 3
    assert all(
        e["reason"] == "prompt template changed" for e in report.explain if e["action"].startswith("write")
    )


def test_writing_rule_change_reruns_page_writes_only(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first, _ = run_build(project)
    write_schema(project, rules=["Use present tense."])
    report, backend = run_build(project, explain=True)
    assert backend.digests == 0 and backend.writes == first.ran - 3
    assert {e["reason"] for e in report.explain} == {"writing rules changed"}


def test_model_change_reruns_everything_and_going_back_is_cached(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first, _ = run_build(project)
    write_schema(project, name="v2")
    report, backend = run_build(project, Counting("v2"), explain=True)
    assert len(backend.requests) == first.ran
    assert all(
        "model changed" in e["reason"] for e in report.explain if not e["action"].startswith("assemble")
    )
    write_schema(project, name="v1")
    report, backend = run_build(project)
    assert backend.requests == [] and report.cached == first.ran


def test_hand_edit_is_kept_as_a_conflict_until_forced(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    page = project.wiki_dir / "faiss.md"
    edited = page.read_text() + "\nMy own note.\n"
    page.write_text(edited)
    path = project.sources_dir / "tools.md"
    path.write_text(path.read_text().replace("by Meta", "by Meta AI"))
    report, _ = run_build(project)
    assert report.conflicts == ["wiki/faiss.md"]
    assert page.read_text() == edited
    report, _ = run_build(project)  # still reported, still kept
    assert report.conflicts == ["wiki/faiss.md"] and page.read_text() == edited
    report, backend = run_build(project, force=True)
    assert "wiki/faiss.md" in report.written and "My own note" not in page.read_text()
    assert report.conflicts == []


def test_deleted_output_is_restored_without_model_calls(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    (project.wiki_dir / "hnsw.md").unlink()
    report, backend = run_build(project, explain=True)
    assert backend.requests == [] and report.written == ["wiki/hnsw.md"]
    assert {"action": "assemble wiki/hnsw.md", "reason": "output missing"} in report.explain


def test_offline_miss_fails_naming_the_action(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    (project.sources_dir / "new.md").write_text("# New\n\n## Topic X\n\nSomething new.\n")
    report, backend = run_build(project, offline=True)
    assert backend.requests == []
    assert not report.ok
    assert any("--offline" in e["message"] and "digest sources/new.md" in e["message"] for e in report.errors)
    assert (project.wiki_dir / "faiss.md").exists()  # nothing already built is lost


def test_dry_run_changes_nothing_and_estimates_tokens(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    report, backend = run_build(project, dry_run=True)
    assert backend.requests == []
    assert not any(project.wiki_dir.glob("*.md"))
    assert [w["action"] for w in report.would_run] == [
        "digest sources/rag.md",
        "digest sources/tools.md",
        "digest sources/vectors.md",
    ]
    assert all(w["estimated_tokens"] > 50 for w in report.would_run)


def test_parallel_build_gives_the_same_wiki(tmp_path: Path) -> None:
    serial = make_project(tmp_path / "a")
    parallel = make_project(tmp_path / "b")
    run_build(serial)
    run_build(parallel, jobs=4)
    strip_log = lambda files: {k: v for k, v in files.items() if k != "log.md"}  # noqa: E731
    assert strip_log(wiki_files(serial)) == strip_log(wiki_files(parallel))


def test_every_link_resolves_to_a_page(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    stems = {p.stem for p in project.wiki_dir.glob("*.md")}
    for page in project.wiki_dir.glob("*.md"):
        for link in parse_links(page.read_text()):
            assert link.target in stems, (page.name, link)


def test_long_source_is_digested_in_parts(tmp_path: Path) -> None:
    body = "\n".join(f"## Section {i}\n\nText of section {i}.\n" for i in range(60))
    project = make_project(tmp_path, {"long.md": "# Long\n\n" + body})
    report, backend = run_build(project)
    assert report.ok
    # 241 lines in parts of at most 120, each cut before a heading: 1-118, 119-234, 235-241.
    assert backend.digests == 3
    assert (project.wiki_dir / "section-59.md").exists()


def test_a_hand_made_page_is_indexed_by_the_next_build(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    (project.wiki_dir / "my-page.md").write_text("---\ntitle: My page\ntype: concept\n---\n\nAbout FAISS.\n")
    report, backend = run_build(project)
    assert not report.nothing_to_do and backend.requests == []
    assert "[[my-page|My page]]" in (project.wiki_dir / "index.md").read_text()
    assert (project.wiki_dir / "my-page.md").read_text().endswith("About FAISS.\n")  # never touched
    report, _ = run_build(project)
    assert report.nothing_to_do


def test_without_state_sealed_pages_are_rebuilt_and_edited_ones_kept(tmp_path: Path) -> None:
    """A fresh clone of a repository with a committed wiki/ (no .wikic/)."""
    import shutil

    project = make_project(tmp_path)
    run_build(project)
    shutil.rmtree(project.state_dir)
    edited = project.wiki_dir / "faiss.md"
    edited.write_text(edited.read_text().replace("similarity search", "similarity search (my words)"))
    path = project.sources_dir / "vectors.md"
    path.write_text(path.read_text().replace("fast approximate search", "fast approximate search on CPUs"))
    report, _ = run_build(project)
    assert report.conflicts == ["wiki/faiss.md"]  # the seal no longer matches: a person's edit
    assert "my words" in edited.read_text()
    assert "wiki/hnsw.md" in report.written  # sealed and intact: wikic's own output, safe to replace
    assert "on CPUs" in (project.wiki_dir / "hnsw.md").read_text()


def test_an_unreachable_model_is_given_up_after_three_actions(tmp_path: Path) -> None:
    from wikic.errors import Unavailable

    class Down:
        model_id = "scripted:v1"
        calls = 0

        def complete(self, request):  # type: ignore[no-untyped-def]
            Down.calls += 1
            raise Unavailable("cannot reach http://127.0.0.1:9/v1: is the server running?")

    project = make_project(tmp_path, {f"n{i}.md": f"# N{i}\n\n## T{i}\n\nFact {i} here.\n" for i in range(6)})
    report = run_build(project, Down())[0]  # type: ignore[arg-type]
    assert Down.calls == 3 and report.failed == 6
    assert sum("not run: the model failed 3 actions in a row" in e["message"] for e in report.errors) == 3
    report, backend = run_build(project)  # the server is back: everything is tried again
    assert report.ok and backend.digests == 6


def test_an_edited_hand_made_page_is_indexed_anew(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    run_build(project)
    mine = project.wiki_dir / "my-notes.md"
    mine.write_text("---\ntitle: My notes\ntype: concept\n---\n\nFirst version.\n")
    run_build(project)
    mine.write_text("---\ntitle: My better notes\ntype: concept\n---\n\nSecond version.\n")
    report, backend = run_build(project)
    assert backend.requests == [] and not report.nothing_to_do
    index = (project.wiki_dir / "index.md").read_text()
    assert "[[my-notes|My better notes]] — Second version." in index


def test_a_source_with_a_hash_in_its_name_keeps_its_actions_up_to_date(tmp_path: Path) -> None:
    """An action belongs to its source by the source's whole path, `#` and all (a digest part
    is `#<n>` at the end): the build must not forget the actions of a live source."""
    project = make_project(tmp_path, {"c#-notes.md": "# C# notes\n\n## Generics\n\nC# has generics.\n"})
    for _ in range(2):  # full passes: every action looked up, and the records kept or dropped
        run_build(project, force=True)
    report, backend = run_build(project, force=True)
    assert backend.requests == [] and report.cached == 0 and report.up_to_date > 0
