"""What the machine refuses (a full disk, too few file handles, a read-only folder) is said in
one line with what to do, never a traceback, and the work finished before it is kept."""

from __future__ import annotations

import errno
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.projects import make_project, subprocess_env, wiki_files
from wikic.cli.common import guarded
from wikic.lint.context import SourceCache
from wikic.wiki.read import read_page


def _fewer_files() -> None:
    # enough to start Python and open the state; too few for the build to publish its pages
    resource.setrlimit(resource.RLIMIT_NOFILE, (10, 10))


def _build(root: Path, log: Path, limit: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wikic", "build", "--json"],
        cwd=root,
        env=subprocess_env(WIKIC_SCRIPTED_LOG=str(log)),
        preexec_fn=_fewer_files if limit else None,
        capture_output=True,
        text=True,
    )


def test_too_few_file_handles_is_one_line_and_the_build_resumes(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    calls = tmp_path / "calls.jsonl"
    out = _build(project.root, calls, limit=True)
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert "wikic: error: too many open files: raise the limit (`ulimit -n`)" in out.stderr
    assert json.loads(out.stdout)["exit_code"] == 1  # --json: one document on stdout, as for any error

    again = _build(project.root, calls)
    assert again.returncode == 0, again.stderr

    fresh = make_project(tmp_path / "fresh")
    fresh_calls = tmp_path / "fresh-calls.jsonl"
    assert _build(fresh.root, fresh_calls).returncode == 0
    pages, fresh_pages = wiki_files(project), wiki_files(fresh)
    del pages["log.md"], fresh_pages["log.md"]  # dated, and says what each build paid
    assert pages == fresh_pages
    # what the failed run paid for is kept: the two runs made the calls of one build, no more
    assert calls.read_text().count("\n") == fresh_calls.read_text().count("\n") > 0


@pytest.mark.parametrize(
    ("code", "said"),
    [
        (errno.ENOSPC, "the disk is full: free some space (wiki/a.md); finished work is kept"),
        (errno.EROFS, "the file system is read-only (wiki/a.md)"),
        (errno.EACCES, "permission denied: check the owner and mode of the file and its folder"),
    ],
)
def test_what_the_machine_refuses_exits_1_with_a_message(
    code: int, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def run() -> int:
        raise OSError(code, "refused", "wiki/a.md")

    with pytest.raises(SystemExit) as exited:
        guarded(True, run)
    assert exited.value.code == 1
    out, err = capsys.readouterr()
    assert said in err
    assert said in json.loads(out)["error"]


def test_any_other_oserror_is_a_bug_and_keeps_its_traceback() -> None:
    def run() -> int:
        raise FileNotFoundError(errno.ENOENT, "gone", "wiki/a.md")

    with pytest.raises(FileNotFoundError):
        guarded(False, run)


def test_a_file_unread_for_want_of_file_handles_is_the_machines_error_not_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of file handles, lint's readers raise (the build and `wikic lint` then say so in one
    line, as above), never count a page or a source that "cannot be read": that finding would
    not be the wiki's. A file that is unreadable itself still is one."""
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "a.md").write_text("# A\n\nA line.\n")
    (tmp_path / "a.md").write_text("---\ntitle: A\n---\n\n# A\n")
    for code, raises in [(errno.EMFILE, True), (errno.ENFILE, True), (errno.EACCES, False)]:

        def refuse(*args: object, code: int = code) -> bytes:
            raise OSError(code, os.strerror(code))

        monkeypatch.setattr(Path, "read_bytes", refuse)
        monkeypatch.setattr("wikic.lint.context.open", refuse, raising=False)
        if raises:
            with pytest.raises(OSError):
                read_page(tmp_path / "a.md", "wiki/a.md")
            with pytest.raises(OSError):
                SourceCache(tmp_path).get("sources/a.md")
        else:
            assert str(read_page(tmp_path / "a.md", "wiki/a.md").read_error).startswith("cannot be read")
            assert str(SourceCache(tmp_path).get("sources/a.md")).startswith("cannot be read")
