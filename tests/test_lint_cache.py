"""The lint cache after an edit of a few pages (lint/cache.py's O(change) path): the findings
equal a full `wikic lint` after each kind of edit, whether the cache is stored (the build, `wikic
site`) or only read (`wikic serve`), and a page changed within its stat's tick is still seen."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from forkkit import Forks
from projects import make_project, run_build

from wikic import snapshot
from wikic.fsutil import TMP_MARK
from wikic.lint.runner import lint, lint_cached
from wikic.project import Project
from wikic.state import Meta, State
from wikic.wiki.read import PageStats, attachments, page_files

HOUR = 3600 * 10**9

HAND = """---
title: My notes
type: concept
---

# My notes

We should try [[Product quantization]] and [[HNSW]] and [[Nothing at all]].
The **Quantum foam** idea came up. Chunks are split [rag.md:7](../sources/rag.md#L7).

## Topics

- Quantum foam
"""
OTHER = """---
title: Other notes
type: concept
---

# Other notes

Again **Quantum foam** and [[My notes]].
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Project:
    project = make_project(tmp_path_factory.mktemp("lintcache") / "p")
    (project.wiki_dir / "my-notes.md").write_text(HAND, encoding="utf-8")
    (project.wiki_dir / "other-notes.md").write_text(OTHER, encoding="utf-8")
    assert run_build(project)[0].ok
    return project


def _copy(built: Project, tmp_path: Path) -> Project:
    import shutil

    shutil.copytree(built.root, tmp_path / "p", symlinks=True)
    project = Project(tmp_path / "p")
    for path in project.wiki_dir.iterdir():  # as pages written long ago: their stats are trusted
        _age(path)
    with State.open(project.state_path) as state:
        lint_cached(project, state, fresh=True)
    return project


def _age(path: Path, step: int = 0) -> None:
    past = time.time_ns() - 2 * HOUR + step * 10**9
    os.utime(path, ns=(past, past))


def _write(project: Project, name: str, text: str, step: int = 1) -> None:
    path = project.wiki_dir / name
    path.write_text(text, encoding="utf-8")
    _age(path, step)


def _same(project: Project, store: bool = True) -> list[dict[str, object]]:
    with State.open(project.state_path) as state:
        cached = [f.to_json() for f in lint_cached(project, state, store=store).findings]
    assert cached == [f.to_json() for f in lint(project).findings]
    return cached


EDITS: dict[str, Callable[[Project], None]] = {
    "a built page's text (hand-edit)": lambda p: _write(
        p, "faiss.md", (p.wiki_dir / "faiss.md").read_text().replace("\n\n", "\n\nAn added line.\n\n", 2)
    ),
    "a line above the links (they move)": lambda p: _write(
        p, "my-notes.md", HAND.replace("# My notes\n", "# My notes\n\nA new first line.\n")
    ),
    "two links on one line split in two": lambda p: _write(
        p, "my-notes.md", HAND.replace(" and [[HNSW]] and", "\nand [[HNSW]]\nand")
    ),
    "a link added": lambda p: _write(p, "other-notes.md", OTHER + "\nSee [[Gone page]].\n"),
    "a bold term removed": lambda p: _write(p, "other-notes.md", OTHER.replace("**Quantum foam**", "foam")),
    "a page added": lambda p: _write(p, "third.md", OTHER.replace("Other notes", "Third notes")),
    "a page deleted": lambda p: (p.wiki_dir / "other-notes.md").unlink(),
    "index.md edited": lambda p: _write(p, "index.md", "# Home\n\n- [[faiss]]\n"),
    "a cited source edited, no build": lambda p: (p.sources_dir / "rag.md").write_text(
        (p.sources_dir / "rag.md").read_text().replace("chunks", "pieces")
    ),
    "a lint switch added": lambda p: _write(
        p, "my-notes.md", HAND + "\n<!-- wikic-lint: disable=broken-link -->\n"
    ),
}


@pytest.mark.parametrize("kind", list(EDITS))
@pytest.mark.parametrize("store", [True, False], ids=["stored", "read-only"])
def test_the_cache_equals_a_full_lint_after_each_edit(
    built: Project, tmp_path: Path, kind: str, store: bool
) -> None:
    project = _copy(built, tmp_path)
    before = _same(project)
    assert before, "the hand-made pages give the rules something to find"
    EDITS[kind](project)
    after = _same(project, store)
    assert _same(project) == after  # and again, from what the last one stored (or did not)
    if kind != "a bold term removed":
        assert after != before, kind


def test_read_only_stores_nothing(built: Project, tmp_path: Path) -> None:
    project = _copy(built, tmp_path)
    EDITS["a built page's text (hand-edit)"](project)
    before = _dump(project)
    _same(project, store=False)
    assert _dump(project) == before


def _dump(project: Project) -> list[object]:
    db = sqlite3.connect(project.state_path)
    try:
        rows = db.execute("SELECT * FROM lint_pages ORDER BY rel").fetchall()
        meta = db.execute("SELECT * FROM meta WHERE k LIKE 'lint%' ORDER BY k").fetchall()
    finally:
        db.close()
    return [rows, meta]


def test_a_page_changed_within_its_stat_tick_is_seen(built: Project, tmp_path: Path) -> None:
    """A page recorded while its mtime was recent is not trusted by its stat: the same size
    and mtime with other bytes (an edit in the same tick) is still read again."""
    project = _copy(built, tmp_path)
    path = project.wiki_dir / "my-notes.md"
    soon = time.time_ns() + HOUR  # not older than the lint that records it, however slow
    os.utime(path, ns=(soon, soon))
    _same(project)
    path.write_text(HAND.replace("[[HNSW]]", "[[HNSX]]"), encoding="utf-8")  # same size
    os.utime(path, ns=(soon, soon))
    assert any("HNSX" in str(f["message"]) for f in _same(project))


def test_one_scan_of_wiki_lists_what_page_files_and_attachments_do(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "img" / "deep").mkdir(parents=True)
    (wiki / ".hidden").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "far.png").write_bytes(b"x")
    (wiki / "linked").symlink_to(tmp_path / "elsewhere")
    for name in ("a.md", "B.md", "index.md", "log.md", ".x.md", "Diagram.PNG", "notes.txt", ".keep"):
        (wiki / name).write_text("x")
    (wiki / "img" / "deep" / "scan.pdf").write_text("x")
    (wiki / "img" / "page.md").write_text("x")
    (wiki / ".hidden" / "secret.png").write_text("x")
    taken = PageStats.take(wiki)
    assert [wiki / name for name, _ in taken.stats] == page_files(wiki)
    assert taken.attachments == attachments(wiki)


def test_the_summary_walk_gives_the_lints_scan_without_listing_wiki_again(tmp_path: Path) -> None:
    """`wikic lint` takes its stats of wiki/ from the walk its summary keeps (snapshot.wiki):
    the same pages and attachments as its own scan, or, past plain files and folders, the scan."""
    wiki = tmp_path / "wiki"
    for folder in ("img/deep", ".hidden/inner", "sub/.dot", "x.md", ".obsidian"):
        (wiki / folder).mkdir(parents=True, exist_ok=True)
    files = [
        *("a.md", "B.md", "index.md", "log.md", ".x.md", "tab\tname.md", f"{TMP_MARK}9-a.md.part"),
        *("Diagram.PNG", "notes.txt", ".keep", "ünï.JPG", "img/deep/scan.pdf", "img/page.md", "img/.hid.png"),
        *(".hidden/secret.png", ".hidden/inner/deeper.png", "sub/.dot/no.png", "sub/Yes.PNG"),
        *("x.md/inside.gif", ".obsidian/workspace.json"),
    ]
    for name in files:
        (wiki / name).write_text("x" * len(name))
    project = Project(tmp_path)
    taken = time.time_ns()
    derived = PageStats.of_walk(snapshot.wiki(project), taken)
    scanned = PageStats.take(wiki)
    assert derived is not None and derived.taken_ns == taken
    assert (derived.stats, derived.attachments) == (scanned.stats, scanned.attachments)
    assert "yes.png" in derived.attachments and "tab\tname.md" in dict(derived.stats)

    (wiki / "linked.md").symlink_to(wiki / "a.md")  # a link: the scan reads it (it follows it)
    assert PageStats.of_walk(snapshot.wiki(project), taken) is None
    (wiki / "linked.md").unlink()
    os.mkfifo(wiki / "pipe.png")
    assert PageStats.of_walk(snapshot.wiki(project), taken) is None
    assert PageStats.of_walk(snapshot.wiki(Project(tmp_path / "none")), taken) is None


def _many(project: Project, count: int) -> None:
    """Hand pages enough for the full lint's batches (full.CHECK_AT_ONCE) to take several:
    links found and broken, bold terms and Topics items several pages share, twins, a switch,
    a page that cannot be read and a saved answer (both read by every lint)."""
    for n in range(count):
        links = f"[[Page {(n + 1) % count}]], [[page-{(n * 7) % count}|seven]] and [[Missing {n % 5}]]"
        extra = "\n<!-- wikic-lint: disable=broken-link -->\n" if n % 37 == 0 else ""
        text = (
            f"---\ntitle: Page {n}\ntype: concept\n---\n\n# Page {n}\n\nIt links {links}.\n"
            f"The **Shared idea {n % 4}** comes up.\n\n## Topics\n\n- Common topic {n % 3}\n{extra}"
        )
        _write(project, f"page-{n}.md", text)
    _write(
        project, "page-twin.md", "---\ntitle: Page 1.\ntype: concept\n---\n\n# Page 1.\n\nSee [[Page 2]].\n"
    )
    _write(project, "answer-one.md", "---\ntitle: An answer\ntype: answer\n---\n\nAbout [[nowhere]].\n")
    (project.wiki_dir / "unreadable.md").write_bytes(b"\xff\xfe not utf-8")


def test_a_full_lint_over_several_batches_equals_a_full_lint(built: Project, tmp_path: Path) -> None:
    from wikic.lint.full import CHECK_AT_ONCE

    project = _copy(built, tmp_path)
    _many(project, 2 * CHECK_AT_ONCE + 30)
    with State.open(project.state_path) as state:
        first = [f.to_json() for f in lint_cached(project, state, fresh=True).findings]
    assert first == [f.to_json() for f in lint(project).findings]
    assert {f["rule"] for f in first} >= {"broken-link", "missing-page", "duplicate-page", "frontmatter"}
    for n in range(0, 2 * CHECK_AT_ONCE, 3):  # some pages read again, the others from the cache
        _write(
            project,
            f"page-{n}.md",
            f"---\ntitle: Page {n}\ntype: concept\n---\n\n# Page {n}\n\n[[Gone {n}]]\n",
            2,
        )
    _write(
        project, "page-new.md", "---\ntitle: New page\ntype: concept\n---\n\nSee [[Page 3]].\n"
    )  # every page
    assert _same(project) != first
    assert _same(project) == _same(project, store=False)


def _lint_tables(project: Project) -> list[tuple[object, ...]]:
    with sqlite3.connect(project.state_path) as db:
        tables = ["lint_pages", "lint_records", "lint_sources", "lint_deps", "lint_mentions", "lint_text"]
        rows = [row for t in tables for row in db.execute(f"SELECT '{t}', * FROM {t} ORDER BY 2, 3")]
        across = db.execute("SELECT v FROM meta WHERE k = ?", (Meta.LINT_ACROSS.value,)).fetchone()
    return [*rows, ("across", {**json.loads(across[0]), "stored": ""})]


def test_a_full_lint_shared_with_forked_children_is_the_lint_of_one_process(
    built: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forks: Forks
) -> None:
    """A full lint reads and checks the pages of each full.ROUND but a first share in forked
    children, which send back what the lint keeps of each page: the findings and everything it
    stores are those of one process, the pages read or from the cache, a saved answer and a
    page that cannot be read (both kept whole) among a child's."""
    from wikic import forked
    from wikic.lint import full

    if forked.shares(100, 10) < 2:
        pytest.skip("forks only on Linux with two CPUs")
    alone = _copy(built, tmp_path)
    _many(alone, 230)
    monkeypatch.setattr(forked, "EACH", 10)
    monkeypatch.setattr(full, "ROUND", 60)  # in rounds of about 60, each shared
    for n in range(0, 230, 9):  # saved answers and unreadable pages among every share
        answer = f"---\ntitle: Answer {n}\ntype: answer\n---\n\nOf [[Page {n}]].\n"
        _write(alone, f"page-{n}-answer.md", answer)
        (alone.wiki_dir / f"page-{n}-bad.md").write_bytes(b"\xff\xfe not UTF-8")
    for path in alone.wiki_dir.glob("*.md"):  # written now, and so not trusted: as written long ago
        _age(path)
    reads, entry = tmp_path / "reads", full._entry

    def logged(seen: object, rel: str, st: object, row: object) -> object:
        with reads.open("a") as log:  # appended to by the children too
            log.write(f"{os.getpid()} {rel}\n")
        return entry(seen, rel, st, row)  # type: ignore[arg-type]

    monkeypatch.setattr(full, "_entry", logged)
    shared = Project(shutil.copytree(alone.root, tmp_path / "shared", symlinks=True))  # the same stats

    def linted(project: Project, fresh: bool) -> tuple[list[dict[str, object]], list[tuple[object, ...]]]:
        with State.open(project.state_path) as state:
            if not fresh:  # the full lint, each page from its row where it still holds
                state.set_meta(Meta.LINT_ACROSS, "")
            found = [f.to_json() for f in lint_cached(project, state, fresh=fresh).findings]
        return found, _lint_tables(project)

    def answered(project: Project) -> None:  # a page with a row, now always read again
        _write(project, "page-4.md", "---\ntitle: Page 4\ntype: answer\n---\n\nOf [[Page 5]].\n", 5)

    for step, edit in enumerate([lambda p: None, answered, *EDITS.values()]):
        edit(alone)
        _write(alone, "page-3.md", f"---\ntitle: Page 3\n---\n\nNow [[Gone {step}]].\n", 3 + step)
        for folder in ("wiki", "sources"):  # the same edits, at the same stats
            shutil.rmtree(shared.root / folder)
            shutil.copytree(alone.root / folder, shared.root / folder, symlinks=True)
        forks.allowed = False
        one = linted(alone, fresh=step == 0)
        assert forks == [] and one[0] == [f.to_json() for f in lint(alone).findings]
        forks.allowed = True
        reads.unlink()
        assert linted(shared, fresh=step == 0) == one, step
        assert forks and one[0]
        assert ("wiki/page-4.md" in {row[1] for row in one[1] if row[0] == "lint_pages"}) == (step == 0)
        by: dict[str, set[int]] = {}
        for line in reads.read_text().splitlines():
            pid, rel = line.split(" ", 1)
            by.setdefault(rel, set()).add(int(pid))
        here = {rel for rel, pids in by.items() if os.getpid() in pids}
        assert 0 < len(here) < len(by) * 2 / 3  # the children read most pages
        back = {rel for rel in here if by[rel] & set(forks)}  # kept whole: left to this process
        whole = ("-answer.md", "-bad.md", "/unreadable.md", *(["/page-4.md"] if step else []))  # answered
        assert back and all(rel.endswith(whole) for rel in back)
        forks.clear()
