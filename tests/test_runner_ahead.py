"""The runner's `ahead` work (build/ahead.py): started once, in a thread of its own, only when
a first wave of calls (as many as there are workers) has finished, so that it never delays the
first calls going out nor the client's making."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from wikic.backends.base import Completion, Request
from wikic.build import ahead
from wikic.build.actions import Action, Runner
from wikic.state import State

WAIT = 30  # seconds: only a hung test waits this long


class Gate:
    """A model whose calls wait until released, counting the calls under way."""

    model_id = "gate"

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.under_way = 0
        self.release = threading.Event()

    def complete(self, request: Request) -> Completion:
        with self.lock:
            self.under_way += 1
        assert self.release.wait(WAIT)
        return Completion('{"ok": true}')


def actions(n: int) -> list[Action]:
    def render() -> Request:
        return Request(messages=[{"role": "user", "content": "hi"}], schema={"type": "object"})

    def validate(data: Any) -> Any:
        return data

    return [Action(f"a{i}", "digest", f"action {i}", {}, render, validate, key=f"k{i}") for i in range(n)]


def test_ahead_runs_once_after_the_first_wave(tmp_path: Path) -> None:
    gate = Gate()
    finished: list[str] = []
    seen: list[tuple[int, int, str]] = []
    done = threading.Event()

    def work() -> None:
        with gate.lock:
            seen.append((len(finished), gate.under_way, threading.current_thread().name))
        done.set()

    state = State.open(tmp_path / "state.db")
    try:
        runner = Runner(state, lambda: gate, jobs=3, on_done=lambda a: finished.append(a.id), ahead=work)
        todo = actions(7)
        gate.release.set()
        runner.run(todo)
        runner.run(actions(2))  # a second stage: the work was done once
    finally:
        state.close()
    assert done.wait(WAIT)
    assert [a.status for a in todo] == ["ran"] * 7
    ((finished_then, called_then, thread),) = seen
    assert finished_then >= 3 and called_then >= 3 and thread == "wikic-ahead"


def test_ahead_waits_for_the_first_wave(tmp_path: Path) -> None:
    """Calls under way and none back: not yet."""
    gate = Gate()
    calls: list[int] = []
    state = State.open(tmp_path / "state.db")
    runner = Runner(state, lambda: gate, jobs=2, ahead=lambda: calls.append(gate.under_way))
    worker = threading.Thread(target=runner.run, args=(actions(4),))
    worker.start()
    try:
        while True:  # both workers in their calls
            with gate.lock:
                if gate.under_way == 2:
                    break
            assert worker.is_alive()
            worker.join(0.01)
        assert calls == []
    finally:
        gate.release.set()
        worker.join(WAIT)
        state.close()
    assert not worker.is_alive()


@pytest.mark.parametrize(("jobs", "n"), [(1, 3), (8, 2)])
def test_ahead_with_one_job_and_fewer_actions_than_workers(tmp_path: Path, jobs: int, n: int) -> None:
    gate = Gate()
    gate.release.set()
    calls: list[str] = []
    done = threading.Event()

    def work() -> None:
        calls.append(threading.current_thread().name)
        done.set()

    state = State.open(tmp_path / "state.db")
    try:
        Runner(state, lambda: gate, jobs=jobs, ahead=work).run(actions(n))
    finally:
        state.close()
    assert done.wait(WAIT) and calls == ["wikic-ahead"]


def test_the_modules_ahead_import() -> None:
    ahead.imports()  # every name is importable here (numpy is a dependency)
    assert all(name in sys.modules for name in ahead.MODULES)
