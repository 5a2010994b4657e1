"""The connection: one asyncio JSON-RPC 2.0 endpoint over one pair of streams (a plugin
process's pipes, an MCP server's HTTP session, an editor's stdin and stdout).

Owns ids, pending calls, per-call deadlines (each method's from the wire's method table,
`deadline_for`, overridden by the `deadlines` it is given: the settings'), the dispatch of
incoming requests and notifications to handlers registered by method, the one function from
an exception to a wire error (`error_object`) and the one from a wire error a peer answered
to an exception (`answered_error`: the PluginError subclass of its code). Requests go both
ways; many calls are in flight at once, matched by id. The read loop never awaits a handler: a request's handler runs as a task in
the connection's own TaskGroup, and a notification's handler is a plain function called in
the loop, wrapped so one bad handler cannot end it.

It does not know processes, plugins, proxies or surfaces. How the peer ended (an exit code, a signal)
comes from whoever made the streams, through `on_eof`; what a stray stdout line costs is
decided through `on_stray`, and what an answer to a request never made (or answered twice)
costs through `on_unexpected`; a late answer to a call the host abandoned (its deadline
passed, its caller was cancelled) is expected and dropped quietly. Cancelling a caller's task sends nothing by itself: the proxies
decide which cancel notification a kind of call needs.

What it queues for a peer that does not read is bounded: past UNREAD_MAX of answers and
notifications unread, the connection ends with `Unread` and the queue is dropped. Whatever
it logs of the peer's words is cut (`kernel.log.cut`). So is how deep it lets them nest: a
line nested deeper than `wire.MAX_DEPTH` is read at its top level only (`read_deep`), so an
answer too deep fails its one call as a BadAnswer and a request whose params are too deep is
refused; a line whose top level cannot be read is a stray line like any other. And how long
a line it keeps: an answer longer than `_framing.MAX_LINE` is thrown away as it arrives, and
the call it answers (its id read from the line's first or last bytes) fails at once with
`TooLarge`, instead of waiting out its deadline (ADR-0028).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from typing import Any, TypeVar

import msgspec

from ..kernel.errors import BadParams, ConnectionClosed, DeadlinePassed, MethodNotFound, PluginError
from ..kernel.log import cut
from ..wire import Wire, deadline_for
from ..wire.rpc import (
    Envelope,
    ErrorObject,
    ErrorResponse,
    Notification,
    Request,
    RequestId,
    Response,
)
from ._framing import MAX_LINE, BadLine, LineReader, LineWriter
from ._message import (
    NESTED,
    TOO_DEEP,
    BadAnswer,
    TooLarge,
    answered_error,
    answered_id,
    decode_answer,
    decoder_for,
    envelope_decoder,
    error_object,
    is_envelope,
    read_deep,
)

__all__ = [
    "UNREAD_MAX",
    "BadAnswer",
    "Connection",
    "TooLarge",
    "Unread",
    "answered_error",
    "decode_answer",
    "decoder_for",
    "error_object",
]

_log = logging.getLogger(__name__)

R = TypeVar("R")
P = TypeVar("P")


_ABANDONED_KEPT = 4096
"""How many abandoned request ids are remembered, so their late answers are dropped quietly."""
UNREAD_MAX = 4 * 1024 * 1024
"""Bytes of answers and notifications the host may queue for a peer that has not taken what
it was sent before (4 MiB): thousands of answers behind, no reading peer is; past it the
connection ends, so bingo's memory never grows with what a plugin does not read."""

_encoder = msgspec.json.Encoder()


class Unread(ConnectionClosed):
    """The peer left more than UNREAD_MAX bytes of answers and notifications unread on its
    stdin: the connection ended, and what was queued for it was dropped."""


RequestHandler = Callable[[Any], Awaitable[Wire]]
NotificationHandler = Callable[[Any], None]


class Connection:
    """A JSON-RPC endpoint over one pair of streams. Use as `async with`: entering starts the
    read loop, leaving stops it and fails what is still pending.

    `deadlines` are the seconds per method that override the wire's table (the settings');
    `on_eof` builds the error pending callers are woken with when the stream ends (it may
    wait, boundedly, to learn how the process ended); `on_stray` is told of every line that
    is not a JSON-RPC message; `on_unexpected` of every answer to an id the host never sent
    or already had an answer for."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: LineWriter,
        *,
        name: str,
        ids: Iterator[int] | None = None,
        deadlines: Mapping[str, float] | None = None,
        on_eof: Callable[[], Awaitable[ConnectionClosed]] | None = None,
        on_stray: Callable[[BadLine], None] | None = None,
        on_unexpected: Callable[[RequestId], None] | None = None,
    ) -> None:
        self.name = name
        self._lines = LineReader(reader, envelope_decoder.decode, read_deep)
        self._writer = writer
        # A pipe's transport says whether a write must wait (drain), without a coroutine.
        self._transport: asyncio.WriteTransport | None = None
        self._high_water = 0
        if isinstance(writer, asyncio.StreamWriter):
            self._transport = writer.transport
            self._high_water = writer.transport.get_write_buffer_limits()[1]
        self._unread = 0
        """Bytes queued without waiting since the peer last kept up (see `_queue`)."""
        self._ids = ids if ids is not None else itertools.count(1)
        self._deadlines = deadlines
        self._on_eof = on_eof
        self._on_stray = on_stray
        self._on_unexpected = on_unexpected
        self._abandoned: dict[RequestId, None] = {}
        self._pending: dict[RequestId, asyncio.Future[msgspec.Raw]] = {}
        self._requests: dict[str, tuple[msgspec.json.Decoder[Any], RequestHandler]] = {}
        self._notifications: dict[str, tuple[msgspec.json.Decoder[Any], NotificationHandler]] = {}
        self._group = asyncio.TaskGroup()
        self._tasks: set[asyncio.Task[None]] = set()
        self._ended: ConnectionClosed | None = None
        self._closed = asyncio.Event()

    # --- lifetime ------------------------------------------------------------------

    async def __aenter__(self) -> Connection:
        await self._group.__aenter__()
        self._spawn(self._read_loop())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._end(ConnectionClosed(f"the connection to {self.name} was closed by the host"))
        for task in self._tasks:
            task.cancel()
        await self._group.__aexit__(None, None, None)

    @property
    def ended(self) -> ConnectionClosed | None:
        """Why the connection ended, or None while it is open."""
        return self._ended

    async def wait_closed(self) -> ConnectionClosed:
        """Wait until the stream has ended; the error pending callers were woken with."""
        await self._closed.wait()
        assert self._ended is not None
        return self._ended

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = self._group.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _end(self, error: ConnectionClosed) -> None:
        if self._ended is None:
            self._ended = error
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(error)
            self._pending.clear()
            self._closed.set()

    # --- handlers ------------------------------------------------------------------

    def on_request(self, method: str, params: type[P], handler: Callable[[P], Awaitable[Wire]]) -> None:
        """Answer incoming `method` requests with `handler` (run as a task)."""
        self._requests[method] = (decoder_for(params), handler)

    def on_notification(self, method: str, params: type[P], handler: Callable[[P], None]) -> None:
        """Handle incoming `method` notifications with `handler`, a quick plain function."""
        self._notifications[method] = (decoder_for(params), handler)

    # --- outgoing ------------------------------------------------------------------

    def _write(self, message: Wire, *, waits: bool = False) -> None:
        """Write one message. One its writer does not wait on (`waits` False: an answer, a
        notification) counts toward UNREAD_MAX while the peer is behind.

        Raises:
            ConnectionClosed: the connection has ended, or cannot be written.
            Unread: the peer is more than UNREAD_MAX behind; the connection has ended.
        """
        if self._ended is not None:
            raise self._ended
        data = _encoder.encode(message) + b"\n"
        if not waits:
            self._queue(len(data))
        try:
            self._writer.write(data)
        except (ConnectionError, RuntimeError) as exc:
            raise ConnectionClosed(f"cannot write to {self.name}: {exc}") from exc

    def _queue(self, size: int) -> None:
        """Count `size` bytes about to be queued for the peer without waiting; past
        UNREAD_MAX of them, end the connection and drop the queue. A caller's request is
        not counted: its caller waits (drain), so there are only as many as callers."""
        transport = self._transport
        if transport is None:
            return
        if transport.get_write_buffer_size() <= self._high_water:
            self._unread = 0  # it has taken what it was sent before: it reads
        self._unread += size
        if self._unread <= UNREAD_MAX:
            return
        error = Unread(
            f"{self.name} does not read its stdin: more than {UNREAD_MAX // 1024 // 1024} MiB written to it is unread",
            "what was written to it is dropped; it is started again when next used",
        )
        _log.warning("%s (%d bytes queued for it are dropped)", error.message, transport.get_write_buffer_size())
        transport.abort()  # the queue goes now: holding it is what must not happen
        self._end(error)
        raise error

    def notify(self, method: str, params: Wire) -> None:
        """Send a notification. Synchronous, so it can be sent from a cancellation handler."""
        self._write(Notification(method=method, params=params))

    def deadline(self, method: str) -> float:
        """Seconds a call of `method` may take (for `provider/stream`: between messages):
        the `deadlines` given, then the wire's table."""
        return deadline_for(method, self._deadlines)

    async def call(
        self,
        method: str,
        params: Wire,
        result: type[R],
        *,
        deadline: float | None | msgspec.UnsetType = msgspec.UNSET,
        sent: Callable[[RequestId], None] | None = None,
    ) -> R:
        """Send a request and wait for its answer, decoded as `result`, at most `deadline`
        seconds: unless given, the method's own (`deadline(method)`); None when the caller
        bounds the wait itself. `sent` is told the request's id before anything is written
        (to cancel it by: `give_up`, or a peer's own cancel notification).

        Raises:
            PluginError: the peer answered an error (the subclass of its code: Refused,
                MethodNotFound, ...).
            DeadlinePassed: no answer came within the deadline.
            ConnectionClosed: the stream ended, or cannot be written.
            BadAnswer: the answer had the wrong shape.
        """
        if isinstance(deadline, msgspec.UnsetType):
            deadline = self.deadline(method)
        request_id = next(self._ids)
        if sent is not None:
            sent(request_id)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[msgspec.Raw] = loop.create_future()
        self._pending[request_id] = future
        timer: asyncio.TimerHandle | None = None
        try:
            self._write(Request(id=request_id, method=method, params=params), waits=True)
            if self._must_drain():
                try:
                    await self._writer.drain()
                except (ConnectionError, RuntimeError) as exc:
                    raise self._ended or ConnectionClosed(f"cannot write to {self.name}: {exc}") from exc
            if deadline is not None:
                # A timer failing the future, not asyncio.timeout: no task machinery per call.
                timer = loop.call_at(loop.time() + deadline, self._expire, request_id, future, method, deadline)
            raw = await future
        finally:
            if timer is not None:
                timer.cancel()
            # A cancelled caller cancels the future itself.
            if future.cancelled() or not future.done():
                self._abandon(request_id)
            self._pending.pop(request_id, None)
        return decode_answer(self.name, method, raw, result)

    def _must_drain(self) -> bool:
        """Whether writing must wait: the pipe's buffer is past its high-water mark (or the
        writer is not a transport's, or the transport is closing, which drain reports)."""
        transport = self._transport
        if transport is None or transport.is_closing():
            return True
        return transport.get_write_buffer_size() > self._high_water

    def _expire(self, request_id: RequestId, future: asyncio.Future[msgspec.Raw], method: str, deadline: float) -> None:
        """The deadline of call `request_id` passed: abandon it and fail its caller."""
        if future.done():
            return
        self._abandon(request_id)
        self._pending.pop(request_id, None)
        future.set_exception(
            DeadlinePassed(
                f"{self.name} did not answer {method} within {deadline:g} s",
                f"deadlines.{method} in settings sets how long to wait",
            )
        )

    def give_up(self, request_id: RequestId, error: PluginError) -> None:
        """Stop waiting for call `request_id`: its caller fails with `error` now, and its
        answer, if one comes, is dropped as an abandoned call's (a peer that was told to
        cancel a request need not answer it)."""
        future = self._pending.pop(request_id, None)
        if future is not None and not future.done():
            self._abandon(request_id)
            future.set_exception(error)

    def _abandon(self, request_id: RequestId) -> None:
        """Remember a call nobody waits for any more, so its late answer is not a fault."""
        self._abandoned[request_id] = None
        if len(self._abandoned) > _ABANDONED_KEPT:
            del self._abandoned[next(iter(self._abandoned))]

    # --- incoming ------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            # Ended from here (its stdin went unread): nothing it says can be answered now.
            while self._ended is None:
                item = await self._lines.read()
                if item is None:
                    break
                try:
                    self._dispatch(item)
                except Exception:  # boundary: one bad line or handler must not end the loop
                    _log.exception("dispatch failed on %s", self.name)
        except (ConnectionError, OSError) as exc:
            _log.info("reading from %s failed: %s", self.name, exc)
        error = ConnectionClosed(f"{self.name} closed the connection")
        if self._on_eof is not None and self._ended is None:
            try:
                error = await self._on_eof()
            except Exception:  # boundary: a failing callback still ends the connection
                _log.exception("on_eof failed for %s", self.name)
        self._end(error)

    def _stray(self, bad: BadLine) -> None:
        _log.info("%s: stray line on stdout (%s): %s", self.name, cut(bad.reason), cut(bad.preview))
        if self._on_stray is not None:
            self._on_stray(bad)

    def _dispatch(self, item: Envelope | BadLine) -> None:
        if isinstance(item, BadLine):
            if not (item.size and self._too_large(item)):
                self._stray(item)
            return
        if not is_envelope(item):
            self._stray(BadLine("JSON but not a JSON-RPC 2.0 message", ""))
            return
        method, request_id = item.method, item.id
        if isinstance(method, str):
            params = b"null" if isinstance(item.params, msgspec.UnsetType) else item.params
            if isinstance(request_id, (int, str)):
                self._incoming_request(request_id, method, params)
            else:
                self._incoming_notification(method, params)
            return
        future = self._pending.get(request_id) if isinstance(request_id, (int, str)) else None
        if future is None or future.done():
            if future is not None and future.cancelled():
                # Its caller was cancelled (a run ended mid-handshake) and has not yet run to
                # where it abandons the call: an abandoned call's late answer all the same.
                _log.info("%s answered cancelled call %r late; ignored", self.name, request_id)
                return
            if isinstance(request_id, (int, str)) and request_id in self._abandoned:
                del self._abandoned[request_id]
                _log.info("%s answered abandoned call %r late; ignored", self.name, request_id)
                return
            _log.info("%s answered unknown id %s; ignored", self.name, cut(repr(request_id)))
            if self._on_unexpected is not None and isinstance(request_id, (int, str)):
                self._on_unexpected(request_id)
            return
        if not isinstance(item.error, msgspec.UnsetType):
            future.set_exception(answered_error(self.name, item.error))
        elif not isinstance(item.result, msgspec.UnsetType):
            future.set_result(item.result)

    def _too_large(self, line: BadLine) -> bool:
        """Fail the call an over-long line answered; False when it answers none waiting."""
        request_id = answered_id(line.head, line.tail)
        future = self._pending.get(request_id) if request_id is not None else None
        if future is None or future.done():
            return False
        _log.info(
            "%s answered call %s with %d bytes, past the line limit; the call fails",
            self.name,
            cut(repr(request_id)),
            line.size,
        )
        future.set_exception(
            TooLarge(
                f"{self.name} answered with {line.size / (1024 * 1024):,.1f} MiB on one line, past the "
                f"{MAX_LINE // (1024 * 1024)} MiB bingo keeps of one message; the answer was dropped",
                "ask for less at a time (a narrower call), or have the plugin answer in smaller pieces",
            )
        )
        return True

    def _incoming_notification(self, method: str, params: msgspec.Raw | bytes) -> None:
        entry = self._notifications.get(method)
        if entry is None:
            _log.info("%s sent unknown notification %s; ignored", self.name, cut(method))
            return
        decoder, handler = entry
        if params is TOO_DEEP:
            _log.info("%s sent %s with params %s; ignored", self.name, cut(method), NESTED)
            return
        try:
            handler(decoder.decode(params))
        except msgspec.DecodeError as exc:
            _log.info("%s sent %s with bad params: %s", self.name, method, cut(str(exc)))

    def _incoming_request(self, request_id: RequestId, method: str, params: msgspec.Raw | bytes) -> None:
        entry = self._requests.get(method)
        if entry is None:
            self._answer_error(request_id, error_object(MethodNotFound(f"no method {cut(method)}")))
            return
        decoder, handler = entry
        if params is TOO_DEEP:
            self._answer_error(request_id, error_object(BadParams(f"params {NESTED}")))
            return
        try:
            decoded = decoder.decode(params)
        except msgspec.DecodeError as exc:
            self._answer_error(request_id, error_object(BadParams(str(exc))))
            return
        self._spawn(self._handle(request_id, handler, decoded))

    async def _handle(self, request_id: RequestId, handler: RequestHandler, params: object) -> None:
        try:
            result = await handler(params)
        except Exception as exc:  # boundary: the one exception → wire error crossing
            self._answer_error(request_id, error_object(exc))
            return
        try:
            self._write(Response(id=request_id, result=result))
        except PluginError as exc:
            if exc is not self._ended:  # once it has ended, nothing is answered: no news
                _log.info("cannot answer %s: %s", self.name, exc.message)

    def _answer_error(self, request_id: RequestId, error: ErrorObject) -> None:
        try:
            self._write(ErrorResponse(id=request_id, error=error))
        except PluginError as exc:
            if exc is not self._ended:  # once it has ended, nothing is answered: no news
                _log.info("cannot answer %s: %s", self.name, exc.message)
