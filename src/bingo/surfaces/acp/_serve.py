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
for that session's turns (`tools.FILES`).

Stdout carries the protocol and nothing else: the protocol is written to a duplicate of the
original stdout, and file descriptor 1 is made stderr's, so a stray print (bingo's or a
child's) can never corrupt a message. The JSON-RPC endpoint is the bridge's `Connection`
(framing, ids, the one exception → wire error boundary, what is queued for a reader that
does not read, bounded). It does not compose a session's run (app.py does) nor draw
(`AcpSession`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import os
import re
import signal
import stat
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import msgspec

from ...kernel.dispatch import Submitted
from ...kernel.errors import BadParams, BingoError, PluginError, UsageError
from ...kernel.frames import Frame
from ...store import new_session_id
from ...tools import FILES, Declined
from ...wire import CommandSpec, ImageBlock, Json, Notice, is_array, is_object
from ...wire.rpc import DEADLINE
from .._escape import escape
from .._seam import Headless, Surface
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
    ReadTextFileParams,
    ReadTextFileResult,
    SessionCapabilities,
    SessionNotification,
    StopReason,
    Update,
    WriteTextFileParams,
)
from ._session import AcpSession

if TYPE_CHECKING:
    from ...endpoint import Connection

__all__ = [
    "HELD_NOTICES",
    "AcpLog",
    "HostMcp",
    "MakeSession",
    "McpServerSpec",
    "SessionRun",
    "mcp_servers",
    "prompt_content",
    "serve_acp",
]

_log = logging.getLogger(__name__)

R = TypeVar("R")

FS_SECONDS = 30.0
"""How long a read or write through the editor's files may take before it fails the call."""
HELD_NOTICES = 50
"""Notices kept for the first session while no session is open (the rest go to the log)."""
_NOT_FOUND = -32002
"""ACP's "resource not found", which a client answers `fs/read_text_file` of no file with."""
LINE = 32 * 1024 * 1024
"""The longest message read from the editor: a prompt's images (`MAX_PROMPT_IMAGES` of
base64 at most, checked once read) with room for its text. A longer one is not read, and
the open sessions are told so."""

_current: contextvars.ContextVar[AcpSession] = contextvars.ContextVar("bingo_acp_session")
"""The session whose prompt is running, in that prompt's task."""


@dataclass(frozen=True, slots=True)
class SessionRun:
    """The run behind one ACP session, made by the app."""

    submit: Callable[[str, list[ImageBlock]], Awaitable[Submitted]]
    """Run a prompt (with its images) or slash command (the kernel's dispatcher), notices
    flushed after."""
    interrupt: Callable[[], list[str]]
    commands: Callable[[], list[CommandSpec]]
    frames: Callable[[], list[Frame]]
    """The stored session's frames (none for a new one)."""
    close: Callable[[], None]


@dataclass(frozen=True, slots=True)
class McpServerSpec:
    """An MCP server an editor passes in `session/new` or `session/load`: stdio (`command`,
    `args`, `env`) or Streamable HTTP (`url`, `headers`). `name` is a plugin name already."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()


HostMcp = Callable[[list[McpServerSpec], str], Awaitable[None]]
"""The app's host of an editor's MCP servers (given the session's cwd): each runs as a plugin
of this run, under the gate, once however many sessions pass it."""

_PLUGIN_NAME = re.compile(r"[^a-z0-9]+")


def _pairs(value: Json) -> tuple[tuple[str, str], ...]:
    """ACP's `[{name, value}]` (an env or headers list) as pairs; what is not one is left out."""
    if not is_array(value):
        return ()
    return tuple(
        (item["name"], item["value"])
        for item in value
        if is_object(item) and isinstance(item.get("name"), str) and isinstance(item.get("value"), str)
    )


def mcp_servers(raw: list[Json]) -> tuple[list[McpServerSpec], list[str]]:
    """The MCP servers of a `session/new`'s `mcpServers`, named as plugins (`My Server` is
    `my-server`), and a line for each that cannot be hosted."""
    found: list[McpServerSpec] = []
    problems: list[str] = []
    for entry in raw:
        if not is_object(entry) or not isinstance(entry.get("name"), str):
            problems.append("an MCP server with no name")
            continue
        given: str = entry["name"]
        name = _PLUGIN_NAME.sub("-", given.lower()).strip("-")[:64] or "mcp"
        kind = entry.get("type")
        if kind == "http" and isinstance(entry.get("url"), str):
            found.append(McpServerSpec(name=name, url=entry["url"], headers=_pairs(entry.get("headers"))))
        elif kind in (None, "stdio") and isinstance(entry.get("command"), str):
            args = entry.get("args")
            found.append(
                McpServerSpec(
                    name=name,
                    command=entry["command"],
                    args=tuple(a for a in args if isinstance(a, str)) if is_array(args) else (),
                    env=_pairs(entry.get("env")),
                )
            )
        else:
            problems.append(
                f"the MCP server {given!r} ({kind or 'stdio'}): bingo speaks to MCP servers over stdio and Streamable HTTP"
            )
    return found, problems


MakeSession = Callable[[Surface, str, str, bool], SessionRun]
"""The app's maker of a session's run: given its surface, its cwd, its id, and whether that
id is a stored session to continue (`session/load`; SessionError when there is none) or the
id a new one is to be stored under."""


class AcpLog(Headless):
    """The run's own surface while bingo is an ACP agent: a notice raised while a session's
    prompt runs goes to that session; one raised elsewhere (a plugin's, from the bridge's own
    task) to the sessions running a prompt, else to every open session; with none open, it is
    held for the first one (HELD_NOTICES at most) and written to stderr. Nobody is asked
    here: a session's own surface asks."""

    def __init__(self) -> None:
        self.sessions: dict[str, AcpSession] = {}
        self.prompting: dict[str, AcpSession] = {}
        self.held: list[Notice] = []

    def notice(self, notice: Notice) -> None:
        session = _current.get(None)
        targets = [session] if session is not None else list(self.prompting.values()) or list(self.sessions.values())
        for target in targets:
            target.notice(notice)
        if targets:
            return
        _log.info("notice: %s: %s", notice.source, notice.message)
        print(escape(f"{notice.source}: {notice.message}"), file=sys.stderr, flush=True)
        if len(self.held) < HELD_NOTICES:
            self.held.append(notice)


def prompt_content(blocks: list[Json]) -> tuple[str, list[ImageBlock], list[str]]:
    """A `session/prompt`'s content as the turn's text and images: text as it is, a file
    link as its path, an embedded file as a fenced block under its name, an image (or an
    embedded file that is one) as an image (the kernel checks it: `check_images`); and what
    was left out, named."""
    pieces: list[str] = []
    images: list[ImageBlock] = []
    skipped: list[str] = []
    for block in blocks:
        kind = block.get("type") if is_object(block) else None
        if not is_object(block):
            continue
        if kind == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif kind == "image":
            data, media_type = block.get("data"), block.get("mimeType")
            if not isinstance(data, str) or not data:
                skipped.append("an image block with no data (bingo takes an image's bytes, not a link to one)")
            elif not isinstance(media_type, str):
                skipped.append("an image block with no mimeType")
            else:
                images.append(ImageBlock(media_type=media_type, data=data))
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            pieces.append(_uri_path(block["uri"]))
        elif kind == "resource" and is_object(block.get("resource")):
            resource = block["resource"]
            uri, text = resource.get("uri"), resource.get("text")
            blob, media_type = resource.get("blob"), resource.get("mimeType")
            if isinstance(text, str):
                fence = "```"
                while fence in text:
                    fence += "`"
                pieces.append(f"{_uri_path(uri) if isinstance(uri, str) else 'attached'}:\n{fence}\n{text}\n{fence}")
            elif isinstance(blob, str) and isinstance(media_type, str) and media_type.startswith("image/"):
                images.append(ImageBlock(media_type=media_type, data=blob))
            else:
                skipped.append(f"the binary resource {uri}")
        else:
            skipped.append(
                f"{'an' if kind[:1] in tuple('aeiou') else 'a'} {kind} block"
                if isinstance(kind, str)
                else "a block of no type"
            )
    return "\n".join(pieces), images, skipped


def _uri_path(uri: str) -> str:
    return uri.removeprefix("file://") if uri.startswith("file:///") else uri


class _Unread(Protocol):
    """A line from the editor that is no message (the bridge's `BadLine`)."""

    @property
    def reason(self) -> str: ...


class _Declined(OSError):
    """The editor answered a read or write with an error other than "no such file"."""


class _ClientFiles:
    """The client's files (`tools.Files`), called from a tool's worker thread: each read or
    write is a request on the loop, waited for at most FS_SECONDS. A file the editor
    declines (outside its project, say) is `tools.Declined`: the tool reads and writes it on
    the disk, both ways (so the ledger sees one file), through its own path and checks."""

    def __init__(self, agent: _Agent, session_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self._agent = agent
        self._session = session_id
        self._loop = loop

    def _wait(self, request: Awaitable[R], path: Path) -> R:
        async def run() -> R:
            return await request

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            return future.result(FS_SECONDS + 1)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise OSError(f"the editor did not answer within {FS_SECONDS:g} s") from None
        except PluginError as exc:
            if exc.code == _NOT_FOUND:
                raise FileNotFoundError(2, "the editor has no such file", str(path)) from None
            if exc.code not in (0, DEADLINE):  # answered, not lost
                raise _Declined(exc.message) from None
            raise OSError(f"the editor could not do it ({exc.message})") from None
        except BingoError as exc:
            raise OSError(exc.message) from None

    def read(self, path: Path) -> bytes:
        params = ReadTextFileParams(session_id=self._session, path=str(path))
        try:
            answer = self._wait(
                self._agent.conn.call("fs/read_text_file", params, ReadTextFileResult, deadline=FS_SECONDS), path
            )
        except _Declined as exc:
            # The tool reads it from the disk, by its own path and checks (tools.Declined).
            _log.info("the editor declined to read %s (%s): read from the disk", path, exc)
            raise Declined(str(exc)) from None
        return answer.content.encode("utf-8")

    def write(self, path: Path, data: bytes) -> None:
        params = WriteTextFileParams(
            session_id=self._session, path=str(path), content=data.decode("utf-8", errors="replace")
        )
        try:
            self._wait(self._agent.conn.call("fs/write_text_file", params, msgspec.Raw, deadline=FS_SECONDS), path)
        except _Declined as exc:
            _log.info("the editor declined to write %s (%s): written to the disk", path, exc)
            raise Declined(str(exc)) from None


@dataclass(slots=True)
class _Open:
    surface: AcpSession
    run: SessionRun
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

    def _opened(self, surface: AcpSession, run: SessionRun) -> None:
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
        _current.set(surface)
        if self._client.fs.read_text_file and self._client.fs.write_text_file:
            FILES.set(_ClientFiles(self, surface.id, asyncio.get_running_loop()))
        opened.busy = True
        opened.idle.clear()
        self._log.prompting[surface.id] = surface
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
            self._log.prompting.pop(surface.id, None)
            self._commands(opened)

    async def _run(self, opened: _Open, text: str, images: list[ImageBlock]) -> StopReason:
        surface = opened.surface
        try:
            submitted = await opened.run.submit(text, images)
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


async def serve_acp(*, log: AcpLog, make: MakeSession, version: str, host_mcp: HostMcp | None = None) -> int:
    """Be an ACP agent on stdin and stdout until the client closes stdin (or SIGTERM); 0 then."""
    from ...endpoint import Connection

    reader, writer = await _stdio()

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
