"""Ctrl-C or SIGTERM with -j 4: the calls under way finish and are kept, the queued
ones never start, and the process ends within about one call's time."""

from __future__ import annotations

import queue
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from faults.harness import calls, integrity, make_project, notes, spawn, wait_until, wiki_snapshot, wikic
from wikic.build.report import Progress
from wikic.cli.common import guarded
from wikic.errors import interrupted
from wikic.watch.watcher import Rebuild, Watcher, WatchOptions

LATENCY = 0.6
JOBS = 4
SOURCES = 24  # 24 digests, 6 rounds of 4: about 3.6 s of queued calls


@pytest.mark.parametrize(
    ("command", "sig", "code"),
    [
        (["build", "-j", str(JOBS), "-q"], signal.SIGINT, 130),
        (["watch", "-j", str(JOBS), "-q"], signal.SIGTERM, 0),
    ],
)
def test_an_interrupt_cancels_the_queued_calls(
    tmp_path: Path, command: list[str], sig: signal.Signals, code: int
) -> None:
    project = make_project(tmp_path / "p", notes(SOURCES), latency=LATENCY)  # type: ignore[arg-type]
    log = tmp_path / "calls.log"
    proc = spawn(project.root, *command, log=log)
    assert wait_until(lambda: len(calls(log)) >= JOBS, timeout=60)  # the first round is done
    proc.send_signal(sig)
    sent = time.time()
    _, err = proc.communicate(timeout=60)
    took = time.time() - sent
    assert proc.returncode == code, err
    assert "Traceback" not in err
    after = [c for c in calls(log) if float(c["t"]) > sent]  # type: ignore[arg-type]
    assert len(after) <= JOBS, f"{len(after)} calls finished after the signal: queued calls ran"
    assert took < LATENCY + 1.5, f"the process took {took:.1f}s to stop"
    assert len(calls(log)) < SOURCES
    # What finished was kept: the next build pays only for the rest.
    done = len(calls(log))
    schema = project.schema_path.read_text(encoding="utf-8")
    project.schema_path.write_text(schema.replace(f"latency: {LATENCY}", "latency: 0"), encoding="utf-8")
    run = wikic(project.root, "build", "--json", "-q", log=log)
    assert run.code == 0, run.err
    report = run.json()
    assert report["actions"]["cached"] == 0  # the latency is not in the key: up to date, not cached
    assert report["llm"]["calls"] == len(calls(log)) - done
    reference = make_project(tmp_path / "ref", notes(SOURCES))  # type: ignore[arg-type]
    ref_log = tmp_path / "ref.log"
    assert wikic(reference.root, "build", "-q", log=ref_log).code == 0
    assert done + report["llm"]["calls"] == len(calls(ref_log))  # no finished call paid twice
    assert wiki_snapshot(project) == wiki_snapshot(reference)
    assert integrity(project) == "ok"


def _unlocked_on_the_way_out() -> RuntimeError:
    """What CPython's threading raises when Ctrl-C lands while the main thread waits for a lock
    a worker holds (as_completed's condition): the lock stays untaken, and the `with` around
    it fails to release it, the KeyboardInterrupt only its context."""
    try:
        try:
            raise KeyboardInterrupt
        finally:
            raise RuntimeError("release unlocked lock")
    except RuntimeError as exc:
        return exc


def test_an_interrupt_turned_into_another_error_is_still_an_interrupt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = _unlocked_on_the_way_out()
    assert interrupted(error) and interrupted(KeyboardInterrupt())
    assert not interrupted(RuntimeError("release unlocked lock"))

    def run() -> int:
        raise error

    with pytest.raises(SystemExit) as exited:
        guarded(False, run)
    assert exited.value.code == 130
    assert "interrupted; finished work is kept" in capsys.readouterr().err

    def bug() -> int:
        raise RuntimeError("release unlocked lock")

    with pytest.raises(RuntimeError):  # without the interrupt, a bug keeps its traceback
        guarded(False, bug)


@pytest.mark.parametrize("during", ["build", "wait"])
def test_watch_stops_on_an_interrupt_turned_into_another_error(tmp_path: Path, during: str) -> None:
    """SIGTERM mid-build once came out of the thread pool as RuntimeError('release unlocked
    lock'): watch said "internal error" and went on watching, the signal spent. Waiting for a
    change, the same error once ended the watch with a traceback."""
    project = make_project(tmp_path / "p", notes(2))  # type: ignore[arg-type]
    results: queue.Queue[Rebuild] = queue.Queue()
    said: list[str] = []
    watcher = Watcher(
        project, WatchOptions(debounce=0.1, poll_interval=0.1), results.put, said.append, Progress(quiet=True)
    )

    def signalled(*_: Any) -> Any:  # the first build's backend, or the wait after it, as the signal lands
        raise _unlocked_on_the_way_out()

    if during == "build":
        watcher.backends = signalled  # type: ignore[assignment]
    else:
        watcher.queue.wait = signalled  # type: ignore[method-assign]
    returned: list[int] = []
    thread = threading.Thread(target=lambda: returned.append(watcher.run()), daemon=True)
    thread.start()
    thread.join(timeout=60)
    if thread.is_alive():  # the watch went on: end it, and fail
        watcher.stop()
        thread.join(timeout=60)
        pytest.fail("the watch went on after the interrupt")
    assert returned == [0]
    assert said[-1] == "wikic watch: stopped"
    if during == "build":
        assert results.empty()
    else:  # the first build was done and said
        first = results.get_nowait()
        assert first.report is not None and first.report.ok
