"""One plugin's handle: its process lifetimes, one after another, behind one Link.

Owns spawning (the one place a spawn's OSError becomes a SpawnError), what a handshake's
outcome costs (`handshake.py` holds the exchange: a protocol or name it refuses is refused
with a notice and never retried), death (in-flight calls fail with an error naming the
plugin and how it ended, ONE notice, sources answer nothing), and respawn on the next source
read, paced by `_backoff.py` (1 s doubling to 60 s between consecutive failed spawns, reset
once a process has lived 60 s). No health checks, no supervisor.

A plugin declared from the declaration cache is `idle`: registered, never started. Its first
source read starts it like any start (no backoff, no notice about a death that never
happened), and every handshake's answer is handed to the host (`on_answer`), which compares
it with what is registered.

It does not register anything (the host does, in name order) and does not build proxies.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Literal

import msgspec

from ..endpoint import BadLine, Connection, LineWriter, Unread
from ..kernel.dispatch import ChooseModel
from ..kernel.errors import ConnectionClosed, DeadlinePassed, PluginError, SpawnError
from ..kernel.log import QUOTED_MAX, cut
from ..kernel.notices import Notices
from ..kernel.settings import Settings
from ..sandbox import Launcher, Policy, Sandbox, launcher
from ..wire import InitializeResult
from ..wire.rpc import RequestId
from . import _problems as P
from ._backoff import Backoff, Retry
from ._expand import expand_server
from ._link import PROGRESS_PER_SECOND, Calls, Peer, Unavailable
from ._mcp import McpClient
from ._mcp_asks import elicit_through, sample_with
from ._mcp_http import McpHttp, expand_headers
from .discovery import PluginSource, entry_command, workdir
from .handshake import handshake, initialize_params
from .manifest import Manifest, McpServer
from .process import INSTALL_GRACE, TERM_GRACE, PluginLog, PluginProcess
from .service import ServiceRouter
from .tool import declaration_problems

__all__ = ["HostFacts", "Plugin", "State"]

_log = logging.getLogger(__name__)

INSTALL_NOTICE_AFTER = 3.0
"""Seconds a package runner's first start may take before one notice says it may be
installing (a warm start answers well within it; a cold one is worth a word)."""

State = Literal["idle", "starting", "running", "stopped", "refused"]
"""`idle`: declared from the cache and not started yet; the others say what they say."""

Answered = Callable[["Plugin", "InitializeResult | str"], Awaitable[None]]
"""Told every handshake's outcome: the accepted declaration, or the words refusing it."""


async def _spawn(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    log: PluginLog,
    policy: Policy | None = None,
    grace: float = TERM_GRACE / 2,
) -> PluginProcess:
    """Start a plugin's process: the spawn boundary, where an OSError (its command cannot be
    run, its directory is gone, the janitor failed) becomes bingo's, once.

    Raises:
        SpawnError: it could not be started (JanitorError, once the janitor says so itself).
    """
    try:
        return await PluginProcess.spawn(argv, env=env, cwd=cwd, log=log, policy=policy, grace=grace)
    except FileNotFoundError as exc:
        if exc.filename != argv[0]:  # the working directory, say
            raise SpawnError(str(exc)) from exc
        if "/" in argv[0]:
            raise SpawnError(f"its command {argv[0]!r} does not exist: correct the command's path") from exc
        raise SpawnError(
            f"its command {argv[0]!r} is not on PATH: install it, or write the program's absolute path as the command"
        ) from exc
    except PermissionError as exc:
        if exc.filename != argv[0]:
            raise SpawnError(str(exc)) from exc
        raise SpawnError(
            f"its command {argv[0]!r} cannot be run (permission denied): make it executable (chmod +x), or name its interpreter as the command"
        ) from exc
    except OSError as exc:
        raise SpawnError(str(exc)) from exc


class HostFacts(msgspec.Struct, frozen=True):
    """What every plugin is told about the host."""

    version: str
    cwd: Path
    data_dir: Path
    environ: Mapping[str, str]
    choose_model: ChooseModel | None = None
    """The run's model, for an MCP server the person lets sample it."""
    sandbox: Sandbox | None = None
    """The run's sandbox: each process is started with its policy and environment."""
    plugins_data: Path | None = None
    """Where each plugin's `dataDir` is made (`<plugins_data>/<name>`); None: `<data_dir>/plugins`.
    `bingo --check-plugin` gives a temporary directory, so a check changes none of the
    person's data."""

    def plugin_data(self, name: str) -> Path:
        """Plugin `name`'s `dataDir`."""
        return (self.plugins_data if self.plugins_data is not None else self.data_dir / "plugins") / name


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
        self._abandoned: PluginProcess | None = None
        """The process `abandon` ended: its end is no failure to report."""
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
        self._abandoned = self._proc
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

    async def _lifetime(self, ready: asyncio.Future[Peer | PluginError]) -> None:
        mcp = self.manifest.mcp
        if mcp is not None and mcp.url is not None:
            headers = mcp.headers  # a `.mcp.json` server's were expanded when it was read
            if self.source.declared_in is None and self.source.layer == "project":
                # A repository's plugin reads only the variables the person lists (ADR-0028).
                settings = "your own settings (~/.bingo/settings.json)"
                expanded = expand_server(
                    McpServer(url=mcp.url, headers=mcp.headers),
                    self._facts.environ,
                    self._settings.mcp_variables,
                    settings=settings,
                )
                if isinstance(expanded, str):
                    self._stopped(f"could not be started: {expanded}", say=True)
                    return
                headers = expanded.headers
            elif self.source.declared_in is None:
                headers = expand_headers(mcp.headers, self._facts.environ)
            await self._remote(ready, mcp.url, headers)
            return
        argv, env = entry_command(self.manifest, self.source.root, self._facts.environ)
        if self.source.layer == "project":
            # Trust pins every byte of the plugin's directory, compiled caches included
            # (Python loads a .pyc without checking its source): a Python plugin that wrote
            # its own would be asked about again after every first run (ADR-0016).
            env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        data_dir = self._facts.plugin_data(self.name)
        data_dir.mkdir(parents=True, exist_ok=True)  # inline: a syscall or two (ADR-0003)
        confined = None
        if self._facts.sandbox is not None:
            # Its own env, as the person wrote it (manifest or .mcp.json), is kept whole (§9).
            own = {key: env[key] for key in self.manifest.entry.env if key in env}
            confined = await self._facts.sandbox.for_plugin(
                self.name, argv=argv, env=env, own=own, root=self.source.root, data_dir=data_dir
            )
            if confined is not None:
                env = confined.env
        runner = launcher(argv)
        # A package runner may install before it runs: its first start has longer, and its
        # warden gives it INSTALL_GRACE to roll an install back when it is stopped (ADR-0036).
        first = runner is not None and not self._handshaken
        grace = INSTALL_GRACE if runner is not None else TERM_GRACE / 2
        try:
            proc = await _spawn(
                argv,
                env=env,
                cwd=workdir(self.source, self._facts.cwd),
                log=self.log,
                policy=confined.policy if confined is not None else None,
                grace=grace,
            )
        except SpawnError as exc:
            self._stopped(f"could not be started: {exc.message}", say=True)
            return
        self._proc = proc
        proc.on_fault = self.fault
        proc.installing = runner is not None
        deadlines = self._settings.deadlines
        if first:
            deadlines = {**deadlines, "initialize": deadlines.get("packageInstall", deadlines["initialize"])}
        slow = (
            asyncio.get_running_loop().call_later(
                INSTALL_NOTICE_AFTER, self._installing, runner, deadlines["initialize"]
            )
            if first and runner is not None
            else None
        )
        async with proc:
            conn = self._connection(proc.stdout, proc.stdin, on_eof=lambda: self._ended(proc), deadlines=deadlines)
            peer = self._peer(conn)
            async with peer:
                params = initialize_params(
                    root=self.source.root,
                    config=self._settings.plugins.get(self.name, {}),
                    host_version=self._facts.version,
                    cwd=self._facts.cwd,
                    data_dir=data_dir,
                )
                try:
                    answer = await handshake(peer, params, self.manifest.name, on_declared=self._check_declared)
                except PluginError as exc:
                    proc.deaf = isinstance(exc, Unread)
                    if conn.ended is not None and self.state == "stopped":
                        return  # it died: on_eof has stopped it and said so, once
                    if isinstance(exc, DeadlinePassed):
                        said = self._late(runner if first else None, deadlines["initialize"])
                    else:
                        said = f"did not complete its handshake: {exc.message}"
                    self._stopped(f"{said}: {self._where()}", say=True)
                    return
                finally:
                    if slow is not None:
                        slow.cancel()
                proc.installing = False  # it runs: stopping it ends no install
                if isinstance(answer, str):
                    self.state, self.why = "refused", answer
                    self._notices.say(self.name, f"refused: {answer}", "warning")
                    if self._on_answer is not None:
                        await self._on_answer(self, answer)
                    return
                if self.info is None:
                    self.info = answer
                if self._on_answer is not None:
                    # Before anyone is handed the connection: what the caller finds in the
                    # registry next is what this process declares.
                    await self._on_answer(self, answer)
                self._conn = peer
                self.state, self.why = "running", None
                self._handshaken = True
                self._retry.ran()
                ready.set_result(peer)
                error = await conn.wait_closed()
                proc.deaf = isinstance(error, Unread)
                if self.state == "running":  # on_eof did not get to say it
                    self._conn = None
                    self._stopped(error.line(), say=not self._closing)

    def _late(self, runner: Launcher | None, seconds: float) -> str:
        """Why a start that missed its handshake's deadline stopped, naming the setting that
        sets it: `deadlines.packageInstall` for a package runner's first start, else
        `deadlines.initialize`."""
        if runner is None:
            return f"did not complete its handshake within {seconds:g} s: deadlines.initialize in settings sets how long to wait"
        return (
            f"did not complete its handshake within {seconds:g} s of its first start through {runner.said}, installing "
            f"included (it was asked to stop, and given time to put its cache back): deadlines.packageInstall in "
            f"settings sets how long to wait"
        )

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
        """Stop: a failure for the backoff, unless a running process `ended` after living
        long enough to reset it."""
        self.state, self.why = "stopped", why
        if ended:
            self._retry.ended()
        else:
            self._retry.failed()
        if say:
            self._notices.say(self.name, f"stopped: {why}", "warning")

    async def _ended(self, proc: PluginProcess) -> ConnectionClosed:
        """The stream ended: learn how, and stop *before* pending callers are woken, so
        whoever a caller asks next already sees a stopped plugin."""
        how = await proc.ended()
        if proc is self._abandoned:
            # Ended because the person stopped waiting (`abandon` said so): not a failure.
            return ConnectionClosed(f"plugin {self.name} {how}", f"log: {self.log.path}")
        hint = f"log: {self.log.path}"
        said = proc.stderr_words()
        if said:
            hint = f"{said}; {hint}"
        # Only a process that completed its handshake has a life to measure: one that died
        # in it is a failed start, and backs off (INTERFACE.md §5).
        ran = self.state == "running"
        relative = None if ran else self._relative_arg()
        if relative is not None:
            hint = f"{relative}; {hint}"  # the likeliest cause first: `python3 main.py` run in the project
        error = ConnectionClosed(f"plugin {self.name} {how}", hint)
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

    async def _remote(self, ready: asyncio.Future[Peer | PluginError], url: str, headers: dict[str, str]) -> None:
        """The lifetime of a Streamable HTTP MCP server's session: no process, the same
        handshake, death (it cannot be reached), notice and backoff as a process's."""
        async with McpHttp(url, headers, name=self.name) as http:

            async def ended() -> ConnectionClosed:
                error = ConnectionClosed(
                    f"plugin {self.name} {http.why or 'closed the connection'}", f"log: {self.log.path}"
                )
                ran = self.state == "running"
                self._conn = None
                self._stopped(error.line(), say=not self._closing, ended=ran)
                return error

            conn = self._connection(http.reader, http, on_eof=ended)
            peer = self._peer(conn)
            async with peer:
                try:
                    answer = await peer.call(
                        "initialize",
                        initialize_params(
                            root=self.source.root,
                            config={},
                            host_version=self._facts.version,
                            cwd=self._facts.cwd,
                            data_dir=self._facts.plugin_data(self.name),
                        ),
                        InitializeResult,
                    )
                except PluginError as exc:
                    if conn.ended is not None and self.state == "stopped":
                        return  # it could not be reached: `ended` has said so, once
                    self._stopped(f"did not complete its handshake: {exc.message}: log: {self.log.path}", say=True)
                    return
                if self.info is None:
                    self.info = answer
                if self._on_answer is not None:
                    await self._on_answer(self, answer)
                self._conn = peer
                self.state, self.why = "running", None
                self._retry.ran()
                ready.set_result(peer)
                error = await conn.wait_closed()
                if self.state == "running":
                    self._conn = None
                    self._stopped(error.line(), say=not self._closing)

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
