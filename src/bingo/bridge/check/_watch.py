"""What the checker watches while a plugin runs: every stdout line on its way to the
connection, and what bingo's own plugin handle and `bingo.host` router tell of it.

Owns the record (`Watch`: lines before the handshake's answer, methods a plugin does not
send, `tool/progress` that names no call in flight, stray lines, unexpected ids, faults and
what was asked of `bingo.host`), the tap that shows it each line without buffering or
changing a byte (`Tap`), and the subclasses of the plugin handle and the router that report
to it (`Checked`, `Router`), so the words of a verdict are the handle's own. It decides no
verdict.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ...endpoint import MAX_LINE, BadLine, Connection, LineWriter
from ...endpoint._message import envelope_decoder, is_envelope
from ...kernel.errors import ConnectionClosed, Refused
from ...kernel.log import cut
from ...kernel.notices import Notices
from ...kernel.registry import Registry
from ...wire import (
    HOST_SERVICE_KEY,
    Json,
    ServiceCallParams,
    ToolProgressParams,
    too_deep,
)
from ...wire.rpc import Envelope, RequestId
from .._plugin import Plugin
from ..service import ServiceRouter
from ._report import Check, Status

__all__ = ["KEPT", "PLUGIN_SENDS", "PREVIEW", "Checked", "Router", "Tap", "Watch", "line"]

KEPT = 200
"""Stray lines, unknown methods and progress faults kept: enough to say what they were."""
PREVIEW = 80
"""Characters of a stdout line quoted in a verdict."""
PLUGIN_SENDS = frozenset({"tool/progress", "provider/delta", "service/call"})
"""The methods a plugin may send (the rest of the wire is the host's to send)."""


@dataclass(slots=True)
class Watch:
    """What the checker saw of the plugin while it ran."""

    lines: int = 0
    answered: bool = False
    first_answer: bytes | None = None
    early: list[str] = field(default_factory=list[str])
    strays: list[tuple[int, BadLine]] = field(default_factory=list[tuple[int, BadLine]])
    unknown: Counter[str] = field(default_factory=Counter[str])
    progress_ok: int = 0
    progress_bad: list[str] = field(default_factory=list[str])
    in_flight: set[str] = field(default_factory=set[str])
    unexpected: list[str] = field(default_factory=list[str])
    string_id: bool = False
    faults: dict[str, str] = field(default_factory=dict[str, str])
    refused_asks: list[str] = field(default_factory=list[str])
    host_notices: int = 0
    mcp: bool = False
    """An MCP server's: its methods are MCP's, which bingo's adapter reads, not bingo's wire."""

    def seen(self, line: bytes) -> None:
        """One stdout line on its way to the connection (bounded work: msgspec's decode)."""
        self.lines += 1
        if too_deep(line):
            return  # the connection reads its top level, or calls it a stray line
        try:
            env = envelope_decoder.decode(line)
        except msgspec.DecodeError:
            if not self.answered and len(self.early) < KEPT:
                self.early.append(cut(line.decode("utf-8", "replace").strip(), PREVIEW))
            return
        if not is_envelope(env):
            if not self.answered and len(self.early) < KEPT:
                self.early.append(cut(line.decode("utf-8", "replace").strip(), PREVIEW))
            return
        if isinstance(env.method, msgspec.UnsetType):
            if not self.answered:
                self.answered, self.first_answer = True, line
            return
        if not self.mcp:
            self._message(env)

    def _message(self, env: Envelope) -> None:
        method = env.method
        assert isinstance(method, str)
        if method not in PLUGIN_SENDS:
            if len(self.unknown) < KEPT or method in self.unknown:
                self.unknown[cut(method, PREVIEW)] += 1
            return
        if method != "tool/progress":
            return
        params = env.params if not isinstance(env.params, msgspec.UnsetType) else b"null"
        try:
            progress = msgspec.json.decode(params, type=ToolProgressParams)
        except msgspec.DecodeError as exc:
            self._bad(f"with params of the wrong shape ({exc})")
            return
        if progress.call_id not in self.in_flight:
            self._bad(f"for callId {cut(progress.call_id, PREVIEW)!r}, which is no call in flight")
        elif "\n" in progress.tail.strip("\n"):
            self._bad("whose tail is more than one line (the live line shows one)")
        else:
            self.progress_ok += 1

    def _bad(self, why: str) -> None:
        if len(self.progress_bad) < KEPT:
            self.progress_bad.append(why)


class Tap(asyncio.StreamReader):
    """The plugin's stdout as the connection reads it, each line shown to `seen` on the way:
    the same bytes, in the same pieces (nothing is buffered here)."""

    def __init__(self, inner: asyncio.StreamReader, seen: Callable[[bytes], None]) -> None:
        super().__init__(limit=MAX_LINE)
        self._inner = inner
        self._seen = seen

    # Any: the base's separator type is private to typeshed (`_ReaduntilBuffer`).
    async def readuntil(self, separator: Any = b"\n") -> bytes:
        try:
            line = await self._inner.readuntil(separator)
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                self._seen(exc.partial)
            raise
        self._seen(line)
        return line

    async def readexactly(self, n: int) -> bytes:
        return await self._inner.readexactly(n)

    async def read(self, n: int = -1) -> bytes:
        return await self._inner.read(n)

    def at_eof(self) -> bool:
        return self._inner.at_eof()


class Checked(Plugin):
    """bingo's plugin handle, telling the checker what it would tell the person."""

    watch: Watch

    def _connection(
        self,
        reader: asyncio.StreamReader,
        writer: LineWriter,
        *,
        on_eof: Callable[[], Awaitable[ConnectionClosed]],
        deadlines: Mapping[str, float] | None = None,
    ) -> Connection:
        return super()._connection(Tap(reader, self.watch.seen), writer, on_eof=on_eof, deadlines=deadlines)

    def _stray(self, bad: BadLine) -> None:
        if len(self.watch.strays) < KEPT:
            self.watch.strays.append((self.watch.lines, bad))
        super()._stray(bad)

    def _unexpected(self, request_id: RequestId) -> None:
        if len(self.watch.unexpected) < KEPT:
            self.watch.unexpected.append(cut(repr(request_id), PREVIEW))
        self.watch.string_id = self.watch.string_id or isinstance(request_id, str)
        super()._unexpected(request_id)

    def fault(self, key: str, message: str) -> None:
        self.watch.faults.setdefault(key, message)
        super().fault(key, message)

    @property
    def spawned(self) -> bool:
        """Whether a process was started at all."""
        return self._proc is not None


class Router(ServiceRouter):
    """The run's `bingo.host` router, counting what the plugin asks of it."""

    def __init__(self, registry: Registry, notices: Notices, books: Mapping[str, Any], watch: Watch) -> None:
        super().__init__(registry, notices, books)
        self._watch = watch

    async def route(self, plugin: str, params: ServiceCallParams) -> Json:
        if params.key == HOST_SERVICE_KEY and params.method == "notice":
            self._watch.host_notices += 1
        try:
            return await super().route(plugin, params)
        except Refused as exc:
            if len(self._watch.refused_asks) < KEPT:
                self._watch.refused_asks.append(exc.message)
            raise


def line(group: str, id: str, title: str, status: Status, detail: str = "", fix: str = "") -> Check:
    return Check(id=id, group=group, status=status, title=title, detail=detail, fix=fix)
