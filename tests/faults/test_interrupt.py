"""Ctrl-C or SIGTERM with -j 4: the calls under way finish and are kept, the queued
ones never start, and the process ends within about one call's time."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from faults.harness import calls, integrity, make_project, notes, spawn, wait_until, wiki_snapshot, wikic

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
