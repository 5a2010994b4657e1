"""Respawn pacing: how long a plugin that keeps failing waits before it is started again.

Owns the rule of INTERFACE.md §5: consecutive failed spawns (a start that does not complete
its handshake) back off, 1 s doubling to 60 s; a process that completed its handshake and then
ended is started again at the next read at once; one that lived 60 s resets the count. `Backoff` is the policy (overridable, so
tests need no real waiting) and `Retry` one plugin's count against an injected clock (the
host's loop time, or a test's hand-moved one). It neither spawns nor waits: the plugin handle
asks `waiting()` before it starts a stopped plugin, and tells `Retry` each start and stop.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

__all__ = ["Backoff", "Retry"]

_DOUBLINGS_MAX = 64
"""Past this many doublings every delay is the cap (and 2 ** n still fits a float)."""


class Backoff(msgspec.Struct, frozen=True):
    """Respawn pacing (INTERFACE.md §5)."""

    first: float = 1.0
    """Seconds after the first failed spawn."""
    cap: float = 60.0
    """The longest wait between spawns."""
    reset_after: float = 60.0
    """A process that lived this long resets the count of failures."""

    def delay(self, failures: int) -> float:
        """Seconds before the next start after `failures` (at least 1) in a row."""
        return min(self.first * 2 ** min(failures - 1, _DOUBLINGS_MAX), self.cap)


class Retry:
    """One plugin's consecutive failures, and when it may be started again."""

    def __init__(self, backoff: Backoff, clock: Callable[[], float]) -> None:
        self._backoff = backoff
        self._clock = clock
        self._failures = 0
        self._retry_at = 0.0
        self._born = 0.0

    @property
    def failures(self) -> int:
        """Failures in a row since the count was last reset."""
        return self._failures

    def waiting(self) -> bool:
        """Whether a stopped plugin is still within its backoff."""
        return self._clock() < self._retry_at

    def ran(self) -> None:
        """A process completed its handshake: how long it lives counts from now."""
        self._born = self._clock()

    def failed(self) -> None:
        """A start failed, or a process stopped without proving itself: one failure more,
        and the next start waits."""
        self._failures += 1
        self._retry_at = self._clock() + self._backoff.delay(self._failures)

    def ended(self) -> None:
        """A process that completed its handshake ended: it may start again at once (its
        start did not fail); one that lived `reset_after` also resets the count, so a later
        failed start waits the first delay again."""
        if self._clock() - self._born >= self._backoff.reset_after:
            self._failures = 0
        self._retry_at = self._clock()
