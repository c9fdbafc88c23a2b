"""Two processes at once on one project: one waits for the other, or with --no-wait
exits 1 naming the holder's pid; never both writing. A lock left by a process that
was killed is taken over at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faults.harness import (
    SCHEMA,
    calls,
    integrity,
    make_project,
    note,
    notes,
    spawn,
    wait_until,
    wiki_snapshot,
    wikic,
)
from wikic.lock import ProjectLock

LATENCY = 0.05


def started_calling(log: Path, pid: int) -> bool:
    return any(c["pid"] == pid for c in calls(log))


def spans(log: Path) -> dict[int, tuple[float, float]]:
    """Per process, the time of its first and last model call."""
    out: dict[int, tuple[float, float]] = {}
    for c in calls(log):
        pid, t = int(c["pid"]), float(c["t"])  # type: ignore[arg-type]
        lo, hi = out.get(pid, (t, t))
        out[pid] = (min(lo, t), max(hi, t))
    return out


def assert_never_both(log: Path) -> None:
    ranges = sorted(spans(log).values())
    for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
        assert end <= start, "two processes called the model (and so were building) at the same time"


@pytest.fixture
def reference(tmp_path: Path) -> dict[str, bytes]:
    project = make_project(tmp_path / "ref", notes(8))  # type: ignore[arg-type]
    assert wikic(project.root, "build", "-q").code == 0
    return wiki_snapshot(project)


def test_a_second_build_waits_for_the_first(tmp_path: Path, reference: dict[str, bytes]) -> None:
    project = make_project(tmp_path / "p", notes(8), latency=LATENCY)  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    first = spawn(project.root, "build", "--json", "-q", log=log)
    assert wait_until(lambda: started_calling(log, first.pid), timeout=30)
    second = spawn(project.root, "build", "--json", log=log)
    out2, err2 = second.communicate(timeout=120)
    out1, err1 = first.communicate(timeout=120)
    assert (first.returncode, second.returncode) == (0, 0), err1 + err2
    assert f"waiting for another wikic process (pid {first.pid})" in err2
    assert_never_both(log)
    assert not started_calling(log, second.pid)  # the first built it all; the second found it done
    assert wiki_snapshot(project) == reference
    assert integrity(project) == "ok"


def test_no_wait_refuses_naming_the_holder(tmp_path: Path, reference: dict[str, bytes]) -> None:
    project = make_project(tmp_path / "p", notes(8), latency=LATENCY)  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    first = spawn(project.root, "build", "-q", log=log)
    assert wait_until(lambda: started_calling(log, first.pid), timeout=30)
    refused = wikic(project.root, "build", "--no-wait", "--json", log=log)
    assert refused.code == 1
    assert f"pid {first.pid}" in refused.err
    assert refused.err.count("\n") == 1 and refused.err.startswith("wikic: error: ")  # one line, no traceback
    assert f"pid {first.pid}" in refused.json()["error"]
    assert first.wait(120) == 0
    assert {c["pid"] for c in calls(log)} == {first.pid}  # the refused one never built
    assert wiki_snapshot(project) == reference
    assert integrity(project) == "ok"


def test_a_lock_left_by_a_killed_build_is_taken_over(tmp_path: Path, reference: dict[str, bytes]) -> None:
    project = make_project(tmp_path / "p", notes(8), latency=LATENCY)  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    holder = spawn(project.root, "build", "-q", log=log)
    assert wait_until(lambda: started_calling(log, holder.pid), timeout=30)
    holder.send_signal(signal.SIGKILL)
    holder.wait(30)
    assert project.lock_path.read_text().strip() == str(holder.pid)  # the dead holder's pid is still there
    started = time.monotonic()
    taken = wikic(project.root, "build", "--no-wait", "--json", "-q", log=log)
    assert taken.code == 0, taken.err
    assert "waiting" not in taken.err
    assert time.monotonic() - started < 30
    assert wiki_snapshot(project) == reference
    assert integrity(project) == "ok"


def test_build_and_watch_take_turns(tmp_path: Path, reference: dict[str, bytes]) -> None:
    project = make_project(tmp_path / "p", notes(8), latency=LATENCY)  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    watch = spawn(project.root, "watch", "--json", "-q", "--debounce", "50", log=log)
    try:
        assert wait_until(lambda: started_calling(log, watch.pid), timeout=30)
        refused = wikic(project.root, "build", "--no-wait", log=log)
        assert refused.code == 1 and f"pid {watch.pid}" in refused.err
        waited = wikic(project.root, "build", "--json", log=log)
        assert waited.code == 0, waited.err
        assert f"waiting for another wikic process (pid {watch.pid})" in waited.err
        assert waited.json()["llm"]["calls"] == 0  # the watch's build had finished it
        assert_never_both(log)
        assert wiki_snapshot(project) == reference
    finally:
        watch.send_signal(signal.SIGTERM)
        watch.communicate(timeout=60)
    assert watch.returncode == 0
    assert integrity(project) == "ok"


def test_build_and_ask_save_take_turns(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", notes(8), latency=LATENCY)  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    assert wikic(project.root, "build", "-q").code == 0
    (project.sources_dir / "note02.md").write_text(note(2, version=2), encoding="utf-8")
    (project.sources_dir / "note08.md").write_text(note(8), encoding="utf-8")
    # slow calls (the latency is not part of any action key): the build still runs while
    # `ask` starts up, however loaded the machine
    project.schema_path.write_text(SCHEMA.format(latency=1.0), encoding="utf-8")
    build = spawn(project.root, "build", "-q", log=log)
    assert wait_until(lambda: started_calling(log, build.pid), timeout=30)
    refused = wikic(project.root, "ask", "--save", "--no-wait", "--stale-ok", "what is caching?")
    assert refused.code == 1 and f"pid {build.pid}" in refused.err, refused.err
    assert "Traceback" not in refused.err
    saver = spawn(project.root, "ask", "--save", "--stale-ok", "what is hashing?")
    out, err = saver.communicate(timeout=120)
    assert saver.returncode == 0, err
    assert build.wait(120) == 0
    saved = project.wiki_dir / "what-is-hashing.md"
    assert saved.exists()
    assert saved.stat().st_mtime_ns >= max(
        p.stat().st_mtime_ns
        for p in project.wiki_dir.glob("*.md")
        if p.name != saved.name and p.name != "log.md"
    )
    assert not (project.wiki_dir / "what-is-caching.md").exists()  # the refused one saved nothing
    # The answer is a person's page now: the next build lists it and keeps it.
    again = wikic(project.root, "build", "--json", "-q")
    assert again.code == 0, again.err
    assert saved.exists()
    assert "what-is-hashing" in (project.wiki_dir / "index.md").read_text(encoding="utf-8")
    assert integrity(project) == "ok"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_does_not_keep_the_lock_of_a_killed_parent(tmp_path: Path) -> None:
    """A build's forked child (wikic/forked.py, build/prefacts.py) may work on for seconds
    after its parent is killed: the project is not locked meanwhile."""
    lock = tmp_path / ".wikic" / "lock"
    script = (
        "import os, signal, sys, time\n"
        "from pathlib import Path\n"
        "from wikic.lock import ProjectLock\n"
        f"ProjectLock(Path({str(lock)!r})).acquire()\n"
        "pid = os.fork()\n"
        "if pid == 0:  # not holding the test's pipes open either\n"
        "    null = os.open(os.devnull, os.O_RDWR)\n"
        "    os.dup2(null, 1)\n"
        "    os.dup2(null, 2)\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    child = int(run.stdout.split()[0])
    try:
        assert run.returncode == -signal.SIGKILL
        with ProjectLock(lock, wait=False):  # not "another wikic process is working"
            pass
    finally:
        os.kill(child, signal.SIGKILL)
