"""Notices: one line said under a source's name (`wordcount: ...`, `bingo: ...`).

Owns the fan-out of notices to whoever listens (the surface, the session store) and the
"say it once" rule for faults that would otherwise repeat. It does not draw them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..wire import Notice, NoticeLevel

__all__ = ["Notices"]

_log = logging.getLogger(__name__)

Listener = Callable[[Notice], None]


class Notices:
    """The host's notice line. Listeners are called in order; one that fails is logged and
    skipped, never allowed to stop the others."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._said_once: set[tuple[str, str]] = set()

    def listen(self, listener: Listener) -> None:
        """Call `listener` with every notice from now on."""
        self._listeners.append(listener)

    def say(self, source: str, message: str, level: NoticeLevel = "info") -> None:
        """Say one line under `source`'s name."""
        notice = Notice(source=source, message=message, level=level)
        for listener in self._listeners:
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
