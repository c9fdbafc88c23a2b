"""Work shared with forked children (wikic/forked.py): the results are the plain loop's, in
order, whether the children did their shares, failed, or were never started; an interrupt
leaves no child behind."""

from __future__ import annotations

import os
import threading
import time

import pytest
from forkkit import reaped

from wikic import forked

pytestmark = pytest.mark.skipif(forked.shares(100, 10) < 2, reason="forks only on Linux with two CPUs")


def test_the_children_do_their_shares_and_the_results_are_in_order(forks: list[int]) -> None:
    got = forked.mapped(lambda n: [n * n, os.getpid()], range(100), each=10)
    assert [square for square, _ in got] == [n * n for n in range(100)]
    by = {pid for _, pid in got}
    assert os.getpid() in by and len(by) == forked.shares(100, 10) > 1
    assert by - {os.getpid()} == set(forks) and all(map(reaped, forks))


def test_a_child_that_fails_leaves_its_share_to_this_process(forks: list[int]) -> None:
    parent = os.getpid()

    def square(n: int) -> list[int]:
        if os.getpid() != parent:
            raise RuntimeError("a child's failure")
        return [n * n, os.getpid()]

    assert forked.mapped(square, range(100), each=10) == [[n * n, parent] for n in range(100)]
    assert forks and all(map(reaped, forks))


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
    assert forks and all(map(reaped, forks))


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
    assert forks and all(map(reaped, forks))
    assert time.monotonic() - started < 20  # stopped, not waited for


def test_ahead_children_do_all_but_the_first_share(forks: list[int]) -> None:
    """forked.Ahead: the first share is this process's (None), the others' results are the
    children's, in order, each child waited for when its first result is asked for."""
    parent = os.getpid()
    with forked.Ahead(lambda n: [n * n, os.getpid()], range(101), each=10) as ahead:
        got = [ahead.done(i) for i in range(101)]
    n = forked.shares(101, 10)
    assert n > 1 and len(forks) == n - 1
    assert got[: ahead.first] == [None] * ahead.first and ahead.first == -(-101 // n)
    assert [r[0] for r in got[ahead.first :]] == [i * i for i in range(ahead.first, 101)]
    assert {r[1] for r in got[ahead.first :]} == set(forks) and parent not in forks
    assert all(map(reaped, forks))


def test_ahead_leaves_a_failed_childs_share_here(forks: list[int]) -> None:
    parent = os.getpid()

    def square(n: int) -> int:
        if os.getpid() != parent and n % 7 == 0:
            raise RuntimeError("a child's failure")
        return n * n

    with forked.Ahead(square, range(100), each=10) as ahead:
        got = [ahead.done(i) for i in range(100)]
    assert forks and got == [None] * 100  # every share this process's to do
    assert all(map(reaped, forks))


def test_ahead_without_a_fork_leaves_everything_here(forks: list[int]) -> None:
    with forked.Ahead(lambda n: n, range(9), each=10) as ahead:
        assert [ahead.done(i) for i in range(9)] == [None] * 9
    with forked.Ahead(lambda n: n, [], each=10) as ahead:
        assert ahead.first == 0
    assert forks == []


def test_ahead_closed_early_stops_its_children(forks: list[int]) -> None:
    """This process fails in its own share (a bad source, Ctrl-C): the children still at work
    are stopped, not waited for."""
    parent = os.getpid()

    def slow(n: int) -> int:
        if os.getpid() != parent:
            threading.Event().wait(30)
        return n

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), forked.Ahead(slow, range(100), each=10):
        raise KeyboardInterrupt
    assert forks and all(map(reaped, forks))
    assert time.monotonic() - started < 20  # stopped, not waited for


def test_ahead_gives_a_whole_share_to_fn_where_asked(forks: list[int]) -> None:
    """whole=True: a child calls fn once with its share (work done in batches), the results
    still asked for by item."""
    calls: list[int] = []

    def batched(share: list[int]) -> list[list[int]]:
        calls.append(len(share))
        return [[n * n, len(share)] for n in share]

    with forked.Ahead(batched, list(range(100)), each=10, whole=True) as ahead:
        got = [ahead.done(i) for i in range(ahead.first, 100)]
    assert [r[0] for r in got] == [i * i for i in range(ahead.first, 100)]
    assert calls == [] and forks  # each share's one call made in its child
    sizes = [ahead.first] * (len(forks) - 1) + [100 - ahead.first * len(forks)]
    assert sorted({r[1] for r in got}) == sorted(set(sizes))


def test_ahead_shares_are_of_equal_weight_where_given(forks: list[int]) -> None:
    """The first ten items cost fifty times what the others do: the shares are of about equal
    weight, not of equal counts, and the results are still every item's, in order."""
    cost = [100 if n < 10 else 2 for n in range(200)]
    with forked.Ahead(lambda n: n, range(200), each=10, weight=cost.__getitem__) as ahead:
        got = [ahead.done(i) for i in range(200)]
    bounds = ahead.bounds
    assert len(bounds) == forked.shares(200, 10) + 1 > 2 and bounds[0] == 0 and bounds[-1] == 200
    weights = [sum(cost[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    assert max(weights) - min(weights) <= 2 * max(cost) and ahead.first < 10  # not 100 of the 200
    assert got == [None] * ahead.first + list(range(ahead.first, 200))


def test_ahead_forks_for_no_items_that_cost_next_to_nothing(forks: list[int]) -> None:
    """Items of weight 1 (made elsewhere already, say) are not worth a fork by themselves."""
    with forked.Ahead(lambda n: n, range(200), each=10, weight=lambda n: 1 if n != 7 else 50) as ahead:
        assert [ahead.done(i) for i in range(200)] == [None] * 200
    assert forks == []
