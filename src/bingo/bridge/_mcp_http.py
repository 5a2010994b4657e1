"""MCP's Streamable HTTP transport, as the pair of streams a Connection reads and writes.

Owns the HTTP side of an MCP server declared with `url`: each message the connection writes
is one POST (`Accept: application/json, text/event-stream`), and what comes back, a JSON
body or an SSE stream of messages, is fed line by line into the reader the connection reads,
so the connection, the adapter above it (`_mcp.py`) and everything above that are the ones a
stdio server has. It keeps the server's `Mcp-Session-Id`, sends `MCP-Protocol-Version` once
the handshake set it, opens the GET stream for what the server says unasked (a 405 means it
has none), and ends the session with a DELETE when it is closed.

A server it cannot reach, or a session the server forgot (404), ends the stream, as a
process that dies does: the plugin's handle says so once and starts it again on next use,
with its backoff. An HTTP error answering a request fails that one request with the status.
What it buffers is bounded as a pipe's is (ADR-0028): an SSE line or event, or a JSON body,
longer than the longest line (`_framing.MAX_LINE`) is thrown away as it arrives and fails its
request at once (on the GET stream, where no request waits, it is dropped); of an error
answer's body the first ERROR_TEXT bytes are read and no more.

A server that answers 401 is signed in to (`_signin.py`, INTERFACE §14): each request
carries the kept sign-in's token, a 401 is refreshed once and the request sent again, and a
server that still needs a sign-in ends the stream with the line naming `bingo mcp login`.
That module is imported only when a server needs it (a 401, or a sign-in kept for it).

It does not speak MCP's methods (`_mcp.py` does) and imports httpx only when an HTTP server
is started (ADR-0006's lazy import).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import msgspec

from ..endpoint import MAX_LINE
from ..kernel.errors import BingoError
from ..kernel.lines import Overlong, bounded_lines, head_bytes
from ..kernel.log import cut
from ._desk import Ask, SignInDesk

if TYPE_CHECKING:
    import httpx

    from ..kernel.interfaces import Json
    from ._signin import SignIn

__all__ = ["McpHttp", "SignInDesk", "SignInPlace", "expand_headers"]

_log = logging.getLogger(__name__)

CONNECT_TIMEOUT: Final = 10.0
"""Seconds to reach the server; the wait for an answer is the connection's deadline."""
_CLOSE_TIMEOUT: Final = 2.0
"""Seconds the DELETE that ends a session may take at shutdown."""
ERROR_TEXT: Final = 300
"""Bytes of an HTTP error answer's body read (and shown, cut, in the call's error)."""
_MODERN: Final = "2026-07-28"
"""The stateless revision, whose requests carry routing headers and no session."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_headers(headers: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """`headers` with each `${NAME}` replaced by that environment variable (empty when
    unset), so a token can stay out of the file: `"Authorization": "Bearer ${API_TOKEN}"`."""
    return {key: _VARIABLE.sub(lambda m: environ.get(m.group(1), ""), value) for key, value in headers.items()}


class _Named(msgspec.Struct):
    name: str | None = None
    uri: str | None = None


class _Sent(msgspec.Struct):
    """What the transport reads of a message it sends: which request it is, if one, and
    what it names (for the stateless revision's routing headers)."""

    method: str | None = None
    id: int | str | None = None
    params: _Named | None = None

    @classmethod
    def read(cls, body: bytes) -> _Sent:
        try:
            return _SENT.decode(body)
        except msgspec.DecodeError:
            return cls()


_SENT = msgspec.json.Decoder(_Sent)


@dataclass(frozen=True, slots=True)
class SignInPlace:
    """What a server's sign-in needs, should it need one (INTERFACE §14)."""

    store: Path
    """Where sign-ins are kept (`~/.bingo/data/oauth`)."""
    settings: Mapping[str, Json]
    """The server's `plugins.<name>` slice (its `oauth`)."""
    environ: Mapping[str, str]
    say: Callable[[str], None]
    """Says a line to the person (the sign-in's URL)."""
    desk: SignInDesk | None = None
    """Where the person is asked whether to sign in; None: nowhere (`bingo --check-plugin`)."""
    readable: frozenset[str] | None = None
    """The variables `oauth.clientSecretEnv` may name: a project's server, the person's
    `mcpVariables` (ADR-0028); None: any (the person's own server)."""


class McpHttp:
    """A Streamable HTTP MCP server as a reader and a writer. Use as `async with`; `reader`
    is what the connection reads, and the object itself is its writer."""

    def __init__(self, url: str, headers: Mapping[str, str], *, name: str, sign_in: SignInPlace | None = None) -> None:
        self.url = url
        self.reader = asyncio.StreamReader(limit=MAX_LINE)
        self.why: str | None = None
        """Why the stream ended, once it has."""
        self._headers = dict(headers)
        self._name = name
        self._session: str | None = None
        self._revision: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._group = asyncio.TaskGroup()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._listening = False
        self._place = sign_in
        self._sign_in: SignIn | None = None

    async def __aenter__(self) -> McpHttp:
        import httpx

        self._client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT), follow_redirects=False)
        await self._group.__aenter__()
        place = self._place
        if place is not None and "authorization" not in {key.lower() for key in self._headers}:
            from ._oauth_store import GrantStore

            if GrantStore(place.store).has(self._name):
                self._signing()  # a sign-in is kept: the first request carries it
        return self

    def _signing(self) -> SignIn | None:
        """The server's sign-in, made the first time it is needed (its module with it)."""
        place = self._place
        if self._sign_in is None and place is not None and self._client is not None:
            from ._oauth_store import GrantStore
            from ._signin import OAuthSettings, SignIn

            self._sign_in = SignIn(
                self._name,
                self.url,
                store=GrantStore(place.store),
                config=OAuthSettings.read(self._name, place.settings),
                environ=place.environ,
                client=self._client,
                say=place.say,
                offer=self._offer,
                readable=place.readable,
            )
        return self._sign_in

    def _offer(self, challenge: str | None) -> bool:
        """Put the question whether to sign in (once a run, on a terminal); whether it is put."""
        place = self._place
        if place is None or place.desk is None:
            return False
        from ._signin import ask_and_sign_in

        name, url = self._name, self.url

        def sign_in(ask: Ask) -> Coroutine[Any, Any, None]:
            return ask_and_sign_in(name, url, place=place, ask=ask, challenge=challenge)

        return place.desk.offer(name, sign_in)

    async def _authorization(self) -> dict[str, str]:
        sign_in = self._sign_in
        return await sign_in.header() if sign_in is not None else {}

    async def __aexit__(self, *exc_info: object) -> None:
        self._closing = True
        client = self._client
        if client is not None and self._session is not None:
            try:
                async with asyncio.timeout(_CLOSE_TIMEOUT):
                    await client.delete(self.url, headers={**self._request_headers(), **await self._authorization()})
            except Exception as exc:  # boundary: a session's end is a courtesy, never a failure
                _log.info("%s: ending the MCP session failed: %s", self._name, exc)
        self._end("was closed by the host")
        for task in list(self._tasks):
            task.cancel()
        await self._group.__aexit__(None, None, None)
        if client is not None:
            await client.aclose()

    # --- the writer the connection writes to ------------------------------------------

    def write(self, data: bytes) -> None:
        if self.why is not None:
            raise ConnectionError(f"the MCP server at {self.url} {self.why}")
        for line in data.splitlines():
            if line.strip():
                self._spawn(self._post(line))

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._end("was closed by the host")

    def is_closing(self) -> bool:
        return self.why is not None

    # --- HTTP ----------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = self._group.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _request_headers(self, sent: _Sent | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **self._headers}
        if self._session is not None:
            headers["Mcp-Session-Id"] = self._session
        if self._revision is not None:
            headers["MCP-Protocol-Version"] = self._revision
        if self._revision == _MODERN and sent is not None and sent.method is not None:
            # The stateless revision routes by headers: the method, and what it names.
            headers["Mcp-Method"] = sent.method
            named = sent.params.name or sent.params.uri if sent.params is not None else None
            if named:
                headers["Mcp-Name"] = named
        return headers

    def _end(self, why: str) -> None:
        if self.why is None:
            self.why = why
            self.reader.feed_eof()

    def _feed(self, message: bytes) -> None:
        if self.why is None and message.strip():
            self.reader.feed_data(message.strip() + b"\n")

    def _fail(self, request_id: int | str | None, message: str) -> None:
        """Answer request `request_id` with an error, as the server would have."""
        if request_id is not None:
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": message}}
            self._feed(json.dumps(error).encode())

    async def _post(self, body: bytes) -> None:
        import httpx

        sent = _Sent.read(body)
        method = sent.method
        request_id = sent.id if method is not None else None  # an answer of ours is no request
        if method == "server/discover":
            self._revision = _MODERN  # asked in that revision, and answered in it or refused
        assert self._client is not None
        try:
            for attempt in range(2):  # a second time only after a 401 was signed in to
                signed = await self._authorization()
                async with self._client.stream(
                    "POST", self.url, content=body, headers={**self._request_headers(sent), **signed}
                ) as response:
                    if response.status_code == 401 and attempt == 0 and await self._unauthorized(response, signed):
                        continue
                    await self._answered(response, method, request_id)
                return
        except httpx.TransportError as exc:
            self._end(f"cannot be reached at {self.url}: {type(exc).__name__}: {exc}".rstrip(": "))
        except BingoError as exc:  # the sign-in's settings, or a sign-in that failed
            self._end(exc.line())

    async def _unauthorized(self, response: httpx.Response, signed: Mapping[str, str]) -> bool:
        """A 401: True to send the request again (refreshed, or signed in); False when the
        401 is the answer (no sign-in is possible: the stream ended, saying why)."""
        if self._place is None or "authorization" in {key.lower() for key in self._headers}:
            return False  # the person's own header: their token, not bingo's to renew
        sign_in = self._signing()
        assert sign_in is not None
        if await sign_in.unauthorized(signed, response.headers.get("www-authenticate")):
            return True
        self._end(sign_in.why or "needs a sign-in")
        return False

    async def _answered(self, response: httpx.Response, method: str | None, request_id: int | str | None) -> None:
        """Feed what the server answered to a request of `method` (`request_id`)."""
        session = response.headers.get("mcp-session-id")
        if session:
            self._session = session
        if response.status_code == 404 and self._session is not None:
            self._end(f"forgot the session (HTTP 404): {self.url}")
            return
        if response.status_code >= 400:
            text = (await head_bytes(response.aiter_bytes(), ERROR_TEXT)).decode("utf-8", "replace")
            self._fail(request_id, f"HTTP {response.status_code} from {self.url}: {cut(text)}")
            return
        if response.status_code == 202 or request_id is None:
            if method == "notifications/initialized":
                self._spawn(self._listen())
            return
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            too_long = await self._events(response, initialize=method == "initialize")
            if too_long is not None:
                self._fail(request_id, self._too_long(too_long))
        else:
            data = await _bounded(response)
            if data is None:
                self._fail(request_id, self._too_long(MAX_LINE + 1))
                return
            self._learn(data, method == "initialize")
            self._feed(data)

    def _too_long(self, size: int) -> str:
        _log.info("%s: an event of %d bytes or more from %s was dropped", self._name, size, self.url)
        return f"the answer from {self.url} has an event longer than the {MAX_LINE // (1024 * 1024)} MiB bingo keeps of one message; it was dropped"

    async def _events(self, response: httpx.Response, *, initialize: bool) -> int | None:
        """Feed each SSE event's data, as one message, until the stream ends; or stop at an
        event longer than MAX_LINE and answer its size (nothing of it was kept)."""
        data: list[bytes] = []
        size = 0
        async for line in bounded_lines(response.aiter_bytes(), MAX_LINE):
            if isinstance(line, Overlong):
                return line.size
            if line.startswith(b"data:"):
                piece = line[5:].removeprefix(b" ")
                size += len(piece) + 1
                if size > MAX_LINE:
                    return size
                data.append(piece)
            elif not line and data:
                message = b"\n".join(data)
                data, size = [], 0
                self._learn(message, initialize)
                self._feed(message)
        if data:
            self._feed(b"\n".join(data))
        return None

    def _learn(self, message: bytes, initialize: bool) -> None:
        """The revision the handshake settled, for the header every later request carries."""
        if not initialize:
            return
        try:
            value = json.loads(message)
            revision = value["result"]["protocolVersion"]
        except (ValueError, KeyError, TypeError):
            return
        if isinstance(revision, str):
            self._revision = revision

    async def _listen(self) -> None:
        """The GET stream: what the server says unasked (list_changed, a log message)."""
        import httpx

        if self._listening or self._closing:
            return
        self._listening = True
        assert self._client is not None
        headers = {**self._request_headers(), "Accept": "text/event-stream", **await self._authorization()}
        try:
            async with self._client.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    return  # 405: this server has no stream of its own
                too_long = await self._events(response, initialize=False)
                if too_long is not None:
                    _log.info(
                        "%s: the GET stream sent an event of %d bytes or more; it was closed", self._name, too_long
                    )
        except httpx.TransportError as exc:
            _log.info("%s: the GET stream ended: %s", self._name, exc)


async def _bounded(response: httpx.Response) -> bytes | None:
    """The body, or None past MAX_LINE bytes."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_LINE:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
