"""Work on a thread pool that Ctrl-C cannot wedge.

A KeyboardInterrupt raised in the main thread while it works a pool's locks (submitting a
call, `as_completed`, a future's result) can leave one of them taken: the workers then wait
for it forever (the build hangs at Ctrl-C), or the `with` around it raises
RuntimeError('release unlocked lock') in its place. Here the main thread waits only on a
SimpleQueue, and while the pool runs, SIGINT and SIGTERM (where Python handles them) only post
a stop to that queue: the queued calls are cancelled, the calls under way finish, and then the
handler runs as it would have (a KeyboardInterrupt).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from queue import SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")

STOPPING = (signal.SIGINT, signal.SIGTERM)


@dataclass(frozen=True)
class _Signalled:
    handler: Callable[[int, Any], Any]
    signum: int


def run_all(fn: Callable[[T], object], items: Sequence[T], jobs: int) -> None:
    """fn(item) for every item, `jobs` at a time. The first error a call raises, or a stop
    signal, cancels the calls not started; it is raised once the calls under way finish."""
    done: SimpleQueue[BaseException | _Signalled | None] = SimpleQueue()

    def one(item: T) -> None:
        try:
            fn(item)
        except BaseException as exc:  # handed to the main thread, raised there
            done.put(exc)
        else:
            done.put(None)

    stop: BaseException | _Signalled | None = None
    with _signals_posted(done):
        pool = ThreadPoolExecutor(max_workers=max(1, jobs))
        try:
            for item in items:
                pool.submit(one, item)
            for _ in items:
                stop = done.get()
                if stop is not None:
                    break
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    if isinstance(stop, _Signalled):
        stop.handler(stop.signum, None)  # raises: KeyboardInterrupt
        raise KeyboardInterrupt  # a handler that returned: the work is cut short all the same
    if stop is not None:
        raise stop


@contextlib.contextmanager
def _signals_posted(done: SimpleQueue[BaseException | _Signalled | None]) -> Iterator[None]:
    """While the pool runs, a stop signal Python handles is posted to `done` (SimpleQueue.put
    may be called from a signal handler), never raised where the main thread stands."""
    if threading.current_thread() is not threading.main_thread():  # signals reach only the main one
        yield
        return
    replaced: dict[signal.Signals, Callable[[int, Any], Any]] = {}
    for sig in STOPPING:
        handler = signal.getsignal(sig)
        if callable(handler):  # not SIG_DFL (the process ends) or SIG_IGN
            replaced[sig] = handler
            signal.signal(sig, _poster(done, handler))
    try:
        yield
    finally:
        for sig, handler in replaced.items():
            signal.signal(sig, handler)


def _poster(
    done: SimpleQueue[BaseException | _Signalled | None], handler: Callable[[int, Any], Any]
) -> Callable[[int, Any], None]:
    def post(signum: int, frame: Any) -> None:
        done.put(_Signalled(handler, signum))

    return post
