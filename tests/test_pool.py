"""wikic.pool: calls on threads that a stop signal or an error ends cleanly (the calls under
way finish, the queued ones never start), and that Ctrl-C at any moment cannot wedge."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tests.projects import subprocess_env
from wikic.pool import run_all

ITEMS = 400  # 0.01 s each, two at a time: 2 s of queued calls, far more than a signal takes


class Calls:
    def __init__(self, fail_at: int | None = None, signal_at: int | None = None) -> None:
        self.started: list[int] = []
        self.finished: list[int] = []
        self.lock = threading.Lock()
        self.fail_at, self.signal_at = fail_at, signal_at

    def __call__(self, item: int) -> None:
        with self.lock:
            self.started.append(item)
        if item == self.signal_at:
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)
        with self.lock:
            self.finished.append(item)
        if item == self.fail_at:
            raise ValueError(f"call {item} failed")


def test_every_call_runs() -> None:
    calls = Calls()
    run_all(calls, range(50), 4)
    assert sorted(calls.finished) == list(range(50))


def test_ctrl_c_cancels_the_queued_calls_and_lets_those_under_way_finish() -> None:
    calls = Calls(signal_at=1)
    with pytest.raises(KeyboardInterrupt):
        run_all(calls, range(ITEMS), 2)
    assert 1 in calls.started and len(calls.started) < ITEMS
    assert sorted(calls.finished) == sorted(calls.started)  # none cut short
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_an_error_cancels_the_queued_calls_and_is_raised() -> None:
    calls = Calls(fail_at=1)
    with pytest.raises(ValueError, match="call 1 failed"):
        run_all(calls, range(ITEMS), 2)
    assert len(calls.started) < ITEMS
    assert sorted(calls.finished) == sorted(calls.started)


def test_off_the_main_thread_it_runs_the_same() -> None:
    calls = Calls(fail_at=3)
    raised: list[BaseException] = []

    def run() -> None:
        try:
            run_all(calls, range(ITEMS), 2)
        except ValueError as exc:
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive() and len(raised) == 1
    assert len(calls.started) < ITEMS and sorted(calls.finished) == sorted(calls.started)


STRESS = """
import os, signal, sys, threading
from wikic.pool import run_all

def work(i):
    sum(range(300))

for trial in range(60):  # Ctrl-C at a different moment of submitting and waiting each time
    timer = threading.Timer(0.0005 * (trial % 30), lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        run_all(work, range(2000), 4)
    except KeyboardInterrupt as exc:
        assert exc.__context__ is None, repr(exc.__context__)
    try:
        timer.join()
    except KeyboardInterrupt:  # the signal came after the work ended
        pass
print("ok")
"""


def test_ctrl_c_at_any_moment_never_wedges_the_pool() -> None:
    """With as_completed, a Ctrl-C that landed while the main thread held a future's or the
    pool's lock left it taken: the workers waited for it forever (or RuntimeError('release
    unlocked lock') came out instead). A hang here ends in the timeout."""
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(STRESS)],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"
