"""Helpers for the tests of work shared with forked children (wikic/forked.py)."""

from __future__ import annotations

import os


class Forks(list[int]):
    """The pids of the children a test's process forked; `allowed`: whether wikic/forked.py
    may fork (forked.shares as it is) or not (one share: the plain loop)."""

    allowed = True


def reaped(pid: int) -> bool:
    """Whether the child is gone and was waited for."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False
