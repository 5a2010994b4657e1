"""The skeleton both built-in providers share: one streamed POST, its events, and the one
place where everything httpx can raise becomes a ProviderError.

Owns `HttpProvider` (a request body out, the answer's events into a `Reader`, one
ModelResponse back), the timeouts, the client's lifetime (one `httpx.AsyncClient` per
response, closed when the response ends or its task is cancelled), the reading of an error
body, and the wording of every failure: a transport's, a status's, a malformed stream's, a
failure the API reports mid-answer. Each is a line naming the provider and what failed,
and a hint naming the environment variable to check. It also runs the retry (ADR-0020): a
failure the service calls momentary (`_retry.Transient`) is tried again as `_retry.Retry`
says, with one notice per wait, and never once any of the answer has reached the person;
what is momentary and how long to wait are `_retry`'s. What a service can make it hold or
wait for is bounded (ADR-0028): an error body is read up to ERROR_BODY_MAX and no further,
a line of the stream past `_sse.EVENT_MAX` ends the answer, and an answer that goes
`stall_seconds` without an event that carries content (keep-alive comments and pings do not
count) ends the turn. It does not know either API's shapes:
the provider modules hold their URL, headers, request body and event parsing, declared as
one `Api` each. It does not decide which provider runs (`selection.py`).

httpx is imported inside the functions that use it, so that importing `bingo.providers`
costs nothing until a model is actually asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeVar

import msgspec

from ..kernel.errors import ProviderError
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
from ._names import ToolNames, request_names
from ._retry import RETRY_STATUSES, Retry, Transient, retry_after
from ._sse import EVENT_MAX, ServerEvent, TooLarge, events

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CONNECT_TIMEOUT",
    "ERROR_BODY_MAX",
    "READ_TIMEOUT",
    "STALL_SECONDS",
    "Api",
    "Endpoint",
    "HttpProvider",
    "Reader",
    "answer",
    "broke_off",
    "decode",
    "failed_mid_answer",
    "malformed",
    "open_events",
    "status_error",
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

_DETAIL_LIMIT = 200
"""An API's error message is cut to this many characters so the line stays a line."""


class Endpoint(msgspec.Struct, frozen=True):
    """Where one provider sends a request, and the names its error lines use."""

    provider: str
    url: str
    headers: dict[str, str]
    key_env: str
    base_env: str


class _ErrorDetail(msgspec.Struct):
    message: str = ""
    type: str = ""


class _ErrorBody(msgspec.Struct):
    # Both APIs answer `{"error": {"message": ..., "type": ...}}`; anything else is shown raw.
    error: _ErrorDetail | str | None = None


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _DETAIL_LIMIT else line[: _DETAIL_LIMIT - 1] + "…"


def _detail(content: bytes, reason: str) -> str:
    try:
        body = msgspec.json.decode(content, type=_ErrorBody)
    except (msgspec.DecodeError, RecursionError):  # RecursionError: nested too deeply to skip
        text = content.decode("utf-8", "replace").strip()
        return _one_line(text) if text else reason
    match body.error:
        case _ErrorDetail(message=message) if message:
            return _one_line(message)
        case str(message) if message:
            return _one_line(message)
        case _:
            return reason


def _status_hint(endpoint: Endpoint, status: int) -> str:
    if status in (401, 403):
        return f"check {endpoint.key_env}"
    if status == 404:
        return f"check the model name and {endpoint.base_env}"
    if status == 429:
        return "the service is rate limiting: wait a moment and try again"
    if status == 529:
        return "the service is overloaded: try again later"
    if status >= 500:
        return "the service failed: try again later"
    return "the request was refused: check the model name and settings"


def status_error(
    endpoint: Endpoint,
    status: int,
    content: bytes,
    reason: str,
    headers: Mapping[str, str] | None = None,
) -> ProviderError:
    """The error for an HTTP answer that is not a success: a Transient one for a status
    worth another try, unless the server said `x-should-retry: false`."""
    detail = _detail(content, reason or "no reason given")
    message = f"{endpoint.provider} answered HTTP {status}: {detail}"
    hint = _status_hint(endpoint, status)
    headers = headers or {}
    words = RETRY_STATUSES.get(status, "server error" if status >= 500 else None)
    if words is None or headers.get("x-should-retry", "").lower() == "false":
        return ProviderError(message, hint)
    return Transient(message, hint, why=f"{words} ({status})", after=retry_after(headers))


def malformed(endpoint: Endpoint, what: str) -> ProviderError:
    """The error for a stream that does not follow the API's format."""
    return ProviderError(
        f"{endpoint.provider} sent a malformed stream: {_one_line(what)}",
        f"check that {endpoint.base_env} points at a compatible server",
    )


def failed_mid_answer(endpoint: Endpoint, what: str, kind: str = "", transient: str = "") -> ProviderError:
    """The error for a failure the API reports inside its stream (an error event): `kind`
    is the API's name for it, and `transient` the notice's words when the API calls that
    kind momentary (then the error is a Transient one)."""
    named = f"{what} ({kind})" if kind and kind != what else what
    message = f"{endpoint.provider} failed mid-answer: {named}"
    if transient:
        return Transient(message, "try again later", why=f"{transient} ({kind})")
    return ProviderError(message, "try again later")


def broke_off(endpoint: Endpoint, what: str) -> ProviderError:
    """The error for a stream that ended before the API said the answer was whole (the
    connection closed cleanly mid-answer)."""
    return ProviderError(f"{endpoint.provider}'s answer broke off: {what}", "try again later")


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


def _transport_error(endpoint: Endpoint, exc: Exception, read_timeout: float) -> ProviderError:
    import httpx

    reason = _one_line(str(exc)) or type(exc).__name__
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
            return Transient(
                f"{endpoint.provider}'s connection failed mid-answer ({reason})",
                retry,
                why="connection dropped",
            )
        case _:
            return ProviderError(f"{endpoint.provider}'s connection failed mid-answer ({reason})", retry)


@contextlib.asynccontextmanager
async def open_events(
    endpoint: Endpoint,
    body: bytes,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    read_timeout: float = READ_TIMEOUT,
) -> AsyncGenerator[AsyncIterator[ServerEvent]]:
    """POST `body` (JSON) to the endpoint and yield the answer's events.

    Every httpx failure, whether opening the response or reading it in the body of the
    `async with`, leaves as a ProviderError; ProviderErrors the body raises pass through.
    Cancelling the task closes the response and the client on the way out.

    Raises:
        ProviderError: the server could not be reached, answered an error status, went
            silent, or broke the connection.
    """
    import httpx

    timeout = httpx.Timeout(connect=CONNECT_TIMEOUT, read=read_timeout, write=read_timeout, pool=CONNECT_TIMEOUT)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers.update(endpoint.headers)
    try:
        async with httpx.AsyncClient(timeout=timeout, transport=transport) as client:
            async with client.stream("POST", endpoint.url, content=body, headers=headers) as response:
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
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise _transport_error(endpoint, exc, read_timeout) from exc
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


def _seconds(wait: float) -> str:
    return f"{wait:.1f} s"


class HttpProvider:
    """A built-in provider as a kernel Provider: each response is one streamed POST of the
    API's body, whose events a fresh reader turns into deltas and a response; a momentary
    failure before anything was shown is tried again as `retry` says, each wait said on
    `notices`. A subclass only declares its `api`."""

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

    @property
    def spec(self) -> ProviderSpec:
        return self.api.spec

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
        while True:
            tries += 1
            try:
                return await self._once(body, names, forward)
            except Transient as exc:
                # Once any of the answer reached the person, another try would show a
                # second, different answer after the first: the turn fails instead.
                if shown:
                    raise
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
                    self._endpoint, body, transport=self._transport, read_timeout=self._read_timeout
                ) as stream:
                    async for event in stream:
                        if reader.feed(event):
                            stall.reschedule(loop.time() + self._stall)
                        if reader.done:
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
