"""log.md (build/logfile.py), on real files: an entry appended where the log is as wikic left it,
the same bytes a rewrite makes; a torn append kept and closed; a hand edit kept, then appended
after; a scrub rewriting it whole."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from projects import make_project, run_build

from wikic.build.logfile import CUT, HEAD, REL, append_log
from wikic.build.report import Report
from wikic.state import State

T0 = 1_700_000_000.0


@pytest.fixture
def state(tmp_path: Path) -> Iterator[State]:
    (tmp_path / "wiki").mkdir()
    opened = State.open(tmp_path / "state.db")
    yield opened
    opened.close()


def built(*written: str, pages: int = 3) -> Report:
    report = Report(pages=pages)
    report.written = [f"wiki/{name}" for name in written]
    report.ran = len(written)
    return report


def log(root: Path) -> Path:
    return root / REL


def test_appends_where_the_log_is_as_wikic_left_it(tmp_path: Path, state: State) -> None:
    assert append_log(tmp_path, state, built("a.md", "b.md"), T0)
    first = log(tmp_path).stat().st_ino
    assert append_log(tmp_path, state, built("c.md"), T0 + 1)
    assert not append_log(tmp_path, state, built(), T0 + 2)  # nothing changed: no entry
    assert log(tmp_path).stat().st_ino == first  # appended to, not replaced
    text = log(tmp_path).read_text()
    assert text.startswith(HEAD) and text.count("\n## ") == 2
    assert text.endswith("- written: c.md\n")
    # the same bytes as the log written whole (no record: nothing to trust)
    other = tmp_path / "other"
    (other / "wiki").mkdir(parents=True)
    fresh = State.open(other / "state.db")
    try:
        append_log(other, fresh, built("a.md", "b.md"), T0)
        fresh.remove_file(REL)
        append_log(other, fresh, built("c.md"), T0 + 1)
    finally:
        fresh.close()
    assert log(other).read_bytes() == log(tmp_path).read_bytes()


def test_the_record_follows_each_append(tmp_path: Path, state: State) -> None:
    append_log(tmp_path, state, built("a.md"), T0)
    append_log(tmp_path, state, built("b.md"), T0 + 1)
    rec = state.files_of([REL])[REL]
    st = log(tmp_path).stat()
    assert (rec.size, rec.mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_a_torn_append_is_kept_and_closed(tmp_path: Path, state: State) -> None:
    append_log(tmp_path, state, built("a.md"), T0)
    with log(tmp_path).open("ab") as f:  # a build killed halfway through its append
        f.write(b"\n## 2023-11-14 22:13:21 build\n\n- 1 model actions ran, 0 cach")
    assert append_log(tmp_path, state, built("b.md"), T0 + 5)
    text = log(tmp_path).read_text()
    assert f"- 1 model actions ran, 0 cach\n{CUT}\n\n## " in text
    assert text.endswith("- written: b.md\n") and text.count("\n## ") == 3
    # closed and recorded: the next build appends again
    ino = log(tmp_path).stat().st_ino
    append_log(tmp_path, state, built("c.md"), T0 + 6)
    assert log(tmp_path).stat().st_ino == ino and log(tmp_path).read_text().startswith(text)


def test_a_torn_append_is_closed_by_a_build_with_nothing_to_log(tmp_path: Path, state: State) -> None:
    append_log(tmp_path, state, built("a.md"), T0)
    with log(tmp_path).open("ab") as f:
        f.write(b"\n## 2023-11-14 22:13:21 build\n\n- written: b.m")
    assert append_log(tmp_path, state, built(), T0 + 5)
    assert log(tmp_path).read_text().endswith(f"- written: b.m\n{CUT}\n")


def test_a_whole_entry_left_unrecorded_is_kept_as_it_is(tmp_path: Path, state: State) -> None:
    """Killed after its append, before the record: the entry is whole, and stays so."""
    append_log(tmp_path, state, built("a.md"), T0)
    whole = b"\n## 2023-11-14 22:13:21 build\n\n- 1 model actions ran, 0 cached, 0 up to date\n"
    with log(tmp_path).open("ab") as f:
        f.write(whole)
    before = log(tmp_path).read_bytes()
    assert not append_log(tmp_path, state, built(), T0 + 5)
    assert log(tmp_path).read_bytes() == before and CUT not in before.decode()
    append_log(tmp_path, state, built("b.md"), T0 + 6)
    assert log(tmp_path).read_bytes().startswith(before)


def test_a_hand_edit_is_kept_and_appended_after(tmp_path: Path, state: State) -> None:
    append_log(tmp_path, state, built("a.md"), T0)
    path = log(tmp_path)
    edited = path.read_text().replace("# Build log\n", "# Build log\n\nA note of mine.\n")
    path.write_bytes(edited.encode() + b"latin-1 \xe9\n")  # not UTF-8: kept byte for byte
    assert append_log(tmp_path, state, built("b.md"), T0 + 1)
    data = path.read_bytes()
    assert data.startswith(edited.encode() + b"latin-1 \xe9\n") and data.endswith(b"- written: b.md\n")
    ino = path.stat().st_ino
    append_log(tmp_path, state, built("c.md"), T0 + 2)
    assert path.stat().st_ino == ino and path.read_bytes().startswith(data)


def test_a_hand_edit_with_nothing_to_log_is_left_as_it_is_and_adopted(tmp_path: Path, state: State) -> None:
    append_log(tmp_path, state, built("a.md"), T0)
    path = log(tmp_path)
    path.write_text(path.read_text() + "\nMy own line, no newline at the end")
    before = path.read_bytes()
    assert not append_log(tmp_path, state, built(), T0 + 1)
    assert path.read_bytes() == before
    rec = state.files_of([REL])[REL]
    assert (rec.size, rec.mtime_ns) == (path.stat().st_size, path.stat().st_mtime_ns)
    append_log(tmp_path, state, built("b.md"), T0 + 2)  # no line end: written whole, the line kept
    assert path.read_text().startswith(before.decode() + "\n\n## ")
    assert path.read_text().endswith("- written: b.md\n")


def test_a_scrub_rewrites_the_whole_log(tmp_path: Path, state: State) -> None:
    append_log(tmp_path, state, built("secret.md", "a.md"), T0)
    ino = log(tmp_path).stat().st_ino
    scrub = lambda text: text.replace("secret.md, ", "")  # noqa: E731
    assert append_log(tmp_path, state, built("b.md"), T0 + 1, scrub=scrub)
    text = log(tmp_path).read_text()
    assert "secret" not in text and "- written: a.md\n" in text and text.endswith("- written: b.md\n")
    assert log(tmp_path).stat().st_ino != ino  # written again whole, atomically


def test_a_wiki_without_its_log_gets_one(tmp_path: Path, state: State) -> None:
    assert not append_log(tmp_path, state, built(pages=0), T0)
    assert not log(tmp_path).exists()
    assert append_log(tmp_path, state, built(), T0)  # pages, adopted from a killed build
    assert log(tmp_path).read_text().startswith(HEAD + "\n## ")
    log(tmp_path).unlink()
    assert append_log(tmp_path, state, built("a.md"), T0 + 1)
    assert log(tmp_path).read_text().count("\n## ") == 1


def test_builds_around_a_hand_edited_log(tmp_path: Path) -> None:
    """The build after a hand edit of log.md keeps it (nothing to log) and adopts it: the one
    after does nothing; an edit's entry then goes after the person's text, appended."""
    project = make_project(tmp_path / "p")
    run_build(project)
    path = project.wiki_dir / "log.md"
    path.write_text(path.read_text() + "\nA line of mine.\n", encoding="utf-8")
    edited = path.read_bytes()
    report, backend = run_build(project)
    assert not report.nothing_to_do and backend.requests == [] and path.read_bytes() == edited
    report, _ = run_build(project)
    assert report.nothing_to_do
    source = next(iter(sorted(project.sources_dir.glob("*.md"))))
    source.write_text(source.read_text() + "\nOne more line about FAISS.\n", encoding="utf-8")
    ino = path.stat().st_ino
    report, _ = run_build(project)
    assert report.ok and report.written
    assert path.stat().st_ino == ino and path.read_bytes().startswith(edited)
    assert path.read_text().count("\n## ") == 2
