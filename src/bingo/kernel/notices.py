"""Notices: one line said under a source's name (`wordcount: ...`, `bingo: ...`).

Owns the fan-out of notices to whoever listens (the surface, each run's session) and the
way each stops listening, the "say
it once" rule for faults that would otherwise repeat, and the bound on what a source other
than the host may say: a burst, then NOTICES_PER_SECOND; what is left out goes to bingo's
log, and `flush` says in one line per source how many were. It does not draw them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import msgspec

from ..wire import Notice, NoticeLevel
from .log import cut

__all__ = ["HOST", "NOTICE_BURST", "NOTICES_PER_SECOND", "Notices"]

_log = logging.getLogger(__name__)

HOST = "bingo"
"""The host's own source: not limited, since bingo itself bounds what it says."""
NOTICE_BURST = 10
"""Notices a source may raise at once: a plugin's real troubles fit, a flood does not."""
NOTICES_PER_SECOND = 1.0
"""How fast a source past its burst earns another: about a line a person reads a second."""


class _Budget(msgspec.Struct):
    """What one source may still say (a token bucket), and how much it was refused."""

    tokens: float
    at: float
    left_out: int = 0


Listener = Callable[[Notice], None]


class Notices:
    """The host's notice line. Listeners are called in order; one that fails is logged and
    skipped, never allowed to stop the others. `clock` paces the limit (seconds);
    `kept_in` names, for the person, where the notices left out are."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, kept_in: str = "bingo's log") -> None:
        self._listeners: list[Listener] = []
        self._said_once: set[tuple[str, str]] = set()
        self._clock = clock
        self._kept_in = kept_in
        self._budgets: dict[str, _Budget] = {}

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with every notice from now on; what is returned stops that (once
        is enough: called again, it does nothing). A run listens while it is open."""
        self._listeners.append(listener)
        stopped = False

        def stop() -> None:
            nonlocal stopped
            if stopped:
                return
            stopped = True
            # By identity, the latest first: the same listener given twice listens twice.
            for at in range(len(self._listeners) - 1, -1, -1):
                if self._listeners[at] is listener:
                    del self._listeners[at]
                    return

        return stop

    def listening(self) -> int:
        """How many listeners there are now."""
        return len(self._listeners)

    def say(self, source: str, message: str, level: NoticeLevel = "info") -> None:
        """Say one line under `source`'s name (cut to a few KiB), unless the source is past
        its limit: then the line goes to bingo's log only, and is counted for `flush`."""
        message = cut(message)
        if not self._admit(source):
            _log.info("notice left out: %s: %s", source, message)
            return
        self._tell(Notice(source=source, message=message, level=level))

    def flush(self) -> None:
        """Say, for each source that was left out since the last flush, how many were."""
        for source, budget in self._budgets.items():
            if budget.left_out:
                count, budget.left_out = budget.left_out, 0
                more = "1 more notice was" if count == 1 else f"{count} more notices were"
                self._tell(
                    Notice(source=source, message=f"{more} left out here; they are in {self._kept_in}", level="warning")
                )

    def _admit(self, source: str) -> bool:
        if source == HOST:
            return True
        now = self._clock()
        budget = self._budgets.get(source)
        if budget is None:
            budget = self._budgets[source] = _Budget(tokens=NOTICE_BURST, at=now)
        else:
            budget.tokens = min(NOTICE_BURST, budget.tokens + (now - budget.at) * NOTICES_PER_SECOND)
            budget.at = now
        if budget.tokens >= 1:
            budget.tokens -= 1
            return True
        budget.left_out += 1
        return False

    def _tell(self, notice: Notice) -> None:
        for listener in tuple(self._listeners):  # one may stop listening meanwhile
            try:
                listener(notice)
            except Exception:  # boundary: a listener must not silence the others
                _log.exception("notice listener failed")

    def say_once(self, source: str, key: str, message: str, level: NoticeLevel = "warning") -> bool:
        """Say it unless a notice with this `key` was already said for `source`; True if said."""
        if (source, key) in self._said_once:
            return False
        self._said_once.add((source, key))
        self.say(source, message, level)
        return True
