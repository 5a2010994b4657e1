"""What the bot keeps across a restart, in `<data>/channels/matrix.json`: the sync's `since`
token, each room's session, the messages taken but not yet run, and the rooms read before.

It reads and writes the file (atomically; a file it cannot read starts from now) and
nothing else.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from ...kernel.atomic import write_atomic
from ...wire import Json, is_array, is_object
from ._worker import QUEUE_LIMIT

__all__ = ["State"]

_log = logging.getLogger(__name__)


@dataclass
class State:
    """What survives a restart: the `since` token and each room's session."""

    path: Path
    user: str
    since: str | None = None
    sessions: dict[str, str] = field(default_factory=lambda: {})
    waiting: dict[str, list[str]] = field(default_factory=lambda: {})
    rooms: list[str] = field(default_factory=lambda: [])
    """The rooms bingo has read before: in any other, what was said before it joined is
    history, not a message to answer."""
    """Per room, the messages taken from the homeserver but not yet run when bingo stopped:
    run first when it starts again (the `since` token is already past them)."""

    @classmethod
    def load(cls, path: Path, user: str) -> State:
        try:
            data: Json = json.loads(path.read_bytes())
        except FileNotFoundError:
            return cls(path, user)
        except (OSError, ValueError, RecursionError) as exc:
            _log.warning("%s cannot be read (%s): starting from now", path, exc)
            return cls(path, user)
        if not is_object(data) or data.get("userId") != user:
            return cls(path, user)  # another account's: its since token is not ours
        since, sessions = data.get("since"), data.get("sessions")
        kept = {k: v for k, v in sessions.items() if isinstance(v, str)} if is_object(sessions) else {}
        waiting = data.get("waiting")
        left: dict[str, list[str]] = {}
        for room, texts in waiting.items() if is_object(waiting) else ():
            if is_array(texts):
                left[room] = [t for t in texts if isinstance(t, str)][:QUEUE_LIMIT]
        known = data.get("rooms")
        rooms = [r for r in known if isinstance(r, str)] if is_array(known) else []
        return cls(path, user, since if isinstance(since, str) else None, kept, left, rooms)

    def save(self) -> None:
        data = {
            "userId": self.user,
            "since": self.since,
            "sessions": self.sessions,
            "waiting": self.waiting,
            "rooms": self.rooms,
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, (json.dumps(data, indent=1) + "\n").encode("utf-8"))
        except OSError as exc:
            _log.warning("cannot write %s (%s): a restart may answer the latest messages again", self.path, exc)
