"""Work shared with forked children (wikic/forked.py): the results are the plain loop's, in
order, whether the children did their shares, failed, or were never started; an interrupt
leaves no child behind."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from wikic import forked

pytestmark = pytest.mark.skipif(forked.shares(100, 10) < 2, reason="forks only on Linux with two CPUs")


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The pids of the children forked."""
    pids: list[int] = []
    fork = os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    yield pids


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_the_children_do_their_shares_and_the_results_are_in_order(forks: list[int]) -> None:
    got = forked.mapped(lambda n: [n * n, os.getpid()], range(100), each=10)
    assert [square for square, _ in got] == [n * n for n in range(100)]
    by = {pid for _, pid in got}
    assert os.getpid() in by and len(by) == forked.shares(100, 10) > 1
    assert by - {os.getpid()} == set(forks) and all(map(_reaped, forks))


def test_a_child_that_fails_leaves_its_share_to_this_process(forks: list[int]) -> None:
    parent = os.getpid()

    def square(n: int) -> list[int]:
        if os.getpid() != parent:
            raise RuntimeError("a child's failure")
        return [n * n, os.getpid()]

    assert forked.mapped(square, range(100), each=10) == [[n * n, parent] for n in range(100)]
    assert forks and all(map(_reaped, forks))


def test_results_a_child_cannot_send_are_made_here(forks: list[int]) -> None:
    class Box:  # not marshallable
        def __init__(self, n: int) -> None:
            self.n, self.pid = n, os.getpid()

    got = forked.mapped(Box, range(100), each=10)
    assert [(box.n, box.pid) for box in got] == [(n, os.getpid()) for n in range(100)]
    assert forks


def test_nothing_forks_beside_another_thread(forks: list[int]) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert forked.shares(100, 10) == 1
        assert forked.mapped(lambda n: os.getpid(), range(100), each=10) == [os.getpid()] * 100
    finally:
        stop.set()
        other.join()
    assert forks == []


def test_an_interrupt_here_stops_the_children(forks: list[int]) -> None:
    parent, waited = os.getpid(), []

    def slow(n: int) -> int:
        if os.getpid() == parent:
            raise KeyboardInterrupt
        if not waited:  # a child: still at work when this process stops (its first item)
            waited.append(n)
            threading.Event().wait(30)
        return n

    with pytest.raises(KeyboardInterrupt):
        forked.mapped(slow, range(100), each=10)
    assert forks and all(map(_reaped, forks))


def test_an_interrupt_while_a_child_works_on_stops_it(
    forks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process, its share done, waits for a child's results when Ctrl-C comes (here, at
    its first read of a child's pipe): the child is stopped, not waited for (it would work on
    for half a minute)."""
    parent, waited = os.getpid(), []

    def slow(n: int) -> int:
        if os.getpid() != parent and not waited:  # a child, at its first item
            waited.append(n)
            threading.Event().wait(30)
        return n

    def interrupted(fd: int, size: int) -> bytes:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "read", interrupted)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        forked.mapped(slow, range(100), each=10)
    assert forks and all(map(_reaped, forks))
    assert time.monotonic() - started < 20  # stopped, not waited for
