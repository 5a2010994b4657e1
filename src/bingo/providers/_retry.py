"""When a request to a model's service is worth another try, and how long to wait first.

Owns the one exception for a failure the service calls momentary (`Transient`, raised by
`_http` and the provider modules where the API says so), the statuses that are momentary,
the reading of a server's `retry-after-ms` / `retry-after`, and the policy (`Retry`): a
bounded number of tries, the server's wait when it asks for one, else exponential backoff
with full jitter (ADR-0020). It does not make requests or say notices: `_http.HttpProvider`
runs the tries and says each wait.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from ..kernel.errors import ProviderError

__all__ = [
    "ATTEMPTS",
    "BACKOFF_BASE",
    "BACKOFF_CAP",
    "LONGEST_ASKED_WAIT",
    "RETRY_STATUSES",
    "Retry",
    "Transient",
    "retry_after",
]

ATTEMPTS = 4
"""Tries of one model request, the first included, when settings do not say (`modelAttempts`)."""

BACKOFF_BASE = 1.0
"""Seconds: the longest wait before the second try; each later try may wait twice as long."""

BACKOFF_CAP = 30.0
"""Seconds: no backoff wait is longer, however many tries came before."""

LONGEST_ASKED_WAIT = 60.0
"""Seconds: a server asking (retry-after) for a longer wait than this is not waited for; the
turn fails at once with its words, and the person decides when to try again."""

RETRY_STATUSES: Mapping[int, str] = {
    408: "request timeout",
    409: "conflict",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
    529: "overloaded",
}
"""The statuses worth another try (both APIs' error pages name 429 and 5xx as momentary,
Anthropic 529 as overloaded; 408 and 409 are what their SDKs retry too), in the notice's words.
Any other 5xx is retried as a server error; any other 4xx never is."""


class Transient(ProviderError):
    """A failure the service says is momentary, so worth another try if none of the answer
    has reached the person: `why` is the notice's words for it (`overloaded (529)`), `after`
    the seconds the server asked to wait (None: it did not say)."""

    def __init__(self, message: str, hint: str, *, why: str, after: float | None = None) -> None:
        super().__init__(message, hint)
        self.why = why
        self.after = after


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The seconds a server asks to wait before the next try: `retry-after-ms` (which the
    providers' own SDKs read first), else `retry-after` as seconds or as an HTTP date; None
    when it asks nothing readable. `now` is the wall clock (seconds since the epoch) a date
    is measured from."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None  # an HTTP date is always GMT; one without a zone is not one
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True, slots=True)
class Retry:
    """How a request that failed momentarily is tried again: at most `attempts` tries in
    all; before each, the wait the server asked for, else a random wait between 0 and
    `base` doubled per try so far (at most `cap`): full jitter, so many clients shed by one
    overloaded service do not come back in step. `sleep` and `random` are injected so tests
    wait on a virtual clock."""

    attempts: int = ATTEMPTS
    base: float = BACKOFF_BASE
    cap: float = BACKOFF_CAP
    longest: float = LONGEST_ASKED_WAIT
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = field(default=random.random)

    def wait(self, tries: int, asked: float | None) -> float | None:
        """Seconds to wait after `tries` failed tries; None when the server asked for more
        than `longest`."""
        if asked is not None:
            return asked if asked <= self.longest else None
        return self.random() * min(self.cap, self.base * 2 ** (tries - 1))
