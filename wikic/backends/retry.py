"""Retrying a model call: which errors deserve another try, and how long to wait."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from wikic.errors import BackendError, RateLimited

T = TypeVar("T")

BASE_DELAY = 0.5  # seconds before the first retry, at most (full jitter)
MAX_DELAY = 20.0  # the exponential backoff stops growing here
MAX_RETRY_AFTER = 60.0  # a server asking for longer is still retried sooner

OnRetry = Callable[[int, BackendError, float], None]


def backoff_delay(attempt: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait after the `attempt`-th failed try (1-based): full jitter.

    Full jitter (a uniform draw below an exponentially growing ceiling) spreads
    parallel callers apart, so they do not hit a rate limit again in lockstep.
    """
    ceiling = min(MAX_DELAY, BASE_DELAY * 2.0 ** (attempt - 1))
    return rand() * ceiling


def retry_delay(attempt: int, error: BackendError, rand: Callable[[], float]) -> float:
    """The server's Retry-After when it gave one, else the jittered backoff."""
    if isinstance(error, RateLimited) and error.retry_after is not None:
        return min(max(error.retry_after, 0.0), MAX_RETRY_AFTER)
    return backoff_delay(attempt, rand)


def call_with_retries(
    fn: Callable[[], T],
    *,
    retries: int,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
    on_retry: OnRetry | None = None,
) -> T:
    """Call `fn`, retrying up to `retries` more times on a retryable BackendError.

    Errors that are not retryable (AuthError, BadOutput, anything else) propagate
    at once; after the last try the last error propagates.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn()
        except BackendError as error:
            if not error.retryable or attempt > retries:
                raise
            delay = retry_delay(attempt, error, rand)
            if on_retry is not None:
                on_retry(attempt, error, delay)
            sleep(delay)
