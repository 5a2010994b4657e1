"""What the channel sends, in order, each message with its own Matrix transaction id.

Owns the one sending task: messages are queued by the room surfaces (which never wait on
the network) and sent one at a time, so a room reads them in the order they were said. A
message keeps its transaction id through every retry (the homeserver makes one event of a
repeated id), so the homeserver going away mid-send loses nothing and doubles nothing. It
also owns the bound on one message: Matrix refuses an event past 64 KiB, so a body past
BODY_LIMIT characters is cut with a line saying so, and an HTML body that would not fit is
left out (the text fold is the message then). And it owns the rooms' silence: a room that
is muted (others than the allowed users read it, ADR-0029) is sent nothing but what is put
with `always`, and what was queued for it before it was muted is dropped, not sent late.
An edit put while an earlier edit of the same message still waits replaces that one (one
PUT for both): a turn's status message edited at each call costs what the homeserver can
take, not a request a call.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from dataclasses import dataclass

from ...wire import Json
from ._homeserver import Homeserver, Refusal

__all__ = ["BODY_LIMIT", "Outbox", "edit", "message"]

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


def edit(event: str, content: dict[str, Json]) -> dict[str, Json]:
    """`content` as an edit of the message `event` (`m.replace`): clients that know edits
    show the new text in place; others show the `* ` fallback."""
    body = content.get("body")
    fallback: dict[str, Json] = {"msgtype": content.get("msgtype"), "body": f"* {body}"}
    return {**fallback, "m.new_content": content, "m.relates_to": {"rel_type": "m.replace", "event_id": event}}


_EVENTS_KEPT = 256
"""Event ids of sent messages remembered for edits (an edit follows its message closely)."""


@dataclass(slots=True)
class _Item:
    """One message waiting to be sent (its content replaced by a later edit of the same
    message while it waits)."""

    room: str
    txn: str
    content: dict[str, Json]
    replaces: str | None
    always: bool


class Outbox:
    """Messages waiting to be sent, and the task that sends them (`run`)."""

    def __init__(self, server: Homeserver) -> None:
        self._server = server
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._edits: dict[str, _Item] = {}
        """The edit waiting to be sent of each message, by the message's transaction id."""
        # Unique to this process: a transaction id is the bot's device's to make, once.
        self._prefix = f"bingo.{os.getpid()}.{time.time_ns()}."
        self._count = itertools.count(1)
        self._events: dict[str, str] = {}
        """Transaction id -> event id, of the latest messages sent."""
        self._muted: set[str] = set()
        """The rooms sent nothing but what is put with `always`."""

    def put(self, room: str, content: dict[str, Json], *, replaces: str | None = None, always: bool = False) -> str:
        """Queue `content` for `room` (as an edit of the message queued as `replaces`, if
        given; even to a muted room with `always`); its transaction id. Never waits."""
        if replaces is not None and (waiting := self._edits.get(replaces)) is not None:
            waiting.content = content  # not sent yet: this edit is the one it sends
            return waiting.txn
        txn = self._prefix + str(next(self._count))
        item = _Item(room, txn, content, replaces, always)
        if replaces is not None:
            self._edits[replaces] = item
        self._queue.put_nowait(item)
        return txn

    def mute(self, room: str) -> None:
        """Send `room` nothing from now on (what waits to be sent included) but what is put
        with `always`."""
        self._muted.add(room)

    def unmute(self, room: str) -> None:
        self._muted.discard(room)

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
            item = await self._queue.get()
            if item.replaces is not None:
                self._edits.pop(item.replaces, None)
            room, txn, content, replaces, always = item.room, item.txn, item.content, item.replaces, item.always
            try:
                if room in self._muted and not always:
                    _log.info("a message to %s was not sent: others than the allowed users read the room", room)
                    continue
                if replaces is not None:
                    event = self._events.get(replaces)
                    # The message it edits was not sent: this is the message, whole.
                    content = edit(event, content) if event is not None else content
                event = await self._server.send(room, txn, content)
                if replaces is None:
                    self._events[txn] = event
                    while len(self._events) > _EVENTS_KEPT:
                        del self._events[next(iter(self._events))]
            except Refusal as exc:
                _log.warning("a message to %s was not sent: %s", room, exc.line())
            finally:
                self._queue.task_done()
