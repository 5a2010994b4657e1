"""The skeleton both built-in providers share: one streamed POST over the provider's one
HTTP client, its events, and the one place where everything httpx can raise becomes a
ProviderError.

Owns `HttpProvider` (a request body out, the answer's events into a `Reader`, one
ModelResponse back), the timeouts, the client's lifetime (ADR-0040: one `httpx.AsyncClient`
per provider, made at its first request and kept until `aclose`, so every step and turn
after the first reuses its connection, SSL context included), the reading of an error
body, and the wording of a transport's failure (the other failures' is `_errors`'s). It
also runs the retry (ADR-0020): a failure the service calls momentary
(`_retry.Transient`) is tried again as `_retry.Retry` says, with one notice per wait, and
never once any of the answer has reached the person; what is momentary and how long to
wait are `_retry`'s. A request the server dropped unanswered on a connection kept from an
earlier answer (it had closed the idle connection as the request went out) is sent again
at once, unsaid. What a service can make it hold or wait for is bounded (ADR-0028): an
error body is read up to ERROR_BODY_MAX and no further, a line of the stream past
`_sse.EVENT_MAX` ends the answer, an answer that goes `stall_seconds` without an event
that carries content (keep-alive comments and pings do not count) ends the turn, and what
follows an answer already whole is read for DRAIN_SECONDS at most. It does not know either
API's shapes: the provider modules hold their URL, headers, request body and event
parsing, declared as one `Api` each. It does not decide which provider runs
(`selection.py`).

httpx is imported inside the functions that use it, so that importing `bingo.providers`
costs nothing until a model is actually asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

import msgspec

from ..kernel.errors import ProviderError
from ..kernel.interfaces import REQUEST_SENT
from ..kernel.lines import bounded_lines, head_bytes
from ..kernel.notices import Notices
from ..kernel.registry import BUILTIN
from ..wire import (
    MAX_DEPTH,
    Block,
    Delta,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderSpec,
    StopReason,
    ToolUseBlock,
    Usage,
    too_deep,
)
from ._errors import Endpoint, malformed, one_line, status_error
from ._names import ToolNames, request_names
from ._retry import Retry, Transient
from ._sse import EVENT_MAX, ServerEvent, TooLarge, events
from ._tls import Tls

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = [
    "CONNECT_TIMEOUT",
    "DRAIN_SECONDS",
    "ERROR_BODY_MAX",
    "KEEPALIVE_SECONDS",
    "READ_TIMEOUT",
    "STALL_SECONDS",
    "Api",
    "HttpProvider",
    "Reader",
    "answer",
    "decode",
    "open_events",
    "tool_input",
]

T = TypeVar("T")

_log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection: a server that has not accepted by then is not there."""

READ_TIMEOUT = 60.0
"""Longest silence, in seconds, between two reads of a streamed answer. A model may think
for a while before its first token, so this is generous; it is a constant, not a setting,
until settings grow a key for it (the wire's `provider/stream` deadline is about plugins)."""

STALL_SECONDS = 300.0
"""Longest wait, in seconds, for an event that carries content (`modelStallSeconds`): a
server sending keep-alive comments or pings resets the read timeout for ever, and only
content (text, a tool call's input, a stop, usage) resets this one. Five minutes, since a
reasoning model may say nothing for a few before its first token."""

ERROR_BODY_MAX = 64 * 1024
"""Bytes of an error answer's body read (64 KiB): both APIs' error objects are a few hundred
bytes, and its message is cut to a line anyway; the rest is never read."""

KEEPALIVE_SECONDS = 60.0
"""How long an idle connection is kept for the next request (httpx keeps one 5 s): longer
than a tool's run or a person's reading between turns. A server that closes it sooner is
seen to have (the pool drops a connection the server closed), and the request that meets
the close as it goes out is sent again (`_Unanswered`)."""

DRAIN_SECONDS = 0.25
"""Longest wait for the rest of an answer the API has called whole (the end of its chunked
body, a `[DONE]`), read so that the connection can carry the next request: a server sends
it with the last event. One still open after this loses the connection, not the answer."""

_DRAIN_EVENTS = 8
"""Events read after an answer is whole before its connection is given up as well."""


def decode(endpoint: Endpoint, decoder: msgspec.json.Decoder[T], data: str, what: str) -> T:
    """One event's data, decoded; a malformed stream (`what: why`) when it does not fit."""
    try:
        return decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise malformed(endpoint, f"{what}: {exc}") from None
    except RecursionError:
        # Events decode into shallow types (no JSON-valued field): only skipping a member
        # nested deeper than the stack allows can recurse this far.
        raise malformed(endpoint, f"{what}: nested too deeply") from None


def tool_input(endpoint: Endpoint, pieces: list[str], broken: str) -> Json:
    """A tool call's input from the JSON pieces it was streamed in (none: `{}`); a malformed
    stream, worded `broken`, when they do not join into JSON."""
    raw = "".join(pieces).strip() or "{}"
    if too_deep(raw):
        raise malformed(endpoint, f"{broken}: nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        return msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise malformed(endpoint, broken) from None


def answer(content: list[Block], stop: StopReason, usage: Usage | None) -> ModelResponse:
    """The assistant's whole response. A plain end with tool calls in it is a toolUse:
    compatible servers answer `stop` even when they asked for tools."""
    if stop == "end" and any(isinstance(block, ToolUseBlock) for block in content):
        stop = "toolUse"
    return ModelResponse(message=Message(role="assistant", content=content), stop_reason=stop, usage=usage)


class _Unanswered(Transient):
    """The connection dropped before the server answered anything: on a connection kept
    from an earlier answer, what a server closing it while idle looks like when the close
    meets the request on its way (keep-alive's race)."""


def _transport_error(endpoint: Endpoint, exc: Exception, read_timeout: float, answered: bool) -> ProviderError:
    import httpx

    reason = one_line(str(exc)) or type(exc).__name__
    retry = "try again later"
    match exc:
        case httpx.ConnectTimeout() | httpx.PoolTimeout():
            return ProviderError(
                f"{endpoint.provider} did not accept a connection within {CONNECT_TIMEOUT:g} s at {endpoint.url}",
                f"check {endpoint.base_env} and your network",
            )
        case httpx.ReadTimeout() | httpx.WriteTimeout():
            return ProviderError(f"{endpoint.provider} sent nothing for {read_timeout:g} s", retry)
        case httpx.ConnectError() | httpx.UnsupportedProtocol() | httpx.InvalidURL():
            return ProviderError(
                f"cannot reach {endpoint.provider} at {endpoint.url} ({reason})",
                f"check {endpoint.base_env} and your network",
            )
        case httpx.RemoteProtocolError() | httpx.ReadError():
            # The connection dropped: momentary, if it dropped before anything was shown.
            dropped = Transient if answered else _Unanswered
            return dropped(
                f"{endpoint.provider}'s connection failed mid-answer ({reason})",
                retry,
                why="connection dropped",
            )
        case _:
            return ProviderError(f"{endpoint.provider}'s connection failed mid-answer ({reason})", retry)


async def _drain(stream: AsyncIterator[ServerEvent]) -> None:
    """Read what is left of an answer already whole (the end of its body, a `[DONE]`), so
    that its connection goes back to the pool for the next request. Gives up, and the
    connection closes with the response, past _DRAIN_EVENTS events, DRAIN_SECONDS, or any
    failure: the answer is whole whatever comes after it."""
    import httpx

    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            for _ in range(_DRAIN_EVENTS):
                if await anext(stream, None) is None:
                    return
    except (TimeoutError, TooLarge, httpx.HTTPError):
        pass


@contextlib.asynccontextmanager
async def open_events(
    endpoint: Endpoint,
    body: bytes,
    *,
    client: httpx.AsyncClient,
    read_timeout: float = READ_TIMEOUT,
    sent: Callable[[], None] | None = None,
) -> AsyncGenerator[AsyncIterator[ServerEvent]]:
    """POST `body` (JSON) to the endpoint on `client` and yield the answer's events; once
    the body of the `async with` ends, what is left of the answer is drained (`_drain`) so
    that the connection can carry the next request. `sent` is called once the request is
    written whole (httpx's `trace` extension), before the answer is waited for.

    Every httpx failure, whether opening the response or reading it in the body of the
    `async with`, leaves as a ProviderError; ProviderErrors the body raises pass through.
    Cancelling the task closes the response on the way out, and with it the connection
    (the pool never hands on one whose answer was not read to its end).

    Raises:
        ProviderError: the server could not be reached, answered an error status, went
            silent, or broke the connection.
    """
    import httpx

    timeout = httpx.Timeout(connect=CONNECT_TIMEOUT, read=read_timeout, write=read_timeout, pool=CONNECT_TIMEOUT)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers.update(endpoint.headers)
    answered = False
    extensions: dict[str, object] = {}
    if sent is not None:
        said = sent

        async def trace(event: str, _: object) -> None:
            if event.endswith(".send_request_body.complete"):  # http11. or http2.
                said()

        extensions["trace"] = trace
    try:
        async with client.stream(
            "POST", endpoint.url, content=body, headers=headers, timeout=timeout, extensions=extensions
        ) as response:
            answered = True
            if response.status_code >= 400:
                content = await head_bytes(response.aiter_bytes(), ERROR_BODY_MAX)
                raise status_error(
                    endpoint,
                    response.status_code,
                    content,
                    response.reason_phrase,
                    response.headers,
                )
            lines = bounded_lines(response.aiter_bytes(), EVENT_MAX)
            async with contextlib.aclosing(events(lines)) as stream:
                yield stream
                await _drain(stream)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise _transport_error(endpoint, exc, read_timeout, answered) from exc
    except TooLarge:
        raise ProviderError(
            f"{endpoint.provider} sent an event longer than the {EVENT_MAX // (1024 * 1024)} MiB "
            "bingo keeps of one; the answer was dropped",
            f"check that {endpoint.base_env} points at a compatible server",
        ) from None


class Reader(Protocol):
    """One API's reading of one answer: its events in, deltas out as they arrive, and the
    whole response at the end. `done` is set once the API has said the answer is whole,
    after which no more events are read."""

    done: bool
    notes: list[str]
    """Lines for the person about this answer, said once it is whole (an answer a content
    filter stopped looks like any other end to the kernel)."""

    def feed(self, event: ServerEvent) -> bool:
        """Take one event into the response; whether it carried content (a ping, a
        keep-alive or an empty delta does not).

        Raises:
            ProviderError: the event is malformed, or reports a failure.
        """
        ...

    def response(self) -> ModelResponse:
        """The whole response, once the events have ended.

        Raises:
            ProviderError: the stream ended before the answer was whole.
        """
        ...


class Api(msgspec.Struct, frozen=True):
    """All that one built-in provider's API has of its own."""

    spec: ProviderSpec
    base_url: str
    """The base URL when none is configured."""
    path: str
    """Where requests go, below the base URL."""
    key_env: str
    base_env: str
    headers: Callable[[str | None], dict[str, str]]
    """The headers that carry an API key (or none)."""
    body: Callable[[ModelRequest, ToolNames], dict[str, Json]]
    """The request body, tool names sent as the table fits them."""
    reader: Callable[[Endpoint, Callable[[Delta], None], ToolNames], Reader]
    """A fresh reader for one answer."""


_CA_HINT = "SSL_CERT_FILE or SSL_CERT_DIR, where set, must name readable PEM certificates: fix it or unset it"


def _ca_source() -> str:
    """Where httpx reads the CA certificates from, as the person would name it."""
    import os

    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        if os.environ.get(name):
            return f"{name}={os.environ[name]}"
    return "certifi's bundle"


def _proxied() -> bool:
    """Whether a proxy is configured where httpx looks (the environment, and the system's
    settings on macOS and Windows): a plain-HTTP request may then go through TLS to it."""
    import urllib.request  # httpx imports it: nothing more to pay

    return bool(urllib.request.getproxies())


def _seconds(wait: float) -> str:
    return f"{wait:.1f} s"


class HttpProvider:
    """A built-in provider as a kernel Provider: each response is one streamed POST of the
    API's body over the provider's one client, whose events a fresh reader turns into
    deltas and a response; a momentary failure before anything was shown is tried again as
    `retry` says, each wait said on `notices`. The client is made at the first request and
    kept, with its connections, until `aclose` (it belongs to the event loop it was made
    on). A subclass only declares its `api`."""

    api: ClassVar[Api]

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        read_timeout: float = READ_TIMEOUT,
        stall_seconds: float = STALL_SECONDS,
        retry: Retry | None = None,
        notices: Notices | None = None,
        tls: Tls | None = None,
    ) -> None:
        api = self.api
        base = (base_url or api.base_url).rstrip("/")
        self._endpoint = Endpoint(
            provider=api.spec.name,
            url=base + api.path,
            headers=api.headers(api_key),
            key_env=api.key_env,
            base_env=api.base_env,
        )
        self._transport = transport
        self._read_timeout = read_timeout
        self._stall = stall_seconds
        self._retry = retry or Retry()
        self._notices = notices
        self._tls = tls
        self._client: httpx.AsyncClient | None = None
        self._kept = False  # an answer came on this client: a connection may be kept for the next

    @property
    def spec(self) -> ProviderSpec:
        return self.api.spec

    @property
    def plain(self) -> bool:
        """Whether the endpoint is plain HTTP (a model on this machine or the local network):
        its requests never use TLS, unless a proxy carries them."""
        return self._endpoint.url[:7].lower() == "http://"

    @property
    def source(self) -> str:
        return BUILTIN

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        """Stream one response, calling `on_delta` as its reader finds deltas; a momentary
        failure before the first delta is tried again (see `Retry`). Cancelling the task
        ends a wait between tries at once.

        Raises:
            ProviderError: the API could not be reached, refused, or sent a broken stream
                (after the last try, for a momentary failure).
        """
        names = request_names(request)
        body = msgspec.json.encode(self.api.body(request, names))
        shown = False

        def forward(delta: Delta) -> None:
            nonlocal shown
            shown = True
            on_delta(delta)

        attempts = max(1, self._retry.attempts)
        tries = 0
        resent = False
        while True:
            tries += 1
            kept = self._kept
            try:
                return await self._once(body, names, forward)
            except Transient as exc:
                # Once any of the answer reached the person, another try would show a
                # second, different answer after the first: the turn fails instead.
                if shown:
                    raise
                if isinstance(exc, _Unanswered) and kept and not resent:
                    # Most likely a kept connection the server closed as the request went
                    # out: sent again at once, on a new one, unsaid and not counted a try.
                    resent, tries = True, tries - 1
                    continue
                wait = self._retry.wait(tries, exc.after) if tries < attempts else None
                if wait is None:
                    raise self._gave_up(exc, tries) from None
                self._say(f"{exc.why}; retrying in {_seconds(wait)}, attempt {tries + 1} of {attempts}")
                await self._retry.sleep(wait)

    async def _once(self, body: bytes, names: ToolNames, on_delta: Callable[[Delta], None]) -> ModelResponse:
        reader = self.api.reader(self._endpoint, on_delta, names)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._stall) as stall:
                async with open_events(
                    self._endpoint, body, client=self._http(), read_timeout=self._read_timeout, sent=REQUEST_SENT.get()
                ) as stream:
                    self._kept = True
                    async for event in stream:
                        if reader.feed(event):
                            stall.reschedule(loop.time() + self._stall)
                        if reader.done:
                            stall.reschedule(None)  # whole: the drain that follows has its own bound
                            break
        except TimeoutError:
            raise ProviderError(
                f"{self._endpoint.provider} sent no content for {self._stall:g} s (only keep-alives, or nothing)",
                "try again later; modelStallSeconds in settings sets how long to wait",
            ) from None
        response = reader.response()
        for note in reader.notes:
            self._say(note)
        return response

    def _http(self) -> httpx.AsyncClient:
        """The provider's one client, made at its first request."""
        if self._client is None:
            import httpx

            # httpx's own limits but for how long an idle connection is kept.
            limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=KEEPALIVE_SECONDS)
            verify: ssl.SSLContext | bool
            if self.plain and not _proxied():
                # No request of this client uses TLS: no CA bundle is read for it (ADR-0043).
                # Should anything ask for TLS all the same, this context trusts nothing:
                # it fails, never connects unverified.
                import ssl

                verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            else:
                # The SSL context made beside start-up (ADR-0043), else the client's own.
                made = self._tls.context() if self._tls is not None else None
                verify = made if made is not None else True
            try:
                self._client = httpx.AsyncClient(transport=self._transport, limits=limits, verify=verify)
            except OSError as exc:  # the CA certificates named cannot be read (ssl.SSLError is one)
                raise ProviderError(
                    f"{self._endpoint.provider}: the CA certificates to check its server with cannot be read from {_ca_source()} ({exc.strerror or exc})",
                    _CA_HINT,
                ) from None
        return self._client

    async def aclose(self) -> None:
        """Close the client and the connections it keeps (nothing to do before the first
        request); a request after this makes a new client."""
        client, self._client, self._kept = self._client, None, False
        if client is not None:
            await client.aclose()

    def _gave_up(self, exc: Transient, tries: int) -> ProviderError:
        if exc.after is not None and exc.after > self._retry.longest:
            return ProviderError(exc.message, f"the service asks to wait {exc.after:.0f} s before trying again")
        if tries == 1:
            return ProviderError(exc.message, exc.hint)
        return ProviderError(f"{exc.message}; tried {tries} times", exc.hint)

    def _say(self, line: str) -> None:
        _log.info("%s: %s", self.api.spec.name, line)
        if self._notices is not None:
            self._notices.say(self.api.spec.name, line, "warning")
