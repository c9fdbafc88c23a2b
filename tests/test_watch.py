"""`wikic watch` as a user runs it: a real watcher process on a real project,
real filesystem events, the scripted backend, one JSON line per build.

Every test runs with OS events (inotify) and with --poll. Waits are for a
line or a file, with a deadline; the only fixed waits are the ones that prove
that nothing more happens ("exactly one build").
"""

from __future__ import annotations

import errno
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from projects import make_project, run_build, subprocess_env, write_schema

from wikic.build.report import Progress
from wikic.fsutil import TMP_MARK
from wikic.lock import ProjectLock
from wikic.project import Project
from wikic.state import State
from wikic.watch.changes import Coalescer, is_temp_name, relevant
from wikic.watch.watcher import Rebuild, Watcher, WatchOptions, still_there
from wikic.wiki.page import split_page

DEBOUNCE_MS = 300
POLL_INTERVAL = 0.2
LINE_TIMEOUT = 20.0  # generous: CI machines are slow and shared
SETTLE = 1.2  # seconds of silence that prove no further build is coming (4x the quiet period)


class Watch:
    """A `wikic watch --json` subprocess; its stdout read line by line on a thread."""

    def __init__(self, project: Project, mode: str, log: Path, *extra: str) -> None:
        args = [
            sys.executable,
            "-m",
            "wikic",
            "-C",
            str(project.root),
            "watch",
            "--json",
            "-q",
            "--debounce",
            str(DEBOUNCE_MS),
            *extra,
        ]
        if mode == "poll":
            args += ["--poll", "--poll-interval", str(POLL_INTERVAL)]
        self.proc = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(WIKIC_SCRIPTED_LOG=str(log)),
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.stderr: list[str] = []
        self.readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def next(self, timeout: float = LINE_TIMEOUT) -> dict[str, Any]:
        try:
            item = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no build within {timeout:g}s; stderr:\n{''.join(self.stderr)}")
        if item is None:
            pytest.fail(f"watch exited ({self.proc.wait()}); stderr:\n{''.join(self.stderr)}")
        return item

    def nothing(self, seconds: float = SETTLE) -> None:
        try:
            item = self.lines.get(timeout=seconds)
        except queue.Empty:
            return
        pytest.fail(f"unexpected build: {item}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=LINE_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"watch did not stop on SIGTERM; stderr:\n{''.join(self.stderr)}")
        for reader in self.readers:  # everything it printed is read
            reader.join(timeout=LINE_TIMEOUT)
        return code


@pytest.fixture(params=["native", "poll"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def calls_log(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


@pytest.fixture
def start(tmp_path: Path, mode: str, calls_log: Path) -> Iterator[Callable[..., Watch]]:
    """Start a watcher on a project; the first line (the initial build) is read and checked."""
    started: list[Watch] = []

    def _start(project: Project, *extra: str) -> Watch:
        w = Watch(project, mode, calls_log, *extra)
        started.append(w)
        first = w.next()
        assert first["build"] == 1 and first["changed"] == [] and not first["errors"], first
        return w

    yield _start
    for w in started:
        if w.proc.poll() is None:
            w.proc.kill()
            w.proc.wait()


def slow_project(root: Path, notes: dict[str, str], latency: float) -> Project:
    """A project built already (in process, at full speed) whose model now takes
    `latency` seconds a call: latency is not part of any action key."""
    project = make_project(root, notes=notes)
    assert run_build(project)[0].ok
    write_schema(project, latency=latency)
    return project


def calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def wait_for(condition: Callable[[], bool], timeout: float = LINE_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not met in time")
        time.sleep(0.02)


# --- the watcher process ----------------------------------------------------------


def test_burst_of_50_writes_is_one_build(
    tmp_path: Path, start: Callable[..., Watch], calls_log: Path
) -> None:
    project = make_project(tmp_path / "p")
    w = start(project)
    before = calls(calls_log)
    for i in range(50):  # spread over about 0.25 s, as a checkout or a sync tool would
        with open(project.sources_dir / f"burst{i % 10}.md", "a", encoding="utf-8") as fh:
            fh.write(f"# Burst {i % 10}\n\nLine {i} about **Topic {i % 10}**.\n")
        time.sleep(0.005)
    report = w.next()
    assert report["changed"] == [f"sources/burst{i}.md" for i in range(10)]
    assert report["actions"]["ran"] == 20 and not report["errors"]  # 10 digests, 10 topic pages
    w.nothing()
    assert calls(calls_log) - before == 20
    assert (project.wiki_dir / "burst-3.md").is_file()
    assert w.stop() == 0


def test_editor_save_is_one_build(tmp_path: Path, start: Callable[..., Watch]) -> None:
    project = make_project(tmp_path / "p")
    w = start(project)
    target = project.sources_dir / "vectors.md"
    swap = project.sources_dir / ".vectors.md.swp"
    steps: list[Callable[[], object]] = [  # vim: swap, probe file, temp file renamed over, chmod
        lambda: swap.write_text("swap"),
        lambda: (project.sources_dir / "4913").write_text(""),
        lambda: (project.sources_dir / "4913").unlink(),
        lambda: tmp.write_text(target.read_text() + "\nAlso see **Annoy** for trees.\n"),
        lambda: os.chmod(tmp, 0o644),
        lambda: os.replace(tmp, target),
        lambda: os.chmod(target, 0o664),
        lambda: swap.unlink(),
    ]
    tmp = project.sources_dir / "vectors.md.tmp"
    for step in steps:
        step()
        time.sleep(0.03)
    report = w.next()
    assert report["changed"] == ["sources/vectors.md"]
    assert report["actions"]["ran"] >= 1 and not report["errors"]
    w.nothing()
    assert "Annoy" in (project.wiki_dir / "annoy.md").read_text()
    assert w.stop() == 0


def test_ignored_writes_trigger_nothing(tmp_path: Path, start: Callable[..., Watch], calls_log: Path) -> None:
    project = make_project(tmp_path / "p")
    w = start(project)
    src = project.sources_dir
    (src / ".hidden").mkdir()
    for path in [
        src / ".vectors.md.swp",
        src / "vectors.md~",
        src / ".#vectors.md",
        src / "4913",
        src / "notes.tmp",
        src / ".hidden" / "secret.md",
        project.root / "notes.txt",
        project.root / ".schema.yaml.swp",
        project.state_dir / "junk",
        project.wiki_dir / "my-own-page.md",
    ]:
        path.write_text("# Junk\n\nSee **Nothing**.\n")
    w.nothing()
    page = project.wiki_dir / "vector-databases.md"
    page.write_text(page.read_text() + "\nA hand edit.\n")  # reported at the next build, never lost
    w.nothing(0.5)
    (src / "rag.md").write_text((src / "rag.md").read_text() + "\nMore about chunks.\n")
    report = w.next()
    assert report["changed"] == ["sources/rag.md"]
    assert report["conflicts"] == ["wiki/vector-databases.md"]
    assert page.read_text().endswith("A hand edit.\n")
    assert "my-own-page" in (project.wiki_dir / "index.md").read_text()
    assert w.stop() == 0


def test_broken_schema_reports_and_a_fixed_one_rebuilds(tmp_path: Path, start: Callable[..., Watch]) -> None:
    project = make_project(tmp_path / "p")
    w = start(project)
    good = project.schema_path.read_text()
    project.schema_path.write_text("title: [unclosed\n")
    failed = w.next()
    assert failed["changed"] == ["schema.yaml"] and failed["exit_code"] == 2
    assert "schema.yaml" in failed["error"]
    project.schema_path.write_text(good.replace("title: Test wiki", "title: Renamed wiki"))
    fixed = w.next()
    assert fixed["changed"] == ["schema.yaml"] and not fixed["errors"]
    assert "wiki/index.md" in fixed["written"]
    assert (project.wiki_dir / "index.md").read_text().startswith("# Renamed wiki")
    assert w.proc.poll() is None
    assert w.stop() == 0


def test_deleting_a_source_and_a_folder_removes_their_pages(
    tmp_path: Path, start: Callable[..., Watch]
) -> None:
    notes = {
        "vectors.md": "# Vector databases\n\n## HNSW\n\nA graph index.\n",
        "old.md": "# Old note\n\n## Punch cards\n\nCards with holes.\n",
        "team/alice.md": "# Alice\n\n## Compilers\n\nAlice writes compilers.\n",
        "team/bob.md": "# Bob\n\n## Linkers\n\nBob writes linkers.\n",
    }
    project = make_project(tmp_path / "p", notes=notes)
    w = start(project)
    wiki = project.wiki_dir
    assert (wiki / "old-note.md").is_file() and (wiki / "punch-cards.md").is_file()
    (project.sources_dir / "old.md").unlink()
    report = w.next()
    assert report["changed"] == ["sources/old.md"]
    assert sorted(report["removed"]) == ["wiki/old-note.md", "wiki/punch-cards.md"]
    assert not (wiki / "old-note.md").exists() and not (wiki / "punch-cards.md").exists()
    (project.sources_dir / "team").rename(project.sources_dir / "people")
    report = w.next()
    assert "sources/people/alice.md" in report["changed"] or "sources/people" in report["changed"]
    assert not report["errors"] and (wiki / "alice.md").is_file()
    assert "sources/people/alice.md" in (wiki / "alice.md").read_text()
    for path in (project.sources_dir / "people").iterdir():
        path.unlink()
    (project.sources_dir / "people").rmdir()
    report = w.next()
    assert sorted(report["removed"]) == [
        "wiki/alice.md",
        "wiki/bob.md",
        "wiki/compilers.md",
        "wiki/linkers.md",
    ]
    assert (wiki / "hnsw.md").is_file()
    assert w.stop() == 0


def test_changes_during_a_build_make_exactly_one_more(
    tmp_path: Path, start: Callable[..., Watch], calls_log: Path
) -> None:
    notes = {f"n{i}.md": f"# Note {i}\n\n## Topic {i}\n\nFact {i}.\n" for i in range(4)}
    project = slow_project(tmp_path / "p", notes, latency=0.15)
    w = start(project)
    before = calls(calls_log)
    for i in range(4):  # 4 digests + 4 topic pages at 0.15 s: a build of about 1.2 s
        (project.sources_dir / f"n{i}.md").write_text(f"# Note {i}\n\n## Topic {i}\n\nFact {i}, revised.\n")
    wait_for(lambda: calls(calls_log) > before)  # the build is under way
    for i in range(5):
        (project.sources_dir / "late.md").write_text(f"# Late\n\n## Lateness\n\nWritten {i}.\n")
        time.sleep(0.05)
    first = w.next()
    assert first["changed"] == [f"sources/n{i}.md" for i in range(4)]
    second = w.next()
    assert second["changed"] == ["sources/late.md"] and "wiki/lateness.md" in second["written"]
    w.nothing()
    assert w.stop() == 0


def test_sigterm_mid_build_exits_0_and_leaves_no_partial_file(
    tmp_path: Path, start: Callable[..., Watch], calls_log: Path
) -> None:
    notes = {f"n{i}.md": f"# Note {i}\n\n## Topic {i}\n\nFact {i}.\n" for i in range(6)}
    project = slow_project(tmp_path / "p", notes, latency=0.2)
    w = start(project)
    before = calls(calls_log)
    for i in range(6):
        (project.sources_dir / f"n{i}.md").write_text(f"# Note {i}\n\n## Topic {i}\n\nFact {i}, again.\n")
    wait_for(lambda: calls(calls_log) >= before + 2)  # mid-build: a model call is in flight
    assert w.stop() == 0
    assert "stopped" in "".join(w.stderr)
    assert not list(project.wiki_dir.glob(f"{TMP_MARK}*"))
    for page in project.wiki_dir.glob("*.md"):
        text = page.read_text()
        assert text.endswith("\n") and "# " in text
        if page.name not in ("index.md", "log.md"):
            assert split_page(text).meta.get("title"), page
    with State.open(project.state_path) as state:
        assert state.integrity_ok()
    with ProjectLock(project.lock_path, wait=False):  # released
        pass
    write_schema(project, latency=0.0)
    resumed = subprocess.run(
        [sys.executable, "-m", "wikic", "-C", str(project.root), "build", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=subprocess_env(WIKIC_SCRIPTED_LOG=str(calls_log)),
    )
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert 0 < report["actions"]["ran"] < 12  # cut short, and the calls finished before SIGTERM were kept


def test_waits_for_a_build_started_by_hand(tmp_path: Path, mode: str, start: Callable[..., Watch]) -> None:
    if mode == "poll":
        pytest.skip("the lock does not depend on how changes are seen")
    project = make_project(tmp_path / "p")
    w = start(project)
    with ProjectLock(project.lock_path, wait=False):  # as `wikic build` in another terminal holds it
        (project.sources_dir / "rag.md").write_text("# RAG\n\n## Reranking\n\nA second pass.\n")
        w.nothing()
    report = w.next()
    assert report["changed"] == ["sources/rag.md"] and "wiki/reranking.md" in report["written"]
    assert w.stop() == 0


# --- the parts, in process ---------------------------------------------------------


def test_falls_back_to_polling_when_os_events_fail(tmp_path: Path) -> None:
    def no_inotify() -> Any:
        raise OSError(28, "inotify watch limit reached")

    project = make_project(tmp_path / "p")
    results: queue.Queue[Rebuild] = queue.Queue()
    said: list[str] = []
    watcher = Watcher(
        project,
        WatchOptions(debounce=0.1, poll_interval=0.1),
        results.put,
        said.append,
        Progress(quiet=True),
        native=no_inotify,
    )
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        first = results.get(timeout=LINE_TIMEOUT)
        assert first.report is not None and first.report.ok
        assert watcher.mode == "polling"
        assert any("inotify watch limit reached" in s and "polling" in s for s in said), said
        (project.sources_dir / "rag.md").write_text("# RAG\n\n## Reranking\n\nA second pass.\n")
        second = results.get(timeout=LINE_TIMEOUT)
        assert second.changed == ["sources/rag.md"] and second.report is not None
        assert "wiki/reranking.md" in second.report.written
    finally:
        watcher.stop()
        thread.join(timeout=LINE_TIMEOUT)
    assert not thread.is_alive()


def test_a_full_disk_is_said_as_such_and_the_watch_goes_on(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    results: queue.Queue[Rebuild] = queue.Queue()
    watcher = Watcher(
        project, WatchOptions(debounce=0.1, poll_interval=0.1), results.put, print, Progress(quiet=True)
    )
    backends = watcher.backends

    def full_disk(schema: Any) -> Any:  # the first build's backend, as a full disk refuses it
        watcher.backends = backends
        raise OSError(errno.ENOSPC, "No space left on device", str(project.root / ".wikic" / "cache"))

    watcher.backends = full_disk  # type: ignore[assignment]
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        first = results.get(timeout=LINE_TIMEOUT)
        assert first.exit_code == 1 and first.error is not None
        assert first.error.startswith("the disk is full: free some space") and "internal" not in first.error
        (project.sources_dir / "rag.md").write_text("# RAG\n\n## Reranking\n\nA second pass.\n")
        second = results.get(timeout=LINE_TIMEOUT)
        assert second.report is not None and second.report.ok
        assert "wiki/reranking.md" in second.report.written
    finally:
        watcher.stop()
        thread.join(timeout=LINE_TIMEOUT)
    assert not thread.is_alive()


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_coalescer_waits_for_quiet_and_merges_paths() -> None:
    clock = FakeClock()
    c = Coalescer(quiet=0.3, max_wait=5.0, clock=clock)
    assert c.due_in() is None
    for i in range(50):
        c.add([f"sources/{i % 3}.md"])
        clock.now += 0.01
        assert c.due_in() == pytest.approx(0.29)
    clock.now += 0.29
    assert c.due_in() == 0.0
    assert c.take() == ["sources/0.md", "sources/1.md", "sources/2.md"]
    assert c.due_in() is None


def test_coalescer_builds_at_max_wait_when_changes_never_stop() -> None:
    clock = FakeClock()
    c = Coalescer(quiet=0.3, max_wait=2.0, clock=clock)
    for _ in range(30):
        c.add(["sources/log.md"])
        clock.now += 0.1
    assert c.due_in() == 0.0


@pytest.mark.parametrize(
    "rel, expected",
    [
        ("schema.yaml", True),
        ("sources/a.md", True),
        ("sources/sub/b.txt", True),
        ("sources", True),
        ("sources/sub", True),
        ("prompts/digest.user.j2", True),
        ("prompts", True),
        ("wiki/a.md", False),
        (".wikic/state.db", False),
        (".wikic/lock", False),
        ("README.md", False),
        ("sources/.a.md.swp", False),
        ("sources/a.md~", False),
        ("sources/.#a.md", False),
        ("sources/4913", False),
        ("sources/a.md.tmp", False),
        ("sources/#a.md#", False),
        ("sources/.git/HEAD", False),
        ("sources/.obsidian/x.md", False),
        ("prompts/notes.txt", False),
        (".schema.yaml.swp", False),
        ("schema.yaml~", False),
        ("../elsewhere/schema.yaml", False),
    ],
)
def test_relevant_paths(rel: str, expected: bool) -> None:
    assert relevant(rel) is expected


def test_temp_names() -> None:
    assert all(map(is_temp_name, [".x.swp", "x~", ".#x", "4913", "x.tmp", "#x#"]))
    assert not any(map(is_temp_name, ["x.md", "notes.txt", "4913.md"]))


def test_a_watch_build_is_the_build_of_wikic_build_with_its_lint_summary(tmp_path: Path) -> None:
    """The same build as `wikic build`: the lint summary closes each one (its line and "lint" in
    the JSON), and a burst that leaves every stat as it was takes the no-op path."""
    project = make_project(tmp_path / "p")
    results: queue.Queue[Rebuild] = queue.Queue()
    watcher = Watcher(
        project, WatchOptions(debounce=0.1), results.put, lambda text: None, Progress(quiet=True)
    )
    thread = threading.Thread(target=watcher.run, daemon=True)
    thread.start()
    try:
        first = results.get(timeout=LINE_TIMEOUT)
        assert first.report is not None and first.report.ok and not first.report.nothing_to_do
        assert first.report.lint is not None and first.to_json()["lint"] == first.report.lint
        assert first.report.lint_line.startswith("lint: ") and first.line().endswith(first.report.lint_line)
        source = project.sources_dir / "rag.md"
        data, st = source.read_bytes(), source.stat()
        source.write_bytes(data)  # saved again unchanged: an event, and the same stats once put back
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
        second = results.get(timeout=LINE_TIMEOUT)
        assert second.changed == ["sources/rag.md"] and second.report is not None
        assert second.report.nothing_to_do and second.report.lint == first.report.lint
        assert second.line().endswith(first.report.lint_line)
    finally:
        watcher.stop()
        thread.join(timeout=LINE_TIMEOUT)
    assert not thread.is_alive()


def test_the_build_line_names_the_saved_file_not_an_editors_temporary_one(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    target = project.sources_dir / "vectors.md"
    temp = project.sources_dir / "sedAb12Cd"  # what `sed -i` writes, then renames over the file
    temp.write_text(target.read_text() + "More.\n")
    os.replace(temp, target)
    changed = ["sources/sedAb12Cd", "sources/vectors.md"]
    named = still_there(project.root, changed)
    assert named == "sources/vectors.md"
    line = Rebuild(2, changed, error="the model is down", named=named).line()
    assert "build 2 (sources/vectors.md and 1 more) failed" in line
