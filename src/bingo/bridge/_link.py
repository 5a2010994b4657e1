"""The link: what a proxy holds instead of a process.

Owns the `Link` seam (the name, the current peer, respawned when a source is read), the
`Peer` a proxy speaks to (call, notify, deadline, ended: a plugin's `Connection`, or an MCP
server's client, which speaks MCP beneath bingo's methods), the routing of per-call notifications
(`tool/progress` by callId, `provider/delta` by streamId) and the book of which calls a
plugin is running, which `bingo.host ask` checks. A proxy holds a Link, never one process,
so it stays registered across respawns.

It does not spawn anything: the host's plugin handle implements Link over processes, and
`StaticLink` implements it over one fixed peer for tests and the bench.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

import msgspec

from ..endpoint import Connection
from ..kernel.errors import ConnectionClosed, PluginUnavailable
from ..kernel.interfaces import ToolCall
from ..wire import Delta, ProviderDeltaParams, ToolProgressParams, Wire

__all__ = ["Calls", "Ended", "Link", "Peer", "StaticLink", "Unavailable"]

R = TypeVar("R")


class Unavailable(PluginUnavailable):
    """The plugin is not running (dead, within its backoff, or refused): its sources answer
    nothing at once. The notice about it was already raised when it stopped. The kernel
    knows it as PluginUnavailable (a hook whose plugin fails closed must tell it apart)."""


class Ended(ConnectionClosed):
    """A plugin's process ended under its calls, and the notice that it stopped said this
    error's line, its last words (`said`) included. Each call waiting fails with it; a tool
    call's own line says how it ended without those words (`unsaid`), so they are said once."""

    def __init__(self, message: str, hint: str, *, said: str = "") -> None:
        super().__init__(message, f"{said}; {hint}" if said and hint else said or hint)
        self.said = said
        self._rest = hint

    def unsaid(self) -> ConnectionClosed:
        """The same error without the words the notice quoted."""
        return ConnectionClosed(self.message, self._rest)


PROGRESS_PER_SECOND = 200
"""More live lines a second than anyone can read: past this, a plugin floods."""


class Calls:
    """The calls and streams of one plugin in flight, by the ids its notifications use."""

    __slots__ = ("_in_window", "_stream_ids", "_window", "ended", "on_flood", "streams", "tools")

    def __init__(self, on_flood: Callable[[], None] | None = None) -> None:
        self.tools: dict[str, ToolCall] = {}
        """The tool calls running, by callId."""
        self.ended: set[str] = set()
        """The callIds of calls that have ended (a question on one is refused in words)."""
        self.streams: dict[str, Callable[[Delta], None]] = {}
        """Where each `provider/stream`'s deltas go, by streamId."""
        self.on_flood = on_flood
        """Told once a second at most that the plugin sends more live lines than anyone reads."""
        self._stream_ids = itertools.count(1)
        self._window = 0.0
        self._in_window = 0

    def stream_id(self) -> str:
        """A fresh streamId for `provider/stream`."""
        return f"s{next(self._stream_ids)}"

    def begin(self, call: ToolCall) -> None:
        """Note that `call` is running."""
        self.tools[call.call_id] = call

    def end(self, call_id: str) -> None:
        """Note that the call has ended."""
        if self.tools.pop(call_id, None) is not None:
            self.ended.add(call_id)

    def install(self, conn: Connection) -> None:
        """Route this plugin's per-call notifications arriving on `conn`."""
        conn.on_notification("tool/progress", ToolProgressParams, self._progress)
        conn.on_notification("provider/delta", ProviderDeltaParams, self._delta)

    def _progress(self, params: ToolProgressParams) -> None:
        self.progress(params.call_id, params.tail)

    def progress(self, call_id: str, tail: str) -> None:
        """Show `tail` as the live line of call `call_id`, if it is running (a flood is
        cut: see PROGRESS_PER_SECOND)."""
        call = self.tools.get(call_id)
        if call is None:
            return
        # A live line is for a person to read: past PROGRESS_PER_SECOND lines a second
        # the rest of that second is dropped, and the flood is said once.
        now = time.monotonic()
        if now - self._window >= 1.0:
            self._window, self._in_window = now, 0
        self._in_window += 1
        if self._in_window > PROGRESS_PER_SECOND:
            if self._in_window == PROGRESS_PER_SECOND + 1 and self.on_flood is not None:
                self.on_flood()
            return
        call.progress(tail)

    def _delta(self, params: ProviderDeltaParams) -> None:
        on_delta = self.streams.get(params.stream_id)
        if on_delta is not None:
            on_delta(params.delta)


class Peer(Protocol):
    """What a proxy speaks to, in bingo's own methods: a plugin's `Connection`, or an MCP
    server's `McpClient` (`_mcp.py`), which speaks MCP beneath them."""

    @property
    def name(self) -> str:
        """Who it is, as errors name it (`plugin <name>`)."""
        ...

    @property
    def ended(self) -> ConnectionClosed | None:
        """Why it ended, or None while it is open."""
        ...

    def deadline(self, method: str) -> float:
        """Seconds a call of `method` may take (the settings', then the wire's table)."""
        ...

    def notify(self, method: str, params: Wire) -> None:
        """Send a notification; synchronous, so a cancellation handler can send one.

        Raises:
            ConnectionClosed: it has ended.
        """
        ...

    async def call(
        self,
        method: str,
        params: Wire,
        result: type[R],
        *,
        deadline: float | None | msgspec.UnsetType = msgspec.UNSET,
    ) -> R:
        """Call `method` and wait for its answer, decoded as `result`, at most `deadline`
        seconds (unless given, the method's own; None when the caller bounds the wait).

        Raises:
            PluginError: it failed, was late, ended, or answered in the wrong shape.
        """
        ...


class Link(Protocol):
    """A proxy's handle on its plugin."""

    @property
    def name(self) -> str:
        """The plugin's name."""
        ...

    @property
    def calls(self) -> Calls: ...

    def current(self) -> Peer | None:
        """The peer if the plugin is running now; never spawns."""
        ...

    async def connection(self) -> Peer:
        """The running peer, respawning a stopped plugin past its backoff.

        Raises:
            Unavailable: the plugin cannot answer now.
        """
        ...

    def abandon(self, why: str) -> None:
        """End the current process now, with one notice saying `why`; the next read of a
        source starts it again (a person gave up waiting for it)."""
        ...

    def fault(self, key: str, message: str) -> None:
        """Say, once per `key`, that the plugin misbehaved (a late or malformed answer the
        kernel would otherwise only hand to the model); the notice names where its log is."""
        ...


class StaticLink:
    """A Link over one fixed peer (tests, the bench); its deadlines are the peer's. A
    Connection's per-call notifications are routed to its book of calls."""

    def __init__(self, name: str, conn: Peer | None) -> None:
        self._name = name
        self._conn = conn
        self._calls = Calls()
        self.faults: list[str] = []
        """What `fault` was told, for tests."""
        self.abandoned: list[str] = []
        """What `abandon` was told, for tests: a static link has no process to end."""
        if isinstance(conn, Connection):
            self._calls.install(conn)

    @property
    def name(self) -> str:
        return self._name

    @property
    def calls(self) -> Calls:
        return self._calls

    def current(self) -> Peer | None:
        return self._conn

    def abandon(self, why: str) -> None:
        self.abandoned.append(why)

    async def connection(self) -> Peer:
        if self._conn is None or self._conn.ended is not None:
            raise Unavailable(f"plugin {self.name} is not running")
        return self._conn

    def fault(self, key: str, message: str) -> None:
        self.faults.append(message)
