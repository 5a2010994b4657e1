"""`bingo --acp`: bingo as an Agent Client Protocol agent, over its stdin and stdout.

Owns the agent's side of the protocol: `initialize` (what bingo offers: loading sessions,
images and embedded context in prompts; a prompt's images are the turn's), the
session table (`session/new` makes a session's run through the app's `MakeSession`; its id is
the bingo session id it will be stored under, so `session/load` takes it, after a restart
too, and so does `bingo --resume`), `session/prompt` (a slash command or a prompt, one at a
time per session, its `stopReason` from how the turn ended), `session/cancel` (the turn's
interrupt, as Ctrl-C's: `tool/cancel` to plugins and their answers awaited; a second one
stops waiting, as a second Ctrl-C does), `session/close` (that cancel, waited for, then the
session's run closed), and the commands each session offers
(`available_commands_update`, sent again when they change). When the client offers both
`fs/read_text_file` and `fs/write_text_file`, `read`, `write` and `edit` go through them
for that session's turns (`tools.FILES`, through `_files.ClientFiles`); a prompt's content
blocks become its text and images in `_content`.

Stdout carries the protocol and nothing else: the protocol is written to a duplicate of the
original stdout, and file descriptor 1 is made stderr's, so a stray print (bingo's or a
child's) can never corrupt a message. The JSON-RPC endpoint is `endpoint.Connection`
(framing, ids, the one exception → wire error boundary, what is queued for a reader that
does not read, bounded). It does not compose a session's run (app.py does) nor draw
(`AcpSession`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from ...kernel.errors import BadParams, BingoError, PluginError, UsageError
from ...store import new_session_id
from ...tools import FILES
from ...wire import ImageBlock, Json, Notice
from .._escape import escape
from .._seam import Headless, RunHandle, Surface
from ._content import McpServerSpec, mcp_servers, prompt_content
from ._files import ClientFiles
from ._schema import (
    ACP_VERSION,
    AgentCapabilities,
    AgentInfo,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    CancelParams,
    ClientCapabilities,
    Empty,
    InitializeParams,
    InitializeResult,
    LoadSessionParams,
    LoadSessionResult,
    McpCapabilities,
    NewSessionParams,
    NewSessionResult,
    PermissionParams,
    PermissionResult,
    PromptCapabilities,
    PromptParams,
    PromptResult,
    SessionCapabilities,
    SessionNotification,
    StopReason,
    Update,
)
from ._session import AcpSession

if TYPE_CHECKING:
    from ...endpoint import Connection

__all__ = [
    "HELD_NOTICES",
    "AcpLog",
    "HostMcp",
    "MakeSession",
    "serve_acp",
]

_log = logging.getLogger(__name__)

R = TypeVar("R")

HELD_NOTICES = 50
"""Notices kept for the first session while no session is open (the rest go to the log)."""
LINE = 32 * 1024 * 1024
"""The longest message read from the editor: a prompt's images (`MAX_PROMPT_IMAGES` of
base64 at most, checked once read) with room for its text. A longer one is not read, and
the open sessions are told so."""

HostMcp = Callable[[list[McpServerSpec], str], Awaitable[None]]
"""The app's host of an editor's MCP servers (given the session's cwd): each runs as a plugin
of this run, under the gate, once however many sessions pass it."""

MakeSession = Callable[[Surface, str, str, bool], RunHandle]
"""The app's maker of a session's run (the run factory's): given its surface, its cwd, its id, and whether that
id is a stored session to continue (`session/load`; SessionError when there is none) or the
id a new one is to be stored under."""


class AcpLog(Headless):
    """The process's own surface while bingo is an ACP agent: a notice raised while a
    session's prompt runs goes to that session, and one raised elsewhere (a plugin's, from
    the bridge's own task) to the sessions running a prompt (the run factory routes them);
    any other comes here, and goes to every open session; with none open, it is held for the
    first one (HELD_NOTICES at most) and written to stderr. Nobody is asked here: a session's
    own surface asks."""

    def __init__(self) -> None:
        self.sessions: dict[str, AcpSession] = {}
        self.held: list[Notice] = []

    def notice(self, notice: Notice) -> None:
        targets = list(self.sessions.values())
        for target in targets:
            target.notice(notice)
        if targets:
            return
        _log.info("notice: %s: %s", notice.source, notice.message)
        print(escape(f"{notice.source}: {notice.message}"), file=sys.stderr, flush=True)
        if len(self.held) < HELD_NOTICES:
            self.held.append(notice)


class _Unread(Protocol):
    """A line from the editor that is no message (the bridge's `BadLine`)."""

    @property
    def reason(self) -> str: ...


@dataclass(slots=True)
class _Open:
    surface: AcpSession
    run: RunHandle
    commands: list[AvailableCommand]
    busy: bool = False
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    """Set while no prompt runs."""

    def __post_init__(self) -> None:
        self.idle.set()


class _Agent:
    """The agent's handlers, over one connection to the client."""

    def __init__(
        self,
        conn: Connection,
        log: AcpLog,
        make: MakeSession,
        version: str,
        host_mcp: HostMcp | None,
        drain: Callable[[], Awaitable[None]],
    ) -> None:
        self.conn = conn
        self._drain = drain
        self._log = log
        self._make = make
        self._host_mcp = host_mcp
        self._version = version
        self._client = ClientCapabilities()
        self._open: dict[str, _Open] = {}

    # --- Peer ------------------------------------------------------------------------

    def update(self, session_id: str, update: Update) -> None:
        try:
            self.conn.notify("session/update", SessionNotification(session_id=session_id, update=update))
        except PluginError as exc:
            _log.info("cannot send an update of %s: %s", session_id, exc.message)

    async def request_permission(self, params: PermissionParams) -> PermissionResult:
        # The person answers when they do: the prompt's cancel is the bound (AcpSession).
        return await self.conn.call("session/request_permission", params, PermissionResult, deadline=None)

    # --- handlers --------------------------------------------------------------------

    async def initialize(self, params: InitializeParams) -> InitializeResult:
        self._client = params.client_capabilities
        return InitializeResult(
            protocol_version=ACP_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=self._host_mcp is not None),
                session_capabilities=SessionCapabilities(close=Empty()),
            ),
            agent_info=AgentInfo(name="bingo", title="bingo", version=self._version),
            auth_methods=[],
        )

    def _takes_notices(self) -> bool:
        """The client said it takes `notice` updates (ACP v1 asks it to, ADR-0037)."""
        session = self._client.session
        return session is not None and session.notices is not None

    def _cwd(self, cwd: str) -> str:
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise BadParams(f"cwd {cwd!r} is not an absolute path to a directory", "send the project's absolute path")
        return str(path)

    def _opened(self, surface: AcpSession, run: RunHandle) -> None:
        self._open[surface.id] = _Open(surface=surface, run=run, commands=[])
        self._log.sessions[surface.id] = surface

    def _after_open(self, session_id: str, problems: list[str]) -> None:
        """What a new or loaded session is told once the client knows its id."""
        opened = self._open.get(session_id)
        if opened is None:
            return
        self._commands(opened)
        held, self._log.held = self._log.held, []
        for notice in held:
            opened.surface.notice(notice)
        for problem in problems:
            opened.surface.notice(Notice(source="bingo", message=f"not hosted: {problem}", level="warning"))

    async def _mcp(self, raw: list[Json], cwd: str) -> list[str]:
        """Host the editor's MCP servers before the session is answered (ACP: "connect to
        MCP servers"); the lines for those that cannot be."""
        servers, problems = mcp_servers(raw)
        if servers and self._host_mcp is None:
            return problems + [f"the MCP server {s.name}: this run hosts none" for s in servers]
        if servers and self._host_mcp is not None:
            await self._host_mcp(servers, cwd)
        return problems

    def _commands(self, opened: _Open) -> None:
        """Tell the client the session's commands, when they are not what it was told."""
        commands = [
            AvailableCommand(
                name=spec.name,
                description=escape(spec.hint or spec.name),
                input=AvailableCommandInput(hint=escape(spec.args.hint or "")) if spec.args.kind == "free" else None,
            )
            for spec in opened.run.commands()
        ]
        if commands != opened.commands:
            opened.commands = commands
            self.update(opened.surface.id, AvailableCommandsUpdate(available_commands=commands))

    async def new_session(self, params: NewSessionParams) -> NewSessionResult:
        cwd = self._cwd(params.cwd)
        problems = await self._mcp(params.mcp_servers, cwd)
        surface = AcpSession(new_session_id(), cwd, self, notices=self._takes_notices())
        self._opened(surface, self._make(surface, cwd, surface.id, False))
        asyncio.get_running_loop().call_soon(self._after_open, surface.id, problems)  # after the answer
        return NewSessionResult(session_id=surface.id)

    async def load_session(self, params: LoadSessionParams) -> LoadSessionResult:
        cwd = self._cwd(params.cwd)
        if params.session_id in self._open:
            raise BadParams(f"session {params.session_id} is open already", "prompt it, or load another")
        problems = await self._mcp(params.mcp_servers, cwd)
        surface = AcpSession(params.session_id, cwd, self, notices=self._takes_notices())
        run = self._make(surface, cwd, params.session_id, True)
        self._opened(surface, run)
        await surface.replay(run.frames(), self._drain)  # the whole conversation, before the answer
        asyncio.get_running_loop().call_soon(self._after_open, surface.id, problems)
        return LoadSessionResult()

    def _session(self, session_id: str) -> _Open:
        opened = self._open.get(session_id)
        if opened is None:
            raise BadParams(
                f"there is no session {session_id} open", "start one with session/new, or load it with session/load"
            )
        return opened

    async def prompt(self, params: PromptParams) -> PromptResult:
        opened = self._session(params.session_id)
        if opened.busy:
            raise UsageError(
                "a prompt of this session is running", "wait for its answer, or cancel it with session/cancel"
            )
        text, images, skipped = prompt_content(params.prompt)
        surface = opened.surface
        if self._client.fs.read_text_file and self._client.fs.write_text_file:
            FILES.set(ClientFiles(self.conn, surface.id, asyncio.get_running_loop()))
        opened.busy = True
        opened.idle.clear()
        surface.begin()
        try:
            if skipped:
                surface.notice(
                    Notice(
                        source="bingo",
                        message=f"left out of the prompt: {', '.join(skipped)} (bingo takes text, images, file links and embedded text files)",
                        level="warning",
                    )
                )
            if not text.strip() and not images:
                surface.notice(Notice(source="bingo", message="the prompt is empty", level="warning"))
                return PromptResult(stop_reason="end_turn")
            return PromptResult(stop_reason=await self._run(opened, text, images))
        finally:
            opened.busy = False
            opened.idle.set()
            self._commands(opened)

    async def _run(self, opened: _Open, text: str, images: list[ImageBlock]) -> StopReason:
        surface = opened.surface
        try:
            submitted = await opened.run.dispatch(text, images)
        except BingoError as exc:
            surface.say(escape(f"bingo: {exc.line()}"), "error")
            return "end_turn"
        if submitted.outcome is not None:
            surface.outcome(submitted.outcome)
        turn = submitted.turn
        if turn is None or turn.status == "done":
            return "end_turn"
        if turn.status == "interrupted":
            return "cancelled"
        surface.say(escape(f"bingo: {turn.reason}"), "error")
        return "refusal" if turn.status == "blocked" else "end_turn"

    def cancel(self, params: CancelParams) -> None:
        opened = self._open.get(params.session_id)
        if opened is None or not opened.busy:
            return
        opened.surface.cancel()
        stopped = opened.run.interrupt()
        if stopped:
            _log.info("session %s: cancelled; waiting for %s", params.session_id, ", ".join(stopped))

    async def close_session(self, params: CancelParams) -> Empty:
        """`session/close`: the prompt running is cancelled (as `session/cancel`) and waited
        for, then the session's run is closed; loading it again replays it."""
        opened = self._session(params.session_id)
        self.cancel(params)
        await opened.idle.wait()
        self._open.pop(params.session_id, None)
        self._log.sessions.pop(params.session_id, None)
        opened.run.close()
        return Empty()

    def interrupt_all(self) -> None:
        for opened in self._open.values():
            if opened.busy:
                opened.surface.cancel()
                opened.run.interrupt()

    def close(self) -> None:
        for opened in self._open.values():
            opened.run.close()
        self._open.clear()
        self._log.sessions.clear()


async def _stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams over the process's stdin and a duplicate of its stdout; fd 1 becomes stderr's.

    Raises:
        UsageError: stdin or stdout is not a pipe (a terminal, a file).
    """
    for fd, what in ((0, "stdin"), (1, "stdout")):
        # A device that is not a terminal (/dev/null) never tells the event loop it ended:
        # refused here, where it would otherwise wait for ever.
        if stat.S_ISCHR(os.fstat(fd).st_mode) and not os.isatty(fd):
            raise UsageError(
                f"bingo --acp speaks over pipes, and its {what} is a device", "let an editor start it (docs/editors.md)"
            )
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE)
    out = os.dup(1)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(out, "wb", buffering=0)
        )
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"bingo --acp speaks over pipes, and cannot here ({exc})", "let an editor start it (docs/editors.md)"
        ) from None
    os.dup2(2, 1)  # a stray print reaches stderr, never the protocol
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


async def serve_acp(
    *,
    log: AcpLog,
    make: MakeSession,
    version: str,
    host_mcp: HostMcp | None = None,
    streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None,
) -> int:
    """Be an ACP agent on stdin and stdout (or on `streams`, a test's) until the client
    closes them (or SIGTERM); 0 then."""
    from ...endpoint import Connection

    reader, writer = streams if streams is not None else await _stdio()

    def unread(bad: _Unread) -> None:
        log.notice(
            Notice(
                source="bingo",
                message=f"a message from the editor could not be read, so it is not answered: {bad.reason}",
                level="warning",
            )
        )

    connection = Connection(reader, writer, name="the editor", on_stray=unread)
    agent = _Agent(connection, log, make, version, host_mcp, writer.drain)
    connection.on_request("initialize", InitializeParams, agent.initialize)
    connection.on_request("session/new", NewSessionParams, agent.new_session)
    connection.on_request("session/load", LoadSessionParams, agent.load_session)
    connection.on_request("session/prompt", PromptParams, agent.prompt)
    connection.on_request("session/close", CancelParams, agent.close_session)
    connection.on_notification("session/cancel", CancelParams, agent.cancel)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with connection:
            closed = asyncio.ensure_future(connection.wait_closed())
            stopped = asyncio.ensure_future(stop.wait())
            try:
                await asyncio.wait({closed, stopped}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                closed.cancel()
                stopped.cancel()
            agent.interrupt_all()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        agent.close()
        writer.close()
    _log.info("the editor closed the connection")
    return 0
