"""One wikic process writes a project at a time: an flock on .wikic/lock.

The kernel drops an flock when its holder dies, so a lock left by a killed
process is never stale; the pid inside is only for the message.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from wikic.errors import LockError

_held: set[int] = set()  # the descriptors of the locks this process holds


def _close_held() -> None:
    """In a forked child: let go of the parent's locks' descriptors. An flock belongs to the
    open file, which a child shares: a child still at work after its parent was killed would
    keep the project locked."""
    for fd in _held:
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_close_held)


class ProjectLock:
    def __init__(self, path: Path, wait: bool = True, on_wait: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.wait = wait
        self.on_wait = on_wait
        self._fd: int | None = None

    def holder(self) -> str:
        try:
            return self.path.read_text().strip() or "unknown"
        except OSError:
            return "unknown"

    def acquire(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise LockError(f"cannot open the project lock {self.path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self.holder()
            if not self.wait:
                os.close(fd)
                raise LockError(
                    f"another wikic process (pid {holder}) is working on this project; "
                    "wait for it to finish, or run without --no-wait to queue behind it"
                ) from None
            if self.on_wait:
                self.on_wait(f"waiting for another wikic process (pid {holder}) to finish...")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        _held.add(fd)

    def release(self) -> None:
        if self._fd is not None:
            _held.discard(self._fd)
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ProjectLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
