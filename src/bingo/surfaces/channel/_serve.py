"""`bingo --channel matrix`: the bot's run, from the token's check to the last message sent.

Owns the channel's lifetime: the settings' check (a missing homeserver, room list, allowed
list or token is exit 2 with one line; the token itself never appears anywhere), the
token's check (`whoami`: wrong is exit 2), joining the rooms, the long poll of `/sync` with
its `since` token stored in `<data>/channels/matrix.json` after each batch (so a restart
neither replays what was answered nor loses what came while bingo was away), and one worker
per room. A message from a user not in `allowedUsers` is one line in bingo's log and
nothing else. A message from one who is answers the room's waiting question, or joins the
room's queue (QUEUE_LIMIT at most: past it a flood is dropped, with one log line and one
notice per flood) and becomes a prompt or a slash command of the room's own session, in
order, through the run the app made for the room (`MakeRoom`). Which session a room is is
kept in the same file, so a restart continues it (and `bingo -c` in a terminal can, once
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
import contextvars
import functools
import json
import logging
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...kernel.atomic import write_atomic
from ...kernel.errors import BingoError, SettingsError
from ...kernel.interfaces import CommandContext
from ...kernel.registry import BUILTIN
from ...kernel.settings import MatrixChannel, bingo_home
from ...wire import CommandOutcome, CommandSpec, Completion, Json, Notice, TextOutcome, is_array, is_object
from .._escape import escape
from .._seam import Driver, Headless, Surface
from ._homeserver import Homeserver, Refusal
from ._outbox import Outbox, message
from ._paths import Paths
from ._room import RoomSurface

__all__ = ["QUEUE_LIMIT", "STOP", "ChannelLog", "MakeRoom", "RoomRun", "StopCommand", "serve_matrix"]

_log = logging.getLogger(__name__)

QUEUE_LIMIT = 16
"""Messages a room holds while a turn runs; past it a flood is dropped."""
_STOP_SECONDS = 5.0
"""How long a stopping bot waits for its last messages to be sent."""
_EXIT_WORDS = frozenset({"/exit", "/quit"})
_NAMED = 3
"""The others a refusal to answer names (then how many more)."""
STOP = "/stop"
"""The channel's own word for Ctrl-C: interrupt the room's running turn (never queued)."""

_room: contextvars.ContextVar[RoomSurface] = contextvars.ContextVar("bingo_channel_room")
"""The room whose message is being run, in that room's worker task."""
_running: dict[str, RoomSurface] = {}
"""The rooms running a message now: a plugin's notice comes from the bridge's own task,
outside every room's context, and goes to them."""


@dataclass(frozen=True, slots=True)
class RoomRun:
    """The run behind one room, made by the app: where its messages go, its session's id
    (None until its first turn is written), and what to close when the bot stops."""

    driver: Driver
    session: Callable[[], str | None]
    close: Callable[[], None]


MakeRoom = Callable[[Surface, "str | None"], RoomRun]
"""The app's maker of a room's run: given the room's surface and the id of the session
the room was (None for a new one)."""


class ChannelLog(Headless):
    """The run's own surface while bingo is a bot: a notice raised while a room's message
    runs goes to that room (one raised outside every room's task, as a plugin's is, to the
    rooms running a message); any other (at start, or from a plugin between messages) goes to
    stderr and bingo's log. Nobody is asked here: a room's own surface asks."""

    def notice(self, notice: Notice) -> None:
        room = _room.get(None)
        rooms = [room] if room is not None else list(_running.values())
        for room in rooms:
            room.notice(notice)
        if rooms:
            return
        _log.info("notice: %s: %s", notice.source, notice.message)
        print(escape(f"{notice.source}: {notice.message}"), file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class _Readers:
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


@dataclass
class _State:
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
    def load(cls, path: Path, user: str) -> _State:
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


class _Room:
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
        self.run: RoomRun | None = None
        self.joined_at: float | None = None
        """When bingo joined a room it had not read before (time.monotonic()), or None: in
        such a room, what is older than the join is history (and a limited timeline is no
        loss)."""
        self.said_encrypted = False

    def judge(self, members: set[str], readers: _Readers) -> None:
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
            self.run.driver.interrupt()
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
        waiting = self.run.driver.interrupt()
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

    async def work(self, make_room: MakeRoom, state: _State) -> None:
        _room.set(self.surface)
        run = self.run = make_room(self.surface, state.sessions.get(self.id))
        for text in state.waiting.pop(self.id, []):
            if not self.queue.full():
                self.queue.put_nowait(text)
        try:
            while True:
                text = await self.queue.get()
                _log.info("%s: running a message (%d more waiting)", self.id, self.queue.qsize())
                self.running = True
                _running[self.id] = self.surface
                try:
                    await self._one(run, text)
                finally:
                    self.running = False
                    _running.pop(self.id, None)
                session = run.session()
                if state.sessions.get(self.id) != session:
                    # None after /clear: a restart then starts the fresh conversation too.
                    if session is None:
                        state.sessions.pop(self.id, None)
                    else:
                        state.sessions[self.id] = session
                    state.save()
        finally:
            run.close()

    async def _one(self, run: RoomRun, text: str) -> None:
        if self.silent:
            return
        if text.split(maxsplit=1)[0] in _EXIT_WORDS:
            self.surface.notice(
                Notice(source="bingo", message="bingo keeps running in this room: stop it where it runs (Ctrl-C)")
            )
            return
        try:
            await run.driver.submit(text)
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


_HISTORY_SLACK_MS = 500
"""How much older than bingo's join a message may look and still be taken as said after it
(the homeserver counts `age` when it answers the sync, bingo when the answer arrives)."""


def _before(event: dict[str, Json], joined_at: float | None) -> bool:
    """True when `event` was sent before bingo joined its room (history, not a message)."""
    if joined_at is None:
        return False
    unsigned = event.get("unsigned")
    age = unsigned.get("age") if is_object(unsigned) else None
    if not isinstance(age, int) or isinstance(age, bool):
        return False
    return age > (time.monotonic() - joined_at) * 1000 + _HISTORY_SLACK_MS


def _body(event: dict[str, Json]) -> str | None:
    """The text of a message event a person typed (not an edit, a notice or a file)."""
    content = event.get("content")
    if not is_object(content) or content.get("msgtype") != "m.text":
        return None
    relates = content.get("m.relates_to")
    if is_object(relates) and relates.get("rel_type") == "m.replace":
        return None
    body = content.get("body")
    if not isinstance(body, str):
        return None
    reply = content.get("m.relates_to")
    if is_object(reply) and is_object(reply.get("m.in_reply_to")):
        # A reply's body starts with the quoted message ("> <@who:host> text"), then a blank line.
        lines = body.split("\n")
        while lines and lines[0].startswith(">"):
            lines.pop(0)
        body = "\n".join(lines)
    return body.strip() or None


async def serve_matrix(channel: MatrixChannel, *, environ: dict[str, str], data_dir: Path, make_room: MakeRoom) -> int:
    """Be the bot until SIGINT or SIGTERM; 0 then. SettingsError (exit 2) when the settings
    are incomplete, the token is missing or wrong, or no room could be joined."""
    token = _check(channel, environ)
    assert channel.homeserver is not None  # _check
    rooms: dict[str, _Room] = {}
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
        state = _State.load(data_dir / "channels" / "matrix.json", user)
        for wanted in channel.rooms:
            try:
                joined = await server.join(wanted)
            except Refusal as exc:
                print(escape(f"bingo: cannot join {wanted}: {exc.message}"), file=sys.stderr, flush=True)
                _log.warning("cannot join %s: %s", wanted, exc.message)
                continue
            room = rooms[joined] = _Room(
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
        readers = _Readers(me=user, allowed=frozenset(channel.allowed_users), shared=channel.shared_rooms)
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
    server: Homeserver, outbox: Outbox, rooms: dict[str, _Room], state: _State, readers: _Readers, make_room: MakeRoom
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
        if state.since is None:
            first = await server.sync(None, timeout_ms=0)  # what was said before bingo came: not answered
            since = first.get("next_batch")
            state.since = since if isinstance(since, str) else None
            state.save()
        while True:
            batch = await server.sync(state.since)
            _handle(batch, rooms, readers)
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


def _membership(event: dict[str, Json], members: set[str]) -> set[str] | None:
    """Who is joined after `event`, when it is a member event (None when it is not)."""
    if event.get("type") != "m.room.member":
        return None
    user, content = event.get("state_key"), event.get("content")
    if not isinstance(user, str) or not is_object(content):
        return None
    return members | {user} if content.get("membership") == "join" else members - {user}


def _handle(batch: dict[str, Json], rooms: dict[str, _Room], readers: _Readers) -> None:
    allowed, me = readers.allowed, readers.me
    joined = batch.get("rooms")
    joined = joined.get("join") if is_object(joined) else None
    if not is_object(joined):
        return
    for room_id, room_data in joined.items():
        room = rooms.get(room_id)
        timeline = room_data.get("timeline") if is_object(room_data) else None
        events = timeline.get("events") if is_object(timeline) else None
        if room is None or not is_array(events):
            continue
        # The state before the timeline (a gap's), then the timeline in order: a member who
        # joins before a message is there when it is answered.
        state = room_data.get("state") if is_object(room_data) else None
        before = state.get("events") if is_object(state) else None
        for event in before if is_array(before) else []:
            members = _membership(event, room.members) if is_object(event) else None
            if members is not None:
                room.judge(members, readers)
        if is_object(timeline) and timeline.get("limited") is True and room.joined_at is None:
            _log.warning("%s: more messages came than one sync holds; the oldest of them were not read", room_id)
            room.surface.notice(
                Notice(
                    source="bingo",
                    message="more messages came while bingo was away than it reads at once: the oldest were not read",
                    level="warning",
                )
            )
        for event in events:
            members = _membership(event, room.members) if is_object(event) else None
            if members is not None:
                room.judge(members, readers)
                continue
            if not is_object(event) or event.get("type") not in ("m.room.message", "m.room.encrypted"):
                continue
            sender = event.get("sender")
            if not isinstance(sender, str) or sender == me or _before(event, room.joined_at):
                continue
            if event.get("type") == "m.room.encrypted":
                if sender in allowed and not room.said_encrypted:
                    room.said_encrypted = True
                    _log.warning("%s is encrypted: bingo cannot read it", room_id)
                    room.surface.notice(
                        Notice(
                            source="bingo",
                            message="this room is encrypted, and bingo reads only unencrypted rooms: use a room without encryption",
                            level="warning",
                        )
                    )
                continue
            if sender not in allowed:
                _log.info(
                    "ignored a message from %s in %s: not in channels.matrix.allowedUsers", escape(sender), room_id
                )
                continue
            body = _body(event)
            if body is not None:
                room.take(sender, body)


class StopCommand:
    """`/stop` as `/help` lists it in a channel. The room takes the word itself, before any
    queue (`_Room.take`), so this never runs while a turn does."""

    spec = CommandSpec(
        name="stop", hint="interrupt the running turn (as Ctrl-C does in a terminal)", instant=True, family="bingo"
    )
    source = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        return TextOutcome(text="nothing is running here")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []
