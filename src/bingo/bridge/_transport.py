"""What one start of a plugin runs over: a process's pipes, or a Streamable HTTP MCP
server's session.

Both give the plugin's handle the same things (`Transport`): a reader and a writer for its
connection, the deadlines that start has, how it ended and the words it left, and what a
handshake that failed is said as. So the handle has one lifetime, handshake → running →
ended, over either (`_plugin.py`, ADR-0039). Owns starting each: for a process, its command
and environment, its sandbox, the spawn boundary (the one place a spawn's OSError becomes a
SpawnError) and a package runner's first start (longer, and a notice when it is slow,
ADR-0036); for an HTTP server, its headers' variables.

It does not decide what an ending costs, nor speak JSON-RPC.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

import msgspec

from ..endpoint import LineWriter, Unread
from ..kernel.dispatch import ChooseModel
from ..kernel.errors import DeadlinePassed, PluginError, SpawnError
from ..kernel.settings import Settings
from ..sandbox import Launcher, Policy, Sandbox, launcher
from ._cwd import not_from_the_project
from ._expand import expand_server
from ._mcp_http import McpHttp, SignInDesk, SignInPlace, expand_headers
from .discovery import PluginSource, entry_command, workdir
from .manifest import Manifest, McpServer
from .process import INSTALL_GRACE, TERM_GRACE, PluginLog, PluginProcess

__all__ = ["INSTALL_NOTICE_AFTER", "HostFacts", "Pipes", "Remote", "Transport", "open_pipes", "open_remote"]

INSTALL_NOTICE_AFTER = 3.0
"""Seconds a package runner's first start may take before one notice says it may be
installing (a warm start answers well within it; a cold one is worth a word)."""


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
    sign_ins: SignInDesk | None = None
    """Where the person is asked whether to sign in to a server that needs it (on a
    terminal); elsewhere its notice names `bingo mcp login NAME` (INTERFACE §14)."""

    def plugin_data(self, name: str) -> Path:
        """Plugin `name`'s `dataDir`."""
        return (self.plugins_data if self.plugins_data is not None else self.data_dir / "plugins") / name


class Transport(Protocol):
    """One start of a plugin, as its handle's lifetime uses it. Use as `async with`: leaving
    ends it (a process's bounded shutdown, an HTTP session's DELETE)."""

    @property
    def reader(self) -> asyncio.StreamReader: ...

    @property
    def writer(self) -> LineWriter: ...

    @property
    def deadlines(self) -> Mapping[str, float]:
        """The deadlines of this start (the settings', or a package runner's first start's)."""
        ...

    @property
    def local(self) -> bool:
        """Whether it runs the plugin's own command (whose relative paths may be wrong)."""
        ...

    async def __aenter__(self) -> Transport: ...

    async def __aexit__(self, *exc_info: object) -> None: ...

    async def ended(self) -> str:
        """How it ended, in words after the plugin's name (`exited with code 1`)."""
        ...

    def said(self) -> str:
        """The plugin's most useful last words (a process's stderr), or ''."""
        ...

    def unanswered(self, exc: PluginError) -> str:
        """Why a start whose handshake failed with `exc` stopped."""
        ...

    def answered(self) -> None:
        """The handshake was answered: the plugin runs."""
        ...

    def closed(self, error: PluginError) -> None:
        """Its connection ended with `error` (or its handshake failed so)."""
        ...


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


class Pipes:
    """A plugin process's stdout and stdin. `runner` is the package runner it was started
    through, if any, and `first` whether this is that runner's first start this run."""

    def __init__(
        self, proc: PluginProcess, *, deadlines: Mapping[str, float], runner: Launcher | None, first: bool
    ) -> None:
        self.proc = proc
        self._deadlines = deadlines
        self._runner = runner
        self._first = first
        self._slow: asyncio.TimerHandle | None = None

    @property
    def reader(self) -> asyncio.StreamReader:
        return self.proc.stdout

    @property
    def writer(self) -> LineWriter:
        return self.proc.stdin

    @property
    def deadlines(self) -> Mapping[str, float]:
        return self._deadlines

    @property
    def local(self) -> bool:
        return True

    def when_slow(self, said: Callable[[Launcher, float], None]) -> None:
        """Call `said` once if a package runner's first start is still starting after
        INSTALL_NOTICE_AFTER seconds (it may be installing first)."""
        runner = self._runner
        if self._first and runner is not None:
            seconds = self._deadlines["initialize"]
            loop = asyncio.get_running_loop()
            self._slow = loop.call_later(INSTALL_NOTICE_AFTER, said, runner, seconds)

    async def __aenter__(self) -> Pipes:
        await self.proc.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._slow is not None:
            self._slow.cancel()
        await self.proc.__aexit__(*exc_info)

    async def ended(self) -> str:
        return await self.proc.ended()

    def said(self) -> str:
        return self.proc.stderr_words()

    def unanswered(self, exc: PluginError) -> str:
        if not isinstance(exc, DeadlinePassed):
            return f"did not complete its handshake: {exc.message}"
        seconds = self._deadlines["initialize"]
        if not self._first or self._runner is None:
            return f"did not complete its handshake within {seconds:g} s: deadlines.initialize in settings sets how long to wait"
        return (
            f"did not complete its handshake within {seconds:g} s of its first start through {self._runner.said}, "
            f"installing included (it was asked to stop, and given time to put its cache back): "
            f"deadlines.packageInstall in settings sets how long to wait"
        )

    def answered(self) -> None:
        if self._slow is not None:
            self._slow.cancel()
        self.proc.installing = False  # it runs: stopping it ends no install

    def closed(self, error: PluginError) -> None:
        self.proc.deaf = isinstance(error, Unread)


async def open_pipes(
    source: PluginSource,
    manifest: Manifest,
    *,
    facts: HostFacts,
    settings: Settings,
    log: PluginLog,
    handshaken: bool,
) -> Pipes:
    """Start plugin `source`'s process, confined when the run has a sandbox. `handshaken`:
    a process of it completed its handshake this run (a package runner's next start finds
    its package installed, and has `deadlines.initialize` again).

    Raises:
        SpawnError: it could not be started.
    """
    argv, env = entry_command(manifest, source.root, facts.environ)
    if source.layer == "project":
        # Trust pins every byte of the plugin's directory, compiled caches included
        # (Python loads a .pyc without checking its source): a Python plugin that wrote
        # its own would be asked about again after every first run (ADR-0016).
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    data_dir = facts.plugin_data(source.package or source.name)  # a package's servers share its own
    data_dir.mkdir(parents=True, exist_ok=True)  # inline: a syscall or two (ADR-0003)
    if source.layer != "project":
        # The person's (or a package's), running in a project nobody may have trusted: what
        # it runs is not looked for there (`_cwd`).
        argv, env = not_from_the_project(argv, env, data_dir / ".npm-prefix")
    confined = None
    if facts.sandbox is not None:
        # Its own env, as the person wrote it (manifest or .mcp.json), is kept whole (§9).
        own = {key: env[key] for key in manifest.entry.env if key in env}
        confined = await facts.sandbox.for_plugin(
            source.name, argv=argv, env=env, own=own, root=source.root, data_dir=data_dir
        )
        if confined is not None:
            env = confined.env
    runner = launcher(argv)
    # A package runner may install before it runs: its first start has longer, and its
    # warden gives it INSTALL_GRACE to roll an install back when it is stopped (ADR-0036).
    first = runner is not None and not handshaken
    proc = await _spawn(
        argv,
        env=env,
        cwd=workdir(source, facts.cwd),
        log=log,
        policy=confined.policy if confined is not None else None,
        grace=INSTALL_GRACE if runner is not None else TERM_GRACE / 2,
    )
    proc.installing = runner is not None
    deadlines = settings.deadlines
    if first:
        deadlines = {**deadlines, "initialize": deadlines.get("packageInstall", deadlines["initialize"])}
    return Pipes(proc, deadlines=deadlines, runner=runner, first=first)


class Remote:
    """A Streamable HTTP MCP server's session (`_mcp_http.py`): no process, no last words."""

    def __init__(self, http: McpHttp, *, deadlines: Mapping[str, float]) -> None:
        self.http = http
        self._deadlines = deadlines

    @property
    def reader(self) -> asyncio.StreamReader:
        return self.http.reader

    @property
    def writer(self) -> LineWriter:
        return self.http

    @property
    def deadlines(self) -> Mapping[str, float]:
        return self._deadlines

    @property
    def local(self) -> bool:
        return False

    async def __aenter__(self) -> Remote:
        await self.http.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.http.__aexit__(*exc_info)

    async def ended(self) -> str:
        return self.http.why or "closed the connection"

    def said(self) -> str:
        return ""

    def unanswered(self, exc: PluginError) -> str:
        return f"did not complete its handshake: {exc.message}"

    def answered(self) -> None:
        return None

    def closed(self, error: PluginError) -> None:
        return None


def open_remote(
    source: PluginSource, manifest: Manifest, *, facts: HostFacts, settings: Settings, say: Callable[[str], None]
) -> Remote:
    """The session of MCP server `source` at its url, its headers' `${VARIABLE}`s expanded
    (a repository's plugin reads only the variables the person lists, ADR-0028), signed in
    to when it needs it (`say` tells the person the sign-in's URL; INTERFACE §14).

    Raises:
        SpawnError: a header names a variable it may not read.
    """
    mcp = manifest.mcp
    assert mcp is not None and mcp.url is not None  # the caller's choice: an HTTP server's manifest
    headers = mcp.headers  # a `.mcp.json` server's were expanded when it was read
    if source.declared_in is None and source.layer == "project":
        expanded = expand_server(
            McpServer(url=mcp.url, headers=mcp.headers),
            facts.environ,
            settings.mcp_variables,
            settings="your own settings (~/.bingo/settings.json)",
        )
        if isinstance(expanded, str):
            raise SpawnError(expanded)
        headers = expanded.headers
    elif source.declared_in is None:
        headers = expand_headers(mcp.headers, facts.environ)
    place = SignInPlace(
        store=facts.data_dir / "oauth",
        settings=settings.plugins.get(source.name, {}),
        environ=facts.environ,
        say=say,
        desk=facts.sign_ins,
        readable=settings.mcp_variables if source.layer == "project" else None,
    )
    return Remote(McpHttp(mcp.url, headers, name=source.name, sign_in=place), deadlines=settings.deadlines)
