"""One room's worker: its queue (QUEUE_LIMIT at most: past it a flood is dropped, with one
log line and one notice per flood), the words it takes before any queue (`/stop`, an answer
to its question), falling silent while others than the allowed users read the room (and
speaking again when they leave), and running each message through the room's run
(a `RunHandle`, which the app asks the run factory for: `MakeRoom`).

It neither syncs with the homeserver (`_sync`, `_serve`) nor draws (`RoomSurface`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...kernel.errors import BingoError, SettingsError
from ...wire import Notice
from .._escape import escape
from .._seam import RunHandle, Surface
from ._outbox import Outbox, message
from ._room import RoomSurface

if TYPE_CHECKING:
    from ._state import State

__all__ = ["QUEUE_LIMIT", "STOP", "MakeRoom", "Readers", "Room"]

_log = logging.getLogger(__name__)

QUEUE_LIMIT = 16
"""Messages a room holds while a turn runs; past it a flood is dropped."""
_EXIT_WORDS = frozenset({"/exit", "/quit"})
_NAMED = 3
"""The others a refusal to answer names (then how many more)."""
STOP = "/stop"
"""The channel's own word for Ctrl-C: interrupt the room's running turn (never queued)."""

MakeRoom = Callable[[Surface, "str | None"], RunHandle]
"""The app's maker of a room's run (the run factory's, in the room's worker task): given
the room's surface and the id of the session the room was (None for a new one)."""


@dataclass(frozen=True, slots=True)
class Readers:
    """Who may read a room the bot answers in: the bot itself and `allowedUsers`, or anyone
    when `sharedRooms` is true."""

    me: str
    allowed: frozenset[str]
    shared: bool

    def others(self, members: set[str]) -> list[str]:
        """The members no answer may reach (none when rooms may be shared)."""
        return [] if self.shared else sorted(members - self.allowed - {self.me})


def _named(users: list[str]) -> str:
    """`@a:h`, `@a:h and @b:h`, `@a:h, @b:h, @c:h and 2 more`: escaped, as any name from elsewhere."""
    shown = [escape(user) for user in users[:_NAMED]]
    more = len(users) - len(shown)
    if more:
        return f"{', '.join(shown)} and {more} more"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


class Room:
    """One room's queue and its worker."""

    def __init__(self, room: str, surface: RoomSurface, outbox: Outbox) -> None:
        self.id = room
        self.surface = surface
        self.outbox = outbox
        self.members: set[str] = set()
        """Who is joined to the room, as last learned."""
        self.silent = False
        """True while others than the allowed users read the room: it is not answered."""
        self.queue: asyncio.Queue[str] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        self.flooded = False
        self.running = False
        self.run: RunHandle | None = None
        self.joined_at: float | None = None
        """When bingo joined a room it had not read before (time.monotonic()), or None: in
        such a room, what is older than the join is history (and a limited timeline is no
        loss)."""
        self.said_encrypted = False

    def judge(self, members: set[str], readers: Readers) -> None:
        """Learn who is joined now, and fall silent or speak again as that says."""
        self.members = members
        others = readers.others(members)
        if others:
            self.silence(
                f"{_named(others)} {'is' if len(others) == 1 else 'are'} in it too, and everyone in a room reads what bingo says"
            )
        elif self.silent:
            self.silent = False
            self.outbox.unmute(self.id)
            _log.warning("%s: only the allowed users are in it again: answering there", self.id)
            print(
                escape(f"bingo: only the allowed users are in {self.id} again: answering there"),
                file=sys.stderr,
                flush=True,
            )
            self.outbox.put(
                self.id, message("only the allowed users are in this room again: bingo answers here", notice=True)
            )

    def silence(self, why: str) -> None:
        """Answer nothing more here (once: said in one line, in the room and on stderr): the
        running turn is stopped, its question answered no, what waits dropped, and the outbox
        sends the room nothing else."""
        if self.silent:
            return
        self.silent = True
        self.outbox.mute(self.id)
        self.surface.decline()
        if self.running and self.run is not None:
            self.run.interrupt()
        dropped = self.left()
        hint = "set channels.matrix.sharedRooms to true to answer in rooms others read"
        _log.warning("%s: not answering there (%s); %d waiting messages dropped", self.id, why, len(dropped))
        self.outbox.put(
            self.id, message(f"bingo does not answer in this room: {why} ({hint})", notice=True), always=True
        )
        print(escape(f"bingo: not answering in {self.id}: {why} ({hint})"), file=sys.stderr, flush=True)

    def take(self, sender: str, text: str) -> None:
        if self.silent:
            _log.info(
                "ignored a message from %s in %s: others than the allowed users read the room", escape(sender), self.id
            )
            return
        if self.surface.answer(text):
            _log.info("%s answered the question in %s", sender, self.id)
            return
        if text.split(maxsplit=1)[0] == STOP:
            self._stop()
            return
        try:
            self.queue.put_nowait(text)
            self.flooded = False
        except asyncio.QueueFull:
            if not self.flooded:
                self.flooded = True
                _log.warning(
                    "%s: %d messages are waiting already; dropping what %s sends until there is room",
                    self.id,
                    QUEUE_LIMIT,
                    sender,
                )
                self.surface.notice(
                    Notice(
                        source="bingo",
                        message=f"{QUEUE_LIMIT} messages are waiting already: the ones after them were dropped; send them again when bingo has answered",
                        level="warning",
                    )
                )
            return
        if self.surface.asking():
            self.surface.notice(
                Notice(source="bingo", message="queued: the question above waits for yes, always or no first")
            )
        elif self.running:
            _log.info("%s: queued behind the running turn (%d waiting)", self.id, self.queue.qsize())

    def _stop(self) -> None:
        """`/stop`: interrupt the running turn (as Ctrl-C does in a terminal); a second
        stops waiting for the calls that have not answered their cancel."""
        if not self.running or self.run is None:
            self.surface.notice(Notice(source="bingo", message="nothing is running here"))
            return
        self.surface.decline()  # a question of the stopped turn is answered no
        waiting = self.run.interrupt()
        if waiting:
            self.surface.notice(
                Notice(
                    source="bingo",
                    message=f"still waiting for {', '.join(waiting)} to answer its cancel: /stop again stops waiting",
                )
            )

    def left(self) -> list[str]:
        """What waits in the queue (taken out of it)."""
        texts: list[str] = []
        while not self.queue.empty():
            texts.append(self.queue.get_nowait())
        return texts

    async def work(self, make_room: MakeRoom, state: State) -> None:
        run = self.run = make_room(self.surface, state.sessions.get(self.id))
        for text in state.waiting.pop(self.id, []):
            if not self.queue.full():
                self.queue.put_nowait(text)
        try:
            while True:
                text = await self.queue.get()
                _log.info("%s: running a message (%d more waiting)", self.id, self.queue.qsize())
                self.running = True
                try:
                    await self._one(run, text)
                finally:
                    self.running = False
                session = run.session_id()
                if state.sessions.get(self.id) != session:
                    # None after /clear: a restart then starts the fresh conversation too.
                    if session is None:
                        state.sessions.pop(self.id, None)
                    else:
                        state.sessions[self.id] = session
                    state.save()
        finally:
            run.close()

    async def _one(self, run: RunHandle, text: str) -> None:
        if self.silent:
            return
        if text.split(maxsplit=1)[0] in _EXIT_WORDS:
            self.surface.notice(
                Notice(source="bingo", message="bingo keeps running in this room: stop it where it runs (Ctrl-C)")
            )
            return
        try:
            await run.submit(text)
        except SettingsError:
            raise
        except BingoError as exc:
            self.surface.end()
            self.surface.notice(Notice(source="bingo", message=exc.line(), level="error"))
        except Exception:  # boundary: one message must not stop the room
            _log.exception("a message in %s failed", self.id)
            self.surface.end()
            self.surface.notice(
                Notice(source="bingo", message="internal error; details are in bingo's log", level="error")
            )
