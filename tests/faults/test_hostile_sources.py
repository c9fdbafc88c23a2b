"""Hostile and broken sources: each is read correctly or refused with one error line
naming the file (build exit 1), and every other source still builds, byte for byte."""

from __future__ import annotations

import codecs
import os
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from faults.harness import make_project, notes, tree, wiki_snapshot, wikic, write_sources
from wikic.build.pipeline import BuildOptions, build
from wikic.build.report import Progress
from wikic.config import SourcesConfig
from wikic.errors import SourceError
from wikic.sources.read import read_source
from wikic.sources.scan import list_sources

GOOD = notes(4)

# Read correctly: each makes a source page of its own.
HANDLED: dict[str, str | bytes] = {
    "utf16.md": codecs.BOM_UTF16_LE
    + "# Sixteen\n\nA note saved as **UTF-16** by an editor.\n".encode("utf-16-le"),
    "utf8-bom.md": codecs.BOM_UTF8 + b"# With a BOM\n\nThis note starts with a byte-order mark.\n",
    "my notes.md": "# Spaces\n\nA note whose file name has spaces in it.\n",
    "café ü 日本.md": "# Unicode name\n\nA note whose file name is not ASCII at all.\n",
    "-rf.md": "# Dash\n\nA note whose file name starts with a dash, like an option.\n",
    "--help.md": "# Double dash\n\nA note whose file name looks like --help to a shell.\n",
    "crlf.md": "# Windows\r\n\r\nA note with Windows line endings, from **Notepad**.\r\n",
}
EMPTY = {"empty.md": "", "blank.md": "\n\n   \n"}

# Refused, each with its reason.
BROKEN: dict[str, tuple[bytes, str]] = {
    "binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
    "latin1.md": ("# Caf\xe9\n\nA note in Latin-1.\n".encode("latin-1"), "not valid UTF-8"),
    "bad-utf16.md": (codecs.BOM_UTF16_LE + b"\x00\xd8" + b"a\x00", "UTF-16"),
}


def error_lines(err: str) -> dict[str, str]:
    """`error: <file>: <reason>` lines of a build's stderr, by file."""
    out = {}
    for line in err.splitlines():
        if line.startswith("error: sources/"):
            where, _, reason = line.removeprefix("error: ").partition(": ")
            out[where] = reason
    return out


@pytest.fixture
def reference(tmp_path: Path) -> dict[str, bytes]:
    """The wiki the good and the correctly handled sources make on their own."""
    project = make_project(tmp_path / "ref", {**GOOD, **HANDLED})
    run = wikic(project.root, "build", "-q")
    assert run.code == 0, run.err
    return wiki_snapshot(project)


def test_hostile_sources_are_handled_or_named_and_the_rest_builds(
    tmp_path: Path, reference: dict[str, bytes]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nNot part of this wiki.\n", encoding="utf-8")
    broken = {name: content for name, (content, _) in BROKEN.items()}
    project = make_project(tmp_path / "p", {**GOOD, **HANDLED, **EMPTY, **broken})
    src = project.sources_dir
    with open(src / "huge.md", "wb") as fh:  # 50 MB of text
        line = b"A line of a very large file that nobody should send to a model in one go.\n"
        fh.write(line * (50_000_000 // len(line) + 1))
    (src / "many-lines.txt").write_text("".join(f"line {i}\n" for i in range(100_000)), encoding="utf-8")
    (src / "link-out.md").symlink_to(outside / "secret.md")
    (src / "link-dir").symlink_to(outside)
    (src / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(src / "pipe.md")  # reading it would block for ever
    run = wikic(project.root, "build", "--json", timeout=120)
    assert run.code == 1, run.err
    assert "Traceback" not in run.err
    errors = error_lines(run.err)
    expected = {f"sources/{name}": reason for name, (_, reason) in BROKEN.items()} | {
        "sources/huge.md": "over the limit",
        "sources/many-lines.txt": "sources.max_parts",
        "sources/link-out.md": "outside sources/",
        "sources/link-dir": "link to a folder",
        "sources/dangling.md": "",
        "sources/pipe.md": "not a regular file",
    }
    assert set(errors) == set(expected), run.err
    for where, reason in expected.items():
        assert reason in errors[where], (where, errors[where])
    report = run.json()
    assert {e["where"] for e in report["errors"]} == set(expected)
    assert all("\n" not in e["message"] for e in report["errors"])
    assert sorted(report["warnings"]) == [
        "sources/blank.md: empty, skipped",
        "sources/empty.md: empty, skipped",
    ]
    # Everything else built exactly as it does without the hostile files.
    assert wiki_snapshot(project) == reference
    assert "Not part of this wiki" not in "".join(p.decode("utf-8", "replace") for p in reference.values())


def test_handled_names_cite_their_files(tmp_path: Path, reference: dict[str, bytes]) -> None:
    text = "".join(data.decode("utf-8") for data in reference.values())
    for name in HANDLED:
        assert f"(../{quote('sources/' + name)}#L" in text, name
    assert "UTF-16" in text and "Notepad" in text


def test_a_long_source_builds_when_the_limit_allows_it(tmp_path: Path) -> None:
    project = make_project(
        tmp_path / "p",
        {"many-lines.txt": "".join(f"line {i}\n" for i in range(100_000))},
        extra="sources:\n  max_parts: 1000\n",
    )
    run = wikic(project.root, "build", "--json", "-q", timeout=300)
    assert run.code == 0, run.err
    assert run.json()["actions"]["ran"] == 834  # 100,000 lines in parts of 120


def test_a_source_that_turns_bad_keeps_its_pages(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", GOOD)
    assert wikic(project.root, "build", "-q").code == 0
    built = wiki_snapshot(project)
    (project.sources_dir / "note01.md").write_bytes(b"# Broken\n\n\xff\xfe not text any more\n")
    run = wikic(project.root, "build", "--json")
    assert run.code == 1
    assert list(error_lines(run.err)) == ["sources/note01.md"]
    assert wiki_snapshot(project) == built
    write_sources(project, {"note01.md": GOOD["note01.md"]})
    assert wikic(project.root, "build", "-q").code == 0
    assert wiki_snapshot(project) == built


def test_a_source_that_disappears_between_scan_and_read(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", GOOD)
    files, errors = list_sources(project.root, SourcesConfig())
    assert not errors
    (project.sources_dir / "note02.md").unlink()
    for f in files:
        if f.path == "sources/note02.md":
            with pytest.raises(SourceError, match="note02.md: disappeared while it was being read"):
                read_source(f, SourcesConfig().max_bytes)
        else:
            assert read_source(f, SourcesConfig().max_bytes).text


def test_builds_while_a_source_keeps_appearing_and_disappearing(tmp_path: Path) -> None:
    """A race, not a script: whatever moment the file goes, a build either reads it or
    names it in one error, never raises, and keeps every other page."""
    project = make_project(tmp_path / "p", GOOD)
    flicker = project.sources_dir / "flicker.md"
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            flicker.write_text("# Flicker\n\nA source that comes and goes all the time.\n", encoding="utf-8")
            flicker.unlink(missing_ok=True)

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    outcomes = set()
    try:
        for _ in range(25):
            report = build(project, BuildOptions(), Progress(quiet=True))
            for err in report.errors:
                assert err["where"] == "sources/flicker.md", err
            outcomes.add("error" if report.errors else "ok")
            names = {p.name for p in project.wiki_dir.glob("*.md")}
            assert {"note-0.md", "note-1.md", "note-2.md", "note-3.md", "caching.md"} <= names
    finally:
        stop.set()
        thread.join()
    assert outcomes  # which ones happened is up to the scheduler


def test_nothing_outside_the_project_is_touched(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n", encoding="utf-8")
    project = make_project(tmp_path / "p", GOOD)
    (project.sources_dir / "link-out.md").symlink_to(outside / "secret.md")
    before = tree(tmp_path, skip=("p/wiki", "p/.wikic"))
    wikic(project.root, "build", "-q")
    assert tree(tmp_path, skip=("p/wiki", "p/.wikic")) == before
