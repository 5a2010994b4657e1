"""`bingo --channel matrix`: the bot's run, from the token's check to the last message sent.

Owns the channel's lifetime: the settings' check (a missing homeserver, room list, allowed
list or token is exit 2 with one line; the token itself never appears anywhere), the
token's check (`whoami`: wrong is exit 2), joining the rooms, the long poll of `/sync` with
its `since` token stored in `<data>/channels/matrix.json` after each batch (so a restart
neither replays what was answered nor loses what came while bingo was away), and one worker
per room (`_worker.Room`: its queue, `/stop`, its run, made by the app's `MakeRoom`). What
a sync batch brings is read in `_sync` (a message from a user not in `allowedUsers` is one
line in bingo's log and nothing else); what survives a restart is `_state.State`. Which
session a room is is kept in the same file, so a restart continues it (and `bingo -c` in a terminal can, once
the bot has stopped: while it runs, the room's session is its own, ADR-0029).

Everyone in a room reads what the bot says there, so it answers only in a room whose joined
members are the bot and `allowedUsers` (ADR-0029): who is joined is asked at start and
followed in the sync's member events, in order with the messages; in a room with anyone
else (unless `sharedRooms`), one line says so in the room and on stderr, the room's turn is
stopped, its question answered no, what waits dropped, and nothing more is sent there (the
outbox mutes it) until only the allowed users are left.

It does not compose the run behind a room (app.py does), draw (`RoomSurface`) or speak HTTP
(`Homeserver`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from ...kernel.errors import SettingsError
from ...kernel.interfaces import CommandContext
from ...kernel.registry import BUILTIN
from ...kernel.settings import MatrixChannel, bingo_home
from ...wire import CommandOutcome, CommandSpec, Completion, Notice, TextOutcome
from .._escape import escape
from .._seam import Headless
from ._homeserver import Homeserver, Refusal
from ._outbox import Outbox, message
from ._paths import Paths
from ._room import RoomSurface
from ._state import State
from ._sync import handle
from ._worker import MakeRoom, Readers, Room

__all__ = ["ChannelLog", "StopCommand", "serve_matrix"]

_log = logging.getLogger(__name__)

_STOP_SECONDS = 5.0
"""How long a stopping bot waits for its last messages to be sent."""


class ChannelLog(Headless):
    """The process's own surface while bingo is a bot: a notice raised while a room's message
    runs goes to that room (one raised outside every room's task, as a plugin's is, to the
    rooms running a message: the run factory routes them); any other (at start, or from a
    plugin between messages) comes here, to stderr and bingo's log. Nobody is asked here: a
    room's own surface asks."""

    def notice(self, notice: Notice) -> None:
        _log.info("notice: %s: %s", notice.source, notice.message)
        print(escape(f"{notice.source}: {notice.message}"), file=sys.stderr, flush=True)


_TOKEN_PREFIXES = ("syt_", "syr_", "mat_", "mct_")
"""How access tokens (Synapse's, refresh tokens, MAS's) begin: such an accessTokenEnv is a
token written where its variable's name belongs."""


def _check(channel: MatrixChannel, environ: dict[str, str]) -> str:
    """The access token; SettingsError naming what is missing."""
    where = "channels.matrix in ~/.bingo/settings.json"
    if not channel.homeserver:
        raise SettingsError(f"{where} has no homeserver", 'set "homeserver": "https://matrix.example.org"')
    if not channel.homeserver.lower().startswith(("https://", "http://")):
        raise SettingsError(
            f"{where}: homeserver {channel.homeserver[:200]!r} is not a URL",
            'write it with its scheme: "homeserver": "https://matrix.example.org"',
        )
    if not channel.rooms:
        raise SettingsError(f"{where} has no rooms", 'list the room ids bingo joins: "rooms": ["!room:example.org"]')
    if not channel.allowed_users:
        raise SettingsError(
            f"{where} has no allowedUsers: bingo would listen to nobody",
            'list who may talk to it: "allowedUsers": ["@you:example.org"]',
        )
    name = channel.access_token_env
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name) or name.lower().startswith(_TOKEN_PREFIXES):
        # Never echoed: a token written here by mistake must not reach stderr.
        raise SettingsError(
            f"{where}: accessTokenEnv is not the name of an environment variable",
            'name the variable that holds the token ("accessTokenEnv": "BINGO_MATRIX_TOKEN"), never the token itself',
        )
    token = environ.get(channel.access_token_env, "").strip()
    if not token:
        raise SettingsError(
            f"{channel.access_token_env} is not set: bingo reads the bot's Matrix access token from it",
            f"export {channel.access_token_env}=<the bot's access token>, or name another variable in accessTokenEnv",
        )
    return token


async def serve_matrix(channel: MatrixChannel, *, environ: dict[str, str], data_dir: Path, make_room: MakeRoom) -> int:
    """Be the bot until SIGINT or SIGTERM; 0 then. SettingsError (exit 2) when the settings
    are incomplete, the token is missing or wrong, or no room could be joined."""
    token = _check(channel, environ)
    assert channel.homeserver is not None  # _check
    rooms: dict[str, Room] = {}
    server: Homeserver

    def down(why: str) -> None:
        print(escape(f"bingo: the homeserver is away ({why}); trying again"), file=sys.stderr, flush=True)

    def up(seconds: float) -> None:
        for room in rooms.values():
            outbox.put(
                room.id, message(f"bingo: the homeserver was away for {seconds:.0f} s; nothing was lost", notice=True)
            )

    server = Homeserver(channel.homeserver, token, on_down=down, on_up=up)
    outbox = Outbox(server)
    paths = Paths.of(environ, bingo_home(environ))  # the app made the channel's cwd this process's
    try:
        try:
            user = await server.whoami()
        except Refusal as exc:
            raise SettingsError(
                f"cannot reach the homeserver {channel.homeserver} ({exc.message})",
                "check channels.matrix.homeserver and that the server runs",
            ) from None
        if channel.user_id and user != channel.user_id:
            raise SettingsError(
                f"the access token is {user}'s, not {channel.user_id}'s",
                "give the bot's own token, or fix channels.matrix.userId",
            )
        state = State.load(data_dir / "channels" / "matrix.json", user)
        for wanted in channel.rooms:
            try:
                joined = await server.join(wanted)
            except Refusal as exc:
                print(escape(f"bingo: cannot join {wanted}: {exc.message}"), file=sys.stderr, flush=True)
                _log.warning("cannot join %s: %s", wanted, exc.message)
                continue
            room = rooms[joined] = Room(
                joined, RoomSurface(joined, outbox, question_seconds=channel.question_seconds, paths=paths), outbox
            )
            if joined not in state.rooms:
                room.joined_at = (
                    time.monotonic() if state.since is not None else None
                )  # with no since, the first sync skips all
                state.rooms.append(joined)
                state.save()
        if not rooms:
            raise SettingsError(
                "bingo could join none of the rooms in channels.matrix.rooms",
                "invite the bot to the room, or fix the room ids",
            )
        if state.since is None:
            # What was said before bingo came is not answered: the first sync marks where
            # bingo begins to read, and it is made before bingo says it listens, so a message
            # sent once it has said so is read (made after, a loaded machine let a message sent
            # at once be taken for history and never answered).
            first = await server.sync(None, timeout_ms=0)
            since = first.get("next_batch")
            state.since = since if isinstance(since, str) else None
            state.save()
        readers = Readers(me=user, allowed=frozenset(channel.allowed_users), shared=channel.shared_rooms)
        for room in rooms.values():
            try:
                room.judge(await server.joined_members(room.id), readers)
            except Refusal as exc:
                _log.warning("cannot learn who is in %s: %s", room.id, exc.message)
                if not readers.shared:
                    room.silence("bingo cannot learn who is in it, and everyone in a room reads what bingo says")
        _log.info("serving %d rooms as %s", len(rooms), user)
        print(
            escape(f"bingo: listening in {len(rooms)} room{'s' if len(rooms) != 1 else ''} as {user}"),
            file=sys.stderr,
            flush=True,
        )
        return await _serve(server, outbox, rooms, state, readers, make_room)
    finally:
        await server.aclose()


async def _serve(
    server: Homeserver, outbox: Outbox, rooms: dict[str, Room], state: State, readers: Readers, make_room: MakeRoom
) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    fatal: list[BaseException] = []

    async def guarded(work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except SettingsError as exc:
            fatal.append(exc)
            stop.set()

    async def sync() -> None:
        while True:
            batch = await server.sync(state.since)
            handle(batch, rooms, readers)
            since = batch.get("next_batch")
            if isinstance(since, str) and since != state.since:
                state.since = since
                state.save()

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(guarded(outbox.run)), group.create_task(guarded(sync))]
            tasks += [
                group.create_task(guarded(functools.partial(room.work, make_room, state))) for room in rooms.values()
            ]
            await stop.wait()
            for task in tasks[1:]:
                task.cancel()
            await asyncio.gather(*tasks[1:], return_exceptions=True)
            state.waiting = {room.id: texts for room in rooms.values() if (texts := room.left())}
            state.save()
            if state.waiting:
                _log.info("kept %d messages not yet run for the next start", sum(map(len, state.waiting.values())))
            if not fatal and not server.down:
                await outbox.drain(_STOP_SECONDS)
            tasks[0].cancel()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    if fatal:
        raise fatal[0]
    _log.info("stopped")
    return 0


class StopCommand:
    """`/stop` as `/help` lists it in a channel. The room takes the word itself, before any
    queue (`Room.take`), so this never runs while a turn does."""

    spec = CommandSpec(
        name="stop", hint="interrupt the running turn (as Ctrl-C does in a terminal)", instant=True, family="bingo"
    )
    source = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        return TextOutcome(text="nothing is running here")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []
