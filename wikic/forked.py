"""Work shared with forked children, where that is safe and worth it: on Linux, in a process
with no other thread, with more than one CPU to run on and enough items for each. Each child
takes every n-th item, does them, and sends its results back marshalled through a pipe, while
this process does its own share; a child that fails (or a fork refused) leaves its share to
this process, so the results are those of the plain loop in every case.

What a child runs must not touch what this process holds besides its own arguments (an open
database, say): it reads files and computes. It leaves by os._exit, running no finalizer of
this process's objects.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import itertools
import marshal
import os
import signal
import sys
from collections.abc import Callable, Sequence
from functools import partial
from types import TracebackType
from typing import Any, Generic, TypeVar

T = TypeVar("T")

EACH = 500  # items a child takes at least: fewer are not worth a fork


def threads() -> int:
    """Threads in this process that Python knows of (forking beside another is unsafe)."""
    threading = sys.modules.get("threading")
    return 1 if threading is None else int(threading.active_count())


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def shares(count: int, each: int | None = None) -> int:
    """How many processes share `count` items, `each` at least (EACH): 1 where forking is not
    safe or not worth it."""
    if sys.platform != "linux" or threads() > 1:
        return 1
    return max(1, min(cpus(), count // (each or EACH)))


def mapped(fn: Callable[[T], Any], items: Sequence[T], each: int | None = None) -> list[Any]:
    """[fn(item) for item in items], the work shared with forked children where it can be
    (`shares`); fn's results must be marshallable, and are as marshal gives them back."""
    n = shares(len(items), each)
    if n < 2:
        return [fn(item) for item in items]
    children: dict[int, tuple[int, int]] = {}  # share -> (pid, the pipe's end to read)
    try:
        for k in range(1, n):
            started = _fork(partial(_each, fn), items[k::n])
            if started is not None:
                children[k] = started
        done = {k: [fn(item) for item in items[k::n]] for k in range(n) if k not in children}
        for k, (pid, read) in list(children.items()):
            del children[k]
            got = _collect(pid, read)
            share = items[k::n]
            done[k] = got if got is not None and len(got) == len(share) else [fn(item) for item in share]
    finally:
        for pid, read in children.values():  # interrupted: stopped, and their pipes closed
            _stop(pid, read)
    out: list[Any] = [None] * len(items)
    for k, results in done.items():
        out[k::n] = results
    return out


class Ahead(Generic[T]):
    """fn over `items` but for a first share, done by forked children (as `shares` allows: one
    share each) while this process goes through that first share itself, in order, as it
    likes; `done(i)`: item i's result where a child did it (the child waited for when first
    asked), None where it is this process's to do (its own share, a failed child's, no child).
    A context manager: the children it still has when it closes are stopped."""

    def __init__(
        self,
        fn: Callable[[Any], Any],
        items: Sequence[T],
        each: int | None = None,
        whole: bool = False,
        weight: Callable[[T], int] | None = None,
    ) -> None:
        """fn: an item's result; with `whole`, a share's (a sequence of items), as a list.
        `weight`: what an item costs, about, 1 for next to nothing (the shares are of equal
        weight, and only the items that cost more are counted to see whether they are worth a
        fork; else of equal counts)."""
        weights = [max(1, weight(item)) for item in items] if weight is not None else None
        n = shares(len(items) if weights is None else sum(w > 1 for w in weights), each)
        self.bounds = _bounds(len(items), n, weights)  # share k is items[bounds[k] : bounds[k + 1]]
        self.first = self.bounds[1]  # this process's share: items[:first]
        self._children: dict[int, tuple[int, int]] = {}  # share -> (pid, the pipe's end to read)
        self._got: dict[int, list[Any] | None] = {}
        try:
            for k in range(1, n):
                share = items[self.bounds[k] : self.bounds[k + 1]]
                started = _fork(fn, share) if whole else _fork(partial(_each, fn), share)
                if started is not None:
                    self._children[k] = started
        except BaseException:
            self.close()
            raise

    def done(self, i: int) -> Any:
        if i < self.first:
            return None
        k = bisect.bisect_right(self.bounds, i) - 1
        if k in self._children:
            got = _collect(*self._children.pop(k))
            share = self.bounds[k + 1] - self.bounds[k]
            self._got[k] = got if got is not None and len(got) == share else None
        got = self._got.get(k)
        return None if got is None else got[i - self.bounds[k]]

    def close(self) -> None:
        for pid, read in self._children.values():  # interrupted: stopped, and their pipes closed
            _stop(pid, read)
        self._children.clear()

    def __enter__(self) -> Ahead[T]:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()


def even(count: int, n: int) -> list[int]:
    """Where each of n runs of `count` items, of equal sizes (within one), starts, and the end
    (n = 0: [0], no run)."""
    return [count * k // n for k in range(n + 1)] if n else [0]


def rounds(count: int, size: int) -> list[int]:
    """Where each round of `count` items shared at a time starts, and the end: `size` items
    each, about (a round's results are held at once), and of equal sizes. Not `size` and what
    is left: 10,299 pages were 5,000, 5,000 and 299, too few to share (EACH), and a lint's last
    round, 89 topic pages among them, was this process's alone, one CPU idle for 0.4-0.7 s."""
    return even(count, max(1, round(count / size)) if count else 0)


def _bounds(count: int, n: int, weights: list[int] | None) -> list[int]:
    """Where each of n shares of `count` items starts, and the end: shares of about equal
    weight (`weights`: each item's), else of equal counts."""
    if weights is None or n < 2:
        size = -(-count // n) if count else 0
        return [min(k * size, count) for k in range(n)] + [count]
    at = list(itertools.accumulate(weights))
    total = at[-1]
    bounds = [0]
    for k in range(1, n):  # the first item past k n-ths of the weight, past the last start
        bounds.append(max(bounds[-1] + 1, bisect.bisect_left(at, total * k / n) + 1))
    return [min(b, count) for b in bounds] + [count]


def _each(fn: Callable[[T], Any], share: Sequence[T]) -> list[Any]:
    return [fn(item) for item in share]


def _fork(fn: Callable[[Sequence[T]], list[Any]], share: Sequence[T]) -> tuple[int, int] | None:
    """A child doing `share` (fn: its results): its pid and the pipe's end to read; None where
    none could start."""
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: its share, its results written, leaving without cleanup
        try:
            gc.disable()  # never a finalizer of the parent's garbage
            os.close(read)
            data = marshal.dumps(fn(share))
            view = memoryview(data)
            while view:
                view = view[os.write(write, view) :]
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def _collect(pid: int, read: int) -> list[Any] | None:
    """What the child sent (None: it failed, or what it sent does not read); its pipe closed
    and the child waited for, or, interrupted, stopped."""
    chunks = []
    try:
        while chunk := os.read(read, 1 << 20):
            chunks.append(chunk)
    except OSError:
        chunks = []
    except BaseException:  # Ctrl-C while the child works on: not waited for
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(read)
        _reap(pid)
    try:
        got = marshal.loads(b"".join(chunks))
    except (EOFError, ValueError, TypeError):
        return None
    return got if isinstance(got, list) else None


def _stop(pid: int, read: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    os.close(read)
    _reap(pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
