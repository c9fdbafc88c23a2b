"""The exceptions wikic raises on purpose, as one tree.

    WikicError                  anything the user can fix or should be told about
    ├── UsageError              a command used wrongly (exit 2)
    ├── ConfigError             schema.yaml is missing or invalid (exit 2)
    ├── ProjectError            no project here, or one already exists (exit 2)
    ├── LockError               another wikic process holds the project (exit 1)
    ├── SourceError             one source cannot be read (binary, too big, ...)
    ├── PageError               a page cannot be parsed or written
    ├── StateError              .wikic/state.db is unusable
    ├── CacheMiss               --offline and a response is not cached
    └── BackendError            the model could not answer
        ├── AuthError           the key is missing or refused (never retried)
        ├── RateLimited         429; carries retry_after seconds when given
        ├── Timeout             the request took too long
        ├── Unavailable         connection refused, 5xx, a stream cut midway
        └── BadOutput           the model's output stayed unusable after repair

Anything that is not a WikicError is a bug and keeps its traceback, but for an OSError the
machine caused (a full disk, too few file handles): `refused` says it as a WikicError, and for
an error a Ctrl-C caused on its way out: `interrupted` says so.
"""

from __future__ import annotations

import errno


class WikicError(Exception):
    """Base class: a message for a person, and the exit code it deserves."""

    exit_code = 1


class UsageError(WikicError):
    exit_code = 2


class ConfigError(WikicError):
    """schema.yaml problems; `problems` lists every one, with key path and line."""

    exit_code = 2

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = problems or []
        text = message
        if self.problems:
            text += "\n" + "\n".join(f"  {p}" for p in self.problems)
        super().__init__(text)


class ProjectError(WikicError):
    exit_code = 2


class LockError(WikicError):
    pass


class SourceError(WikicError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class PageError(WikicError):
    pass


class StateError(WikicError):
    pass


class CacheMiss(WikicError):
    pass


class BackendError(WikicError):
    retryable = False


class AuthError(BackendError):
    pass


class RateLimited(BackendError):
    retryable = True

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class Timeout(BackendError):
    retryable = True


class Unavailable(BackendError):
    retryable = True


class BadOutput(BackendError):
    pass


# What the machine refused, not a bug: said in one line with what to do, never a traceback.
# Every other OSError is a bug and keeps its traceback.
# the process's or the system's open files used up: no file's fault, so never said as one's
# (a page or source "cannot be read"), but as the machine's (REFUSED)
OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE})
REFUSED = {
    errno.ENOSPC: "the disk is full: free some space",
    errno.EDQUOT: "the disk quota is used up: free some space or raise the quota",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied: check the owner and mode of the file and its folder",
    errno.EPERM: "operation not permitted: check the owner and mode of the file and its folder",
    errno.EMFILE: "too many open files: raise the limit (`ulimit -n`)",
    errno.ENFILE: "too many open files on the system",
    errno.EIO: "the disk reported an input/output error",
}


def refused(exc: OSError) -> WikicError | None:
    """The error to report for an OSError the machine caused, or None for any other."""
    what = REFUSED.get(exc.errno or 0)
    if what is None:
        return None
    where = f" ({exc.filename})" if exc.filename else ""
    return WikicError(f"{what}{where}; finished work is kept, run the command again once fixed")


def interrupted(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt (Ctrl-C, or SIGTERM in watch) is behind `exc`. Python's
    threading can turn one into another error: a signal that lands while the main thread waits
    for a lock a worker holds (as concurrent.futures' as_completed does) leaves it untaken, and the
    `with` around it then raises RuntimeError('release unlocked lock') in its place."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False
