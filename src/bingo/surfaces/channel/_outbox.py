"""What the channel sends, in order, each message with its own Matrix transaction id.

Owns the one sending task: messages are queued by the room surfaces (which never wait on
the network) and sent one at a time, so a room reads them in the order they were said. A
message keeps its transaction id through every retry (the homeserver makes one event of a
repeated id), so the homeserver going away mid-send loses nothing and doubles nothing. It
also owns the bound on one message: Matrix refuses an event past 64 KiB, so a body past
BODY_LIMIT characters is cut with a line saying so, and an HTML body that would not fit is
left out (the text fold is the message then).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time

from ...wire import Json
from ._homeserver import Homeserver, Refusal

__all__ = ["BODY_LIMIT", "Outbox", "message"]

_log = logging.getLogger(__name__)

BODY_LIMIT = 24_000
"""Characters of one message's `body` (and, separately, its `formatted_body`): with JSON's
escapes both still fit Matrix's 64 KiB event."""


def _cut(text: str) -> str:
    if len(text) <= BODY_LIMIT:
        return text
    return text[:BODY_LIMIT] + f"\n... ({len(text) - BODY_LIMIT} more characters cut)"


def message(body: str, *, html: str | None = None, notice: bool = False) -> dict[str, Json]:
    """The content of one `m.room.message`: `m.notice` for bingo's own lines (clients show
    them quieter, and bots do not answer them), `m.text` otherwise; `html` as its
    `formatted_body` when it fits."""
    content: dict[str, Json] = {"msgtype": "m.notice" if notice else "m.text", "body": _cut(body)}
    if html is not None and len(html) <= BODY_LIMIT:
        content["format"] = "org.matrix.custom.html"
        content["formatted_body"] = html
    return content


class Outbox:
    """Messages waiting to be sent, and the task that sends them (`run`)."""

    def __init__(self, server: Homeserver) -> None:
        self._server = server
        self._queue: asyncio.Queue[tuple[str, str, dict[str, Json]]] = asyncio.Queue()
        # Unique to this process: a transaction id is the bot's device's to make, once.
        self._prefix = f"bingo.{os.getpid()}.{time.time_ns()}."
        self._count = itertools.count(1)

    def put(self, room: str, content: dict[str, Json]) -> None:
        """Queue `content` for `room`; never waits."""
        self._queue.put_nowait((room, self._prefix + str(next(self._count)), content))

    async def drain(self, seconds: float) -> None:
        """Wait until everything queued is sent, at most `seconds`."""
        try:
            async with asyncio.timeout(seconds):
                await self._queue.join()
        except TimeoutError:
            _log.warning("%d messages were still unsent when bingo stopped", self._queue.qsize())

    async def run(self) -> None:
        """Send what is queued, for ever (cancel to stop). A message the homeserver refuses
        (not a failure that passes: those are retried inside `send`) is logged and skipped."""
        while True:
            room, txn, content = await self._queue.get()
            try:
                await self._server.send(room, txn, content)
            except Refusal as exc:
                _log.warning("a message to %s was not sent: %s", room, exc.line())
            finally:
                self._queue.task_done()
