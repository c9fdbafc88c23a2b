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

Anything that is not a WikicError is a bug and keeps its traceback.
"""

from __future__ import annotations


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
