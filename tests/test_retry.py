"""call_with_retries: which errors are retried, and how long it waits between tries."""

from __future__ import annotations

import pytest

from wikic.backends.retry import MAX_DELAY, MAX_RETRY_AFTER, call_with_retries
from wikic.errors import AuthError, BackendError, BadOutput, RateLimited, Timeout, Unavailable


class Flaky:
    """A call that fails with the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Clock:
    """A fake sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def test_success_first_time_does_not_sleep() -> None:
    clock = Clock()
    assert call_with_retries(Flaky(), retries=3, sleep=clock) == "ok"
    assert clock.delays == []


def test_backoff_doubles_from_half_a_second_up_to_the_cap() -> None:
    clock = Clock()
    fn = Flaky(*[Unavailable("down")] * 8)
    assert call_with_retries(fn, retries=8, sleep=clock, rand=lambda: 1.0) == "ok"
    assert clock.delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, MAX_DELAY, MAX_DELAY]
    assert fn.calls == 9


@pytest.mark.parametrize("draw", [0.0, 0.25, 0.999])
def test_full_jitter_stays_between_zero_and_the_ceiling(draw: float) -> None:
    clock = Clock()
    call_with_retries(Flaky(Timeout("slow"), Timeout("slow")), retries=2, sleep=clock, rand=lambda: draw)
    assert clock.delays == [pytest.approx(draw * 0.5), pytest.approx(draw * 1.0)]


def test_real_jitter_is_within_bounds() -> None:
    clock = Clock()
    call_with_retries(Flaky(*[Unavailable("down")] * 6), retries=6, sleep=clock)
    for attempt, delay in enumerate(clock.delays, start=1):
        assert 0.0 <= delay <= min(MAX_DELAY, 0.5 * 2 ** (attempt - 1))


def test_retry_after_is_honoured_instead_of_backoff() -> None:
    clock = Clock()
    fn = Flaky(RateLimited("slow down", retry_after=2.0))
    assert call_with_retries(fn, retries=3, sleep=clock, rand=lambda: 1.0) == "ok"
    assert clock.delays == [2.0]


def test_retry_after_is_capped() -> None:
    clock = Clock()
    call_with_retries(Flaky(RateLimited("later", retry_after=3600)), retries=1, sleep=clock)
    assert clock.delays == [MAX_RETRY_AFTER]


def test_rate_limited_without_retry_after_backs_off() -> None:
    clock = Clock()
    call_with_retries(Flaky(RateLimited("slow down")), retries=1, sleep=clock, rand=lambda: 1.0)
    assert clock.delays == [0.5]


@pytest.mark.parametrize("error", [AuthError("bad key"), BadOutput("junk"), BackendError("400")])
def test_errors_that_are_not_retryable_raise_at_once(error: BackendError) -> None:
    clock = Clock()
    fn = Flaky(error)
    with pytest.raises(type(error)):
        call_with_retries(fn, retries=5, sleep=clock)
    assert fn.calls == 1
    assert clock.delays == []


def test_other_exceptions_are_bugs_and_raise_at_once() -> None:
    fn = Flaky(KeyError("x"))
    with pytest.raises(KeyError):
        call_with_retries(fn, retries=5, sleep=Clock())
    assert fn.calls == 1


def test_gives_up_after_retries_and_reraises_the_last_error() -> None:
    clock = Clock()
    last = Unavailable("third")
    fn = Flaky(Unavailable("first"), Timeout("second"), last, Unavailable("never reached"))
    with pytest.raises(Unavailable) as info:
        call_with_retries(fn, retries=2, sleep=clock)
    assert info.value is last
    assert fn.calls == 3
    assert len(clock.delays) == 2


def test_zero_retries_means_one_try() -> None:
    fn = Flaky(Unavailable("down"))
    with pytest.raises(Unavailable):
        call_with_retries(fn, retries=0, sleep=Clock())
    assert fn.calls == 1


def test_on_retry_hears_each_attempt_error_and_delay() -> None:
    heard: list[tuple[int, str, float]] = []
    first, second = Timeout("a"), RateLimited("b", retry_after=1.5)
    call_with_retries(
        Flaky(first, second),
        retries=3,
        sleep=Clock(),
        rand=lambda: 1.0,
        on_retry=lambda attempt, error, delay: heard.append((attempt, str(error), delay)),
    )
    assert heard == [(1, "a", 0.5), (2, "b", 1.5)]
