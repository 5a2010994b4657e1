"""Respawn pacing on an injected clock: the doubling, the cap, the reset after a long life."""

from __future__ import annotations

from bingo.bridge._backoff import Backoff, Retry


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_defaults_are_the_interfaces_one_second_doubling_to_sixty() -> None:
    backoff = Backoff()
    assert [backoff.delay(n) for n in range(1, 9)] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    assert backoff.reset_after == 60.0


def test_a_long_run_of_failures_stays_at_the_cap() -> None:
    assert Backoff().delay(5000) == 60.0


def test_consecutive_failures_double_the_wait_up_to_the_cap() -> None:
    clock = Clock()
    retry = Retry(Backoff(first=1.0, cap=4.0, reset_after=60.0), clock)
    assert not retry.waiting()
    waits: list[float] = []
    for _ in range(4):
        retry.failed()
        start = clock.now
        while retry.waiting():
            clock.now += 0.5
        waits.append(clock.now - start)
    assert waits == [1.0, 2.0, 4.0, 4.0]
    assert retry.failures == 4


def test_a_process_that_lived_long_enough_resets_the_count_and_may_start_at_once() -> None:
    clock = Clock()
    retry = Retry(Backoff(first=1.0, cap=60.0, reset_after=60.0), clock)
    retry.failed()
    retry.failed()
    clock.now += 10.0
    retry.ran()
    clock.now += 60.0
    retry.ended()
    assert retry.failures == 0
    assert not retry.waiting()


def test_a_process_that_completed_its_handshake_may_start_again_at_once_however_young() -> None:
    clock = Clock()
    retry = Retry(Backoff(first=1.0, cap=60.0, reset_after=60.0), clock)
    retry.failed()
    clock.now += 1.0
    retry.ran()
    clock.now += 0.1
    retry.ended()
    assert not retry.waiting()
    assert retry.failures == 1  # the count resets only after a long life
    retry.failed()  # a failed start after it waits as the second in a row
    clock.now += 1.5
    assert retry.waiting()
    clock.now += 1.0
    assert not retry.waiting()
