"""The runner's `ahead` work (build/ahead.py): started once, in a thread of its own, only when
every worker has a call under way, so that it never delays a call going out."""

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


def test_ahead_runs_once_when_every_worker_is_busy(tmp_path: Path) -> None:
    gate = Gate()
    seen: list[tuple[int, str]] = []
    done = threading.Event()

    def work() -> None:
        with gate.lock:
            seen.append((gate.under_way, threading.current_thread().name))
        done.set()
        gate.release.set()

    state = State.open(tmp_path / "state.db")
    try:
        runner = Runner(state, lambda: gate, jobs=3, ahead=work)
        todo = actions(7)
        runner.run(todo)
        runner.run(actions(2))  # a second stage: the work was done once
    finally:
        state.close()
    assert done.wait(WAIT)
    assert [a.status for a in todo] == ["ran"] * 7
    ((busy, thread),) = seen
    assert busy >= 2 and thread == "wikic-ahead"  # the third worker is on its way into its call


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
