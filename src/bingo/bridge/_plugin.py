"""One plugin's handle: its lifetimes, one after another, behind one Link.

Owns one lifetime, the same over a process and over an HTTP MCP server (`_transport.py`
starts each and says how it ended): start, handshake, run, end. And what each outcome
costs: a handshake's (`handshake.py` holds the exchange: a protocol or name it refuses is refused
with a notice and never retried), death (in-flight calls fail with an error naming the
plugin and how it ended, ONE notice, sources answer nothing), and respawn on the next source
read: at once after a process that completed its handshake, paced by `_backoff.py` after a
failed start (1 s doubling to 60 s between consecutive failed spawns, reset once a process
has lived 60 s). No health checks, no supervisor.

A plugin declared from the declaration cache is `idle`: registered, not started (the host
may begin it as the run starts: `host.warm`). Its first source read starts it like any start (no backoff, no notice about a death that never
happened), and every handshake's answer is handed to the host (`on_answer`), which compares
it with what is registered.

It does not register anything (the host does, in name order) and does not build proxies.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Literal

import msgspec

from ..endpoint import BadLine, Connection, LineWriter
from ..kernel.errors import ConnectionClosed, PluginError, SpawnError
from ..kernel.log import QUOTED_MAX, cut
from ..kernel.notices import Notices
from ..kernel.settings import Settings
from ..sandbox import Launcher
from ..wire import InitializeResult
from ..wire.rpc import RequestId
from . import _problems as P
from ._backoff import Backoff, Retry
from ._link import PROGRESS_PER_SECOND, Calls, Ended, Peer, Unavailable
from ._mcp import McpClient
from ._mcp_asks import elicit_through, sample_with
from ._transport import HostFacts, Transport, open_pipes, open_remote
from .discovery import PluginSource
from .handshake import handshake, initialize_params
from .manifest import Manifest
from .process import PluginLog, PluginProcess
from .service import ServiceRouter
from .tool import declaration_problems

__all__ = ["HostFacts", "Plugin", "State"]

_log = logging.getLogger(__name__)

State = Literal["idle", "starting", "running", "stopped", "refused"]
"""`idle`: declared from the cache and not started yet; the others say what they say."""

Answered = Callable[["Plugin", "InitializeResult | str"], Awaitable[None]]
"""Told every handshake's outcome: the accepted declaration, or the words refusing it."""


class Plugin:
    """One plugin: a Link whose connection outlives any one process."""

    def __init__(
        self,
        source: PluginSource,
        manifest: Manifest,
        *,
        facts: HostFacts,
        settings: Settings,
        notices: Notices,
        router: ServiceRouter,
        group: asyncio.TaskGroup,
        clock: Callable[[], float],
        backoff: Backoff,
        on_answer: Answered | None = None,
    ) -> None:
        self.source = source
        self.manifest = manifest
        self.info: InitializeResult | None = None
        self.state: State = "stopped"
        self.why: str | None = None
        self._facts = facts
        self._settings = settings
        self._notices = notices
        self._router = router
        self._group = group
        self._retry = Retry(backoff, clock)
        self._on_answer = on_answer
        self._calls = Calls(
            on_flood=lambda: self.fault(
                "progress-flood",
                P.PROGRESS_FLOOD.said(per_second=PROGRESS_PER_SECOND),
            )
        )
        self._conn: Peer | None = None
        self._ready: asyncio.Future[Peer | PluginError] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._transport: Transport | None = None
        """What the current (or last) start runs over."""
        self._abandoned: Transport | None = None
        """The start `abandon` ended: its end is no failure to report."""
        self._proc: PluginProcess | None = None
        self._handshaken = False
        """A process of it has completed its handshake this run: a package runner's next
        start finds its package installed, and has `deadlines.initialize` again."""
        self.log = PluginLog(facts.data_dir / "logs" / f"plugin-{source.name}.log")

    # --- Link ----------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def calls(self) -> Calls:
        return self._calls

    def current(self) -> Peer | None:
        return self._conn if self.state == "running" else None

    def abandon(self, why: str) -> None:
        if self._task is None or self._task.done() or self.state not in ("starting", "running"):
            return
        self._notices.say(self.name, f"stopped: {why}", "warning")
        # The shutdown is the ordinary one (stdin closed, SIGTERM, SIGKILL: bounded); the
        # next read of a source starts a fresh process, without a backoff: it did not fail.
        self.state, self.why = "stopped", why
        self._conn = None
        self._abandoned = self._transport
        if self._proc is not None:
            # How its shutdown goes (SIGTERM, likely) is part of what was just said.
            self._proc.on_fault = None
        self._task.cancel()

    def fault(self, key: str, message: str) -> None:
        self._notices.say_once(self.name, key, f"{message}: {self._where()}", "warning")

    def _where(self) -> str:
        """Where to look: the most useful of the last lines the process wrote to stderr, and
        its log."""
        said = self._proc.stderr_words() if self._proc is not None else ""
        where = f"log: {self.log.path}"
        return f"{said}; {where}" if said else where

    async def connection(self) -> Peer:
        if self.state == "running" and self._conn is not None:
            return self._conn
        if self.state == "refused" or self._closing:
            raise Unavailable(f"plugin {self.name} is not running: {self.why}")
        if self.state == "stopped" and self._retry.waiting():
            raise Unavailable(
                f"plugin {self.name} is not running: {self.why}",
                "it is started again when next used, after a pause",
            )
        answer = await self.start()
        if isinstance(answer, PluginError):
            raise Unavailable(answer.message, answer.hint)
        return answer

    # --- lifetime ------------------------------------------------------------------

    def declare(self, info: InitializeResult) -> None:
        """Take `info` (from the declaration cache) as what the plugin declares, without
        starting it: the plugin is `idle` until a source is read."""
        self.info = info
        self.state, self.why = "idle", None

    def begin(self) -> asyncio.Future[Peer | PluginError]:
        """Spawn and handshake in the background (or join the start under way); the future
        of its outcome. Nothing waits here, so a caller can start a plugin early and go on
        with its own work while the child's interpreter starts."""
        if self._ready is None or self._ready.done():
            self._ready = asyncio.get_running_loop().create_future()
            self.state = "starting"
            self._task = self._group.create_task(self._run(self._ready))
        return self._ready

    async def start(self) -> Peer | PluginError:
        """Spawn and handshake (or join the spawn under way); the peer, or why not."""
        ready = self.begin()
        # shield: a caller giving up must not cancel the start other callers wait on.
        return await asyncio.shield(ready)

    def stop(self) -> None:
        """Begin the bounded shutdown of the current process (the host awaits its group)."""
        self._closing = True
        if self.state == "starting" and self._proc is not None:
            # Stopped before it ever answered (begun with the run, ADR-0043, and the run is
            # over): how its interrupted start exits is nobody's concern.
            self._proc.on_fault = None
        if self._task is not None:
            self._task.cancel()

    async def _run(self, ready: asyncio.Future[Peer | PluginError]) -> None:
        try:
            await self._lifetime(ready)
        except Exception as exc:  # boundary: one plugin's fault never reaches the host
            _log.exception("plugin %s failed", self.name)
            self._stopped(f"failed inside the host: {type(exc).__name__}", say=True)
        finally:
            self._conn = None
            if not ready.done():
                ready.set_result(Unavailable(f"plugin {self.name} is not running: {self.why}"))
            if self.state in ("starting", "running"):
                self.state = "stopped"

    async def _open(self) -> Transport:
        """Start what this start of the plugin runs over: its process, or its HTTP session.

        Raises:
            SpawnError: it could not be started.
        """
        mcp = self.manifest.mcp
        if mcp is not None and mcp.url is not None:
            return open_remote(
                self.source,
                self.manifest,
                facts=self._facts,
                settings=self._settings,
                say=lambda line: self._notices.say(self.name, line, "info"),
            )
        pipes = await open_pipes(
            self.source,
            self.manifest,
            facts=self._facts,
            settings=self._settings,
            log=self.log,
            handshaken=self._handshaken,
        )
        self._proc = pipes.proc
        pipes.proc.on_fault = None if self._closing else self.fault
        pipes.when_slow(self._installing)
        return pipes

    async def _lifetime(self, ready: asyncio.Future[Peer | PluginError]) -> None:
        """One start, the same over a process and over an HTTP server: start, handshake,
        run until the connection ends; what each outcome costs is said here, once."""
        try:
            transport = await self._open()
        except SpawnError as exc:
            self._stopped(f"could not be started: {exc.message}", say=True)
            return
        self._transport = transport
        async with transport:
            conn = self._connection(
                transport.reader,
                transport.writer,
                on_eof=lambda: self._ended(transport),
                deadlines=transport.deadlines,
            )
            async with self._peer(conn) as peer:
                params = initialize_params(
                    root=self.source.root,
                    config=self._settings.plugins.get(self.name, {}),
                    host_version=self._facts.version,
                    cwd=self._facts.cwd,
                    data_dir=self._facts.plugin_data(self.source.package or self.name),
                )
                try:
                    answer = await handshake(peer, params, self.manifest.name, on_declared=self._check_declared)
                except PluginError as exc:
                    transport.closed(exc)
                    if conn.ended is not None and self.state == "stopped":
                        return  # it died: on_eof has stopped it and said so, once
                    self._stopped(f"{transport.unanswered(exc)}: {self._where()}", say=True)
                    return
                transport.answered()
                if isinstance(answer, str):
                    self.state, self.why = "refused", answer
                    self._notices.say(self.name, f"refused: {answer}", "warning")
                    if self._on_answer is not None:
                        await self._on_answer(self, answer)
                    return
                if self.info is None:
                    self.info = answer
                if self._on_answer is not None:
                    # Before anyone is handed the peer: what the caller finds in the
                    # registry next is what this process declares.
                    await self._on_answer(self, answer)
                self._conn = peer
                self.state, self.why = "running", None
                self._handshaken = True
                self._retry.ran()
                ready.set_result(peer)
                error = await conn.wait_closed()
                transport.closed(error)
                if self.state == "running":  # on_eof did not get to say it
                    self._conn = None
                    self._stopped(error.line(), say=not self._closing, ended=True)

    def _installing(self, runner: Launcher | None, seconds: float) -> None:
        """Said once when a package runner's first start is slow: it is likely installing."""
        if runner is None or self.state != "starting":
            return
        self._notices.say(
            self.name,
            f"starting through {runner.said}, which may be installing it first (bingo waits up to {seconds:g} s: deadlines.packageInstall in settings)",
            "info",
        )

    def _check_declared(self, raw: msgspec.Raw) -> None:
        """Name, once a run, what the handshake declares of its tools that bingo reads
        otherwise than meant (an unknown key, a missing inputSchema)."""
        problem = declaration_problems(raw)
        if problem is not None:
            self._notices.say_once(self.name, "tool-declarations", problem, "warning")

    def _stopped(self, why: str, *, say: bool, ended: bool = False) -> None:
        """Stop: a failed start for the backoff, unless it is a running process that `ended`
        (started again at the next read at once, INTERFACE.md §5)."""
        self.state, self.why = "stopped", why
        if ended:
            self._retry.ended()
        else:
            self._retry.failed()
        if say:
            self._notices.say(self.name, f"stopped: {why}", "warning")

    async def _ended(self, transport: Transport) -> ConnectionClosed:
        """The stream ended: learn how, and stop *before* pending callers are woken, so
        whoever a caller asks next already sees a stopped plugin."""
        how = await transport.ended()
        hint = f"log: {self.log.path}"
        if transport is self._abandoned:
            # Ended because the person stopped waiting (`abandon` said so): not a failure.
            return ConnectionClosed(f"plugin {self.name} {how}", hint)
        # A process that completed its handshake is started again at the next read at once;
        # one that died in it is a failed start, and backs off (INTERFACE.md §5).
        ran = self.state == "running"
        relative = None if ran or not transport.local else self._relative_arg()
        said = transport.said()
        if relative is not None:
            # The likeliest cause first: `python3 main.py` run in the project.
            said = f"{relative}; {said}" if said else relative
        error = Ended(f"plugin {self.name} {how}", hint, said=said)
        self._conn = None
        self._stopped(error.line(), say=not self._closing, ended=ran)
        return error

    def _relative_arg(self) -> str | None:
        """The check's words, with its fix, for an argument that names a file of the plugin's
        directory by a relative path that the project (the process's working directory) does
        not have: why a process that died at its start did. A `.mcp.json` server runs in the
        project's root, where its relative paths were written (`discovery.workdir`)."""
        if self.source.declared_in is not None:
            return None
        for index, value in enumerate(self.manifest.entry.args):
            if not value or value.startswith(("/", "$", "-")) or "=" in value:
                continue
            rest = value.removeprefix("./")
            try:
                if (self.source.root / rest).is_file() and not (self._facts.cwd / rest).exists():
                    key = "mcp" if self.manifest.mcp is not None else "entry"
                    return P.RELATIVE_ARG.words(where=f"{key}.args[{index}]", value=value, rest=rest)
            except (OSError, ValueError):
                continue
        return None

    def _connection(
        self,
        reader: asyncio.StreamReader,
        writer: LineWriter,
        *,
        on_eof: Callable[[], Awaitable[ConnectionClosed]],
        deadlines: Mapping[str, float] | None = None,
    ) -> Connection:
        """The connection to this plugin; a plugin's (not an MCP server's) has its per-call
        notifications and its `service/call` routed. `deadlines` are the settings' unless
        given (a package runner's first start has its own)."""
        conn = Connection(
            reader,
            writer,
            name=f"plugin {self.name}",
            deadlines=deadlines if deadlines is not None else self._settings.deadlines,
            on_eof=on_eof,
            on_stray=self._stray,
            on_unexpected=self._unexpected,
        )
        if self.manifest.mcp is None:
            self._calls.install(conn)
            self._router.install(conn, self.name)
        return conn

    def _peer(self, conn: Connection) -> Connection | McpClient:
        """What the proxies speak to over `conn`: the connection itself, or for an MCP
        server the MCP client holding it, which speaks MCP beneath bingo's own methods
        (`_mcp.py`), its handshake included, so nothing above it knows."""
        if self.manifest.mcp is None:
            return conn
        choose = self._facts.choose_model if self._samples() else None
        return McpClient(
            conn,
            plugin=self.name,
            log=self.log.line,
            progress=self._calls.progress,
            elicit=elicit_through(self._calls, self.name),
            sample=sample_with(choose, self.name, self.log.line) if choose is not None else None,
            on_changed=self._changed,
        )

    def _samples(self) -> bool:
        """Whether the person lets this MCP server use the model (`plugins.<name>.sampling`)."""
        config = self._settings.plugins.get(self.name, {})
        sampling = config.get("sampling", False)
        if not isinstance(sampling, bool):
            # Not silently a no: the person meant something by it (`"true"`, `1`).
            self._notices.say_once(
                self.name,
                "sampling-setting",
                f'plugins.{self.name}.sampling is {json.dumps(sampling)[:80]}, not true or false, so sampling stays off: write "sampling": true to let this server use the model',
            )
        return sampling is True

    async def _changed(self, info: InitializeResult) -> None:
        """An MCP server said its tools or prompts changed: it declares `info` now."""
        if self._on_answer is not None and self.state == "running":
            await self._on_answer(self, info)

    def _unexpected(self, request_id: RequestId) -> None:
        said = repr(request_id)
        self.log.line(f"answer to id {cut(said)}, which the host never asked or already had")
        # A string id is the common mistake: the id must come back as it was sent.
        problem = P.UNEXPECTED_STRING_ID if isinstance(request_id, str) else P.UNEXPECTED_ID
        self._notices.say_once(
            self.name, problem.key, problem.words(said=cut(said, QUOTED_MAX), log=self.log.path), "warning"
        )

    def _stray(self, bad: BadLine) -> None:
        self.log.line(f"stdout line that is not JSON-RPC ({cut(bad.reason)}): {cut(bad.preview)}")
        # Said to the person, who runs the server and cannot change it (a banner is common):
        # what happened and where it is kept. How to fix it is its author's, and
        # `bingo --check-plugin` says it (STRAY_STDOUT's fix).
        kind = "server" if self.manifest.mcp is not None else "plugin"
        self._notices.say_once(
            self.name,
            P.STRAY_STDOUT.key,
            f"{kind} {self.name} printed something that is not part of the protocol on its output; bingo ignored it (see {self.log.path})",
            "info",
        )
