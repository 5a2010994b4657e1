"""The proxy: the only way out of the sandbox, HTTP and HTTPS, in bingo's own process (ADR-0032).

Owns one listening socket (made by the caller, in the sandbox's network namespace) and every
connection accepted on it, as one `async with Proxy(...)`:
  - `CONNECT host:port` (HTTPS, and anything else over TCP): asked about, connected, answered
    `200`, then bytes relayed both ways (each side's end of stream passed on to the other)
    until both ends are done, either side fails, or nothing moves for `Limits.idle`;
  - a request in absolute form (`GET http://host:port/path HTTP/1.1`): asked about, sent
    upstream in origin form with `Host` set from the URL, hop-by-hop headers dropped
    (`Connection` and what it names, `Keep-Alive`, `Proxy-Connection`,
    `Proxy-Authorization`, `TE`, `Upgrade`) and `Connection: close` added; the request body
    streamed by its framing (`Content-Length` or chunked, passed on as it came), the response
    head relayed the same way and its body streamed by its own framing. One request per
    connection: the proxy answers `Connection: close` and closes once the response is
    through (clients open another; most traffic is CONNECT anyway).

Each request is decided by the caller's `decide(host, port)`; a refusal is `403` with one
line (from `refusal(host, port)`) as the reason phrase and as the body, so a client that shows
either shows the line. The proxy resolves names itself (it runs outside the sandbox, which
needs no DNS), and refuses on its own: a host that is no DNS name or IP literal (400), a
connection to its own listening address (403), and an address on this machine (loopback or
unspecified) reached through a name other than `localhost` (403: a granted name whose DNS
answer points at the person's own machine). Every port 1–65535 is decided by `decide`: a grant
names a host, not a service.

Bounds (`Limits`): a request or response head past 64 KiB (431 / 502), a client that has
not sent its head within `head` seconds (408, closed), an upstream connect (resolution
included) past `connect` seconds (504), a decision past `decide` seconds (refused), at most
`connections` connections at once (503 to the next), and no byte buffered beyond the stream
limits: every copy waits for the reader to take what it was given (drain) before reading more.

It does not know who is asking (the caller makes one `Proxy` per decision-maker), does no
TLS (CONNECT carries the client's own), and speaks no SOCKS.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType

from ._pattern import parse_host, shown

__all__ = ["Decide", "Limits", "Proxy", "Refusal", "refused"]

_log = logging.getLogger(__name__)

Decide = Callable[[str, int], Awaitable[bool]]
"""May a request reach `host` (canonical: lowercase, IPv6 unbracketed) on `port`?"""

Refusal = Callable[[str, int], str]
"""The one line a refused request gets (reason phrase and body) for `host`, `port`."""


def refused(host: str, port: int) -> str:
    """The default refusal line."""
    del port  # a grant names a host: every port on it
    return f"bingo's sandbox refused {shown(host)}: grant it in sandbox.network.allow"


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The proxy's bounds; the defaults are the product's, tests shrink them."""

    head_bytes: int = 64 * 1024
    """The longest request or response head (request line or status line and headers)."""
    head: float = 30.0
    """Seconds a client has, from connecting, to send its whole request head."""
    connect: float = 15.0
    """Seconds to resolve the host and connect to it."""
    decide: float = 600.0
    """Seconds `decide` may take (it may be asking a person) before the request is refused."""
    idle: float = 600.0
    """Seconds a relay may go with no byte moving either way before it is closed."""
    connections: int = 128
    """Connections served at once (each buffers at most ≈ 400 KiB: two stream readers and
    two transports' write buffers); the next one gets 503."""


_CHUNK = 256 * 1024
"""The most one read takes before it is written on (and drained)."""
_CLOSE_WAIT = 5.0
"""Seconds a closing transport has to flush its last bytes before it is aborted."""
_LINGER = 2.0
"""Seconds an early answer waits for the client to stop sending before closing."""
_LINGER_BYTES = 4 * 1024 * 1024
"""The most an early answer takes from the client (and drops) before closing."""
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_VERSION = re.compile(rb"HTTP/1\.[01]\Z")
_STATUS = re.compile(rb"(HTTP/1\.[01]) ([0-9]{3})(?: .*)?\Z")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})(?:[ \t]*;.*)?\Z")
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization", b"proxy-authenticate", b"te", b"upgrade", b"trailer"}
)
"""Headers that concern one connection (RFC 9110 §7.6.1), dropped both ways. `Trailer` only
announces trailers, which are passed on as they come."""
_REASONS = {
    400: "Bad Request", 403: "Forbidden", 408: "Request Timeout", 431: "Request Header Fields Too Large",
    501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    505: "HTTP Version Not Supported",
}


class _Reply(Exception):
    """Answer the client `status` with `line` and close (before anything else was sent)."""

    def __init__(self, status: int, line: str, *, reason: bool = False) -> None:
        super().__init__(line)
        self.status = status
        self.line = line
        self.reason = reason
        """The line is the reason phrase too (a refusal: clients show the phrase of a
        refused CONNECT and not its body)."""


class _Broken(Exception):
    """The exchange ended early (a peer went away or broke the framing): close both sides."""


@dataclass(frozen=True, slots=True)
class _Head:
    """A parsed request or response head: its first line and its headers."""

    first: bytes
    headers: list[tuple[bytes, bytes]]

    def values(self, name: bytes) -> list[bytes]:
        return [value for key, value in self.headers if key.lower() == name]


def _parse_head(raw: bytes) -> _Head | None:
    """Split a head (ending in CRLF CRLF) into its first line and headers; None when it is
    malformed (a line without a colon, folding, a bare CR or LF, a NUL)."""
    lines = raw[:-4].split(b"\r\n")
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.match(name) or any(c in value for c in b"\r\n\0"):
            return None
        headers.append((name, value.strip(b" \t")))
    if any(c in lines[0] for c in b"\r\n\0"):
        return None
    return _Head(lines[0], headers)


def _forwarded(head: _Head) -> list[tuple[bytes, bytes]]:
    """The headers a hop passes on: hop-by-hop ones, and what `Connection` names, dropped."""
    named = {token.strip().lower() for value in head.values(b"connection") for token in value.split(b",")}
    return [(k, v) for k, v in head.headers if k.lower() not in _HOP_BY_HOP and k.lower() not in named]


def _serialize(first: bytes, headers: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join([first, b"\r\n", *(k + b": " + v + b"\r\n" for k, v in headers), b"Connection: close\r\n\r\n"])


def _reply_bytes(status: int, line: str, *, reason: bool) -> bytes:
    body = (line + "\n").encode("utf-8")
    phrase = _REASONS.get(status, "Error")
    if reason and line.isascii() and line.isprintable():
        phrase = line
    return (
        f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("latin-1") + body


def _authority(text: str, default: int | None) -> tuple[str, int]:
    """(host, port) of `host[:port]` or `[v6][:port]`, the host canonical.

    Raises:
        _Reply: 400, no host, a port out of range, or a host that is no name or IP literal.
    """
    if text.startswith("["):
        end = text.find("]")
        host_text, rest = text[: end + 1], text[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            raise _Reply(400, "bingo's proxy could not read the host")
        port_text = rest[1:] if rest else None
    elif ":" in text:
        host_text, _, port_text = text.rpartition(":")
    else:
        host_text, port_text = text, None
    if port_text is None:
        if default is None:
            raise _Reply(400, "bingo's proxy needs a port after the host (CONNECT host:port)")
        port = default
    elif port_text.isascii() and port_text.isdigit() and len(port_text) <= 5 and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        raise _Reply(400, "bingo's proxy could not read the port (1 to 65535)")
    try:
        return parse_host(host_text), port
    except ValueError:
        raise _Reply(400, "bingo's proxy takes a host name or an IP address, and the host given is neither") from None


def _target(method: bytes, target: bytes) -> tuple[str, int, bytes, bytes]:
    """(host, port, the origin-form target, the Host header) of a request's target.

    Raises:
        _Reply: 400 or 501, a target that is not `http://host[:port][/path]` (or, for
            CONNECT, `host:port`).
    """
    try:
        text = target.decode("ascii")
    except UnicodeDecodeError:
        raise _Reply(400, "bingo's proxy could not read the request target") from None
    if method == b"CONNECT":
        host, port = _authority(text, None)
        return host, port, b"", b""
    scheme, sep, rest = text.partition("://")
    if not sep:
        raise _Reply(400, "bingo's proxy takes requests in absolute form (GET http://host/path) and CONNECT host:port")
    if scheme.lower() != "http":
        raise _Reply(501, f"bingo's proxy fetches http:// URLs itself; for {scheme[:16]}:// use CONNECT (an HTTPS proxy client does)")
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:].partition("#")[0]
    if "@" in authority:
        raise _Reply(400, "bingo's proxy does not pass credentials in the URL (user@host)")
    host, port = _authority(authority, 80)
    if not path.startswith("/"):
        path = "/" + path
    host_header = shown(host) if port == 80 else f"{shown(host)}:{port}"
    return host, port, path.encode("ascii"), host_header.encode("ascii")


def _content_length(head: _Head) -> int | None:
    """The body's length by `Content-Length`, None without one.

    Raises:
        _Reply: 400, lengths that are not one non-negative number.
    """
    values = {v.strip() for value in head.values(b"content-length") for v in value.split(b",")}
    if not values:
        return None
    if len(values) != 1 or not (one := values.pop()).isdigit() or len(one) > 18:
        raise _Reply(400, "bingo's proxy could not read the Content-Length")
    return int(one)


def _chunked(head: _Head) -> bool | None:
    """True: the last transfer coding is chunked; False: there is none; None: another."""
    codings = [c.strip().lower() for value in head.values(b"transfer-encoding") for c in value.split(b",") if c.strip()]
    if not codings:
        return False
    return True if codings[-1] == b"chunked" else None


class _Idle:
    """The relay's idle deadline: every byte that moves pushes it on."""

    __slots__ = ("_deadline", "_idle", "_loop")

    def __init__(self, deadline: asyncio.Timeout, idle: float) -> None:
        self._deadline = deadline
        self._idle = idle
        self._loop = asyncio.get_running_loop()

    def touch(self) -> None:
        self._deadline.reschedule(self._loop.time() + self._idle)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int, idle: _Idle) -> None:
    """Pass on exactly `n` bytes.

    Raises:
        _Broken: the stream ended first.
    """
    while n > 0:
        data = await reader.read(min(n, _CHUNK))
        if not data:
            raise _Broken("the stream ended inside a body")
        writer.write(data)
        n -= len(data)
        await writer.drain()
        idle.touch()


async def _copy_to_end(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, idle: _Idle) -> None:
    """Pass on every byte until the end of the stream."""
    while data := await reader.read(_CHUNK):
        writer.write(data)
        await writer.drain()
        idle.touch()


async def _line(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        raise _Broken("a chunk line did not end") from None


async def _copy_chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int, idle: _Idle) -> None:
    """Pass on a chunked body as it came, to its last chunk and trailers and no further.

    Raises:
        _Broken: the framing is broken or the stream ended first.
    """
    while True:
        line = await _line(reader)
        size = _CHUNK_SIZE.match(line[:-2])
        if size is None:
            raise _Broken("a chunk size could not be read")
        writer.write(line)
        n = int(size.group(1), 16)
        if n == 0:
            break
        await _copy(reader, writer, n, idle)
        end = await _line(reader)
        if end != b"\r\n":
            raise _Broken("a chunk did not end in CRLF")
        writer.write(end)
    trailers = 0
    while (line := await _line(reader)) != b"\r\n":
        trailers += len(line)
        if trailers > limit:
            raise _Broken("the trailers are too long")
        writer.write(line)
    writer.write(b"\r\n")
    await writer.drain()
    idle.touch()


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """After an early answer: end our side, then take (and drop) what the client still sends,
    for a bounded time and size. Closing with unread bytes would reset the connection, and a
    reset can destroy the answer before the client reads it."""
    try:
        if writer.can_write_eof():
            writer.write_eof()
        taken = 0
        async with asyncio.timeout(_LINGER):
            while taken < _LINGER_BYTES and (data := await reader.read(_CHUNK)):
                taken += len(data)
    except (OSError, TimeoutError):
        pass


async def _close(writer: asyncio.StreamWriter) -> None:
    """Close, letting the last bytes go for a bounded time, then abort."""
    writer.close()
    try:
        async with asyncio.timeout(_CLOSE_WAIT):
            await writer.wait_closed()
    except (OSError, TimeoutError):
        writer.transport.abort()
    except asyncio.CancelledError:
        writer.transport.abort()
        raise


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_local(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


class Proxy:
    """The proxy serving on `sock` (already listening; the proxy owns and closes it).

    Use as `async with Proxy(sock, decide)`, entered and left in one task (it holds a task
    group): it serves from entering to leaving; leaving closes the listener and every
    connection, tunnels included, and returns once every task it made is done.
    """

    def __init__(self, sock: socket.socket, decide: Decide, *, refusal: Refusal = refused, limits: Limits | None = None) -> None:
        self._sock = sock
        self._decide = decide
        self._refusal = refusal
        self._limits = limits or Limits()
        self._group = asyncio.TaskGroup()
        self._tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._closing = False
        name = sock.getsockname()
        self.address: tuple[str, int] = (str(name[0]), int(name[1]))
        """The listening address (host, port), as the sandboxed process reaches it."""

    async def __aenter__(self) -> Proxy:
        await self._group.__aenter__()
        try:
            self._server = await asyncio.start_server(self._accept, sock=self._sock, limit=self._limits.head_bytes)
        except BaseException:
            await self._group.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        del kind, exc, tb
        self._closing = True
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        try:
            # The body's own exception goes on as it is: handed to the group, 3.11 would
            # wrap it in an ExceptionGroup.
            await self._group.__aexit__(None, None, None)
        finally:
            if self._server is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_CLOSE_WAIT):
                        await self._server.wait_closed()

    @property
    def connections(self) -> int:
        """How many connections are being served now."""
        return len(self._tasks)

    def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._closing:
            writer.transport.abort()
            return
        if len(self._tasks) >= self._limits.connections:
            writer.write(_reply_bytes(503, "bingo's proxy has too many connections open; try again", reason=False))
            writer.close()
            return
        task = self._group.create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client connection, start to end; no exception leaves it (it would end the group)."""
        try:
            await self._exchange(reader, writer)
        except _Reply as reply:
            writer.write(_reply_bytes(reply.status, reply.line, reason=reply.reason))
            await _linger(reader, writer)
        except (_Broken, OSError, TimeoutError, asyncio.IncompleteReadError):
            pass
        except Exception:  # the connection's boundary: one bad exchange never ends the proxy
            _log.exception("bingo's proxy failed on a connection")
        finally:
            if self._closing:
                writer.transport.abort()
            else:
                await _close(writer)

    async def _head(self, reader: asyncio.StreamReader) -> _Head:
        try:
            async with asyncio.timeout(self._limits.head):
                raw = await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise _Reply(408, f"bingo's proxy had no request within {self._limits.head:g} s") from None
        except asyncio.LimitOverrunError:
            raise _Reply(431, f"bingo's proxy takes request heads of at most {self._limits.head_bytes // 1024} KiB") from None
        except asyncio.IncompleteReadError:
            raise _Broken("the client left before its request") from None
        head = _parse_head(raw)
        if head is None:
            raise _Reply(400, "bingo's proxy could not read the request head")
        return head

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await self._head(reader)
        parts = head.first.split(b" ")
        if len(parts) != 3:
            raise _Reply(400, "bingo's proxy could not read the request line")
        method, target, version = parts
        if not _TOKEN.match(method):
            raise _Reply(400, "bingo's proxy could not read the request method")
        if not _VERSION.match(version):
            raise _Reply(505, "bingo's proxy speaks HTTP/1.0 and HTTP/1.1")
        host, port, path, host_header = _target(method, target)
        length = chunked = None
        if method != b"CONNECT":
            chunked = _chunked(head)
            if chunked is None:
                raise _Reply(501, "bingo's proxy passes request bodies framed by Content-Length or chunked only")
            length = _content_length(head)
            if chunked and length is not None:
                raise _Reply(400, "bingo's proxy refuses a request with both Content-Length and chunked framing")
        await self._allowed(host, port)
        upstream_reader, upstream_writer = await self._connect(host, port)
        try:
            if method == b"CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await self._tunnel(reader, writer, upstream_reader, upstream_writer)
            else:
                first = b" ".join((method, path, version))
                headers = [(b"Host", host_header), *((k, v) for k, v in _forwarded(head) if k.lower() != b"host")]
                upstream_writer.write(_serialize(first, headers))
                await self._forward(method, reader, writer, upstream_reader, upstream_writer, length, bool(chunked))
        finally:
            if self._closing:
                upstream_writer.transport.abort()
            else:
                await _close(upstream_writer)

    async def _allowed(self, host: str, port: int) -> None:
        """Ask `decide`; refuse (403 with the line) on no, on its failure and past its deadline."""
        passed = False
        try:
            async with asyncio.timeout(self._limits.decide):
                passed = await self._decide(host, port)
        except TimeoutError:
            pass
        except Exception:  # the decision's boundary: a failing decide refuses, never lets through
            _log.exception("bingo's proxy could not decide on %s:%d", host, port)
        if passed is not True:
            raise _Reply(403, self._refusal(host, port), reason=True)

    async def _connect(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Resolve `host` and connect to `port` on the first address that answers.

        Raises:
            _Reply: 403 (the proxy itself, or this machine through a name), 502 (no such
                name, every address refused), 504 (past the connect deadline).
        """
        loop = asyncio.get_running_loop()
        where = f"{shown(host)}:{port}"
        try:
            async with asyncio.timeout(self._limits.connect):
                try:
                    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                except socket.gaierror as exc:
                    raise _Reply(502, f"bingo's proxy could not resolve {shown(host)}: {exc.strerror}") from None
                # A name reaches this machine only if it says so: a granted name whose DNS
                # answer is 127.0.0.1 must not open the person's local services.
                local_ok = host == "localhost" or host.endswith(".localhost") or _is_ip(host)
                failure = "no address"
                for family, kind, proto, _name, address in infos:
                    ip = ipaddress.ip_address(address[0])
                    if self._is_me(ip, int(address[1])):
                        raise _Reply(403, f"bingo's proxy refused {where}: that is the proxy itself", reason=True)
                    if _is_local(ip) and not local_ok:
                        raise _Reply(403, f"bingo's proxy refused {where}: the name points at this machine ({ip})", reason=True)
                    sock = socket.socket(family, kind, proto)
                    try:
                        sock.setblocking(False)
                        await loop.sock_connect(sock, address)
                    except OSError as exc:
                        sock.close()
                        # asyncio's own strerror names the address: the errno's words do not.
                        failure = os.strerror(exc.errno) if exc.errno else type(exc).__name__
                        continue
                    except BaseException:
                        sock.close()
                        raise
                    return await asyncio.open_connection(sock=sock, limit=self._limits.head_bytes)
                raise _Reply(502, f"bingo's proxy could not connect to {where}: {failure.lower()}")
        except TimeoutError:
            raise _Reply(504, f"bingo's proxy could not connect to {where} within {self._limits.connect:g} s") from None

    def _is_me(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> bool:
        if port != self.address[1]:
            return False
        mine = ipaddress.ip_address(self.address[0])
        return ip == mine or (mine.is_unspecified and _is_local(ip)) or (_is_local(ip) and _is_local(mine))

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter) -> None:
        """Relay both ways; each end of stream is passed on; over when both are done."""

        async def one_way(source: asyncio.StreamReader, sink: asyncio.StreamWriter, idle: _Idle) -> None:
            try:
                await _copy_to_end(source, sink, idle)
                if sink.can_write_eof():
                    sink.write_eof()
            except OSError:
                # One side failed: the other way cannot go on either.
                writer.transport.abort()
                upstream_writer.transport.abort()

        async with asyncio.timeout(self._limits.idle) as deadline:
            idle = _Idle(deadline, self._limits.idle)
            async with asyncio.TaskGroup() as group:
                group.create_task(one_way(reader, upstream_writer, idle))
                group.create_task(one_way(upstream_reader, writer, idle))

    async def _forward(self, method: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       upstream_reader: asyncio.StreamReader, upstream_writer: asyncio.StreamWriter,
                       length: int | None, chunked: bool) -> None:
        """Stream the request body up while the response comes down; over when the response is."""
        limit = self._limits.head_bytes

        async def body_up(idle: _Idle) -> None:
            try:
                if chunked:
                    await _copy_chunked(reader, upstream_writer, limit, idle)
                elif length:
                    await _copy(reader, upstream_writer, length, idle)
                await upstream_writer.drain()
            except (OSError, _Broken):
                # The client broke its body, or the server stopped taking it (it may have
                # answered already): stop sending, let the response finish or fail.
                if upstream_writer.can_write_eof():
                    with contextlib.suppress(OSError):
                        upstream_writer.write_eof()

        ended: BaseException | None = None
        async with asyncio.timeout(self._limits.idle) as deadline:
            idle = _Idle(deadline, self._limits.idle)
            async with asyncio.TaskGroup() as group:
                up = group.create_task(body_up(idle))
                try:
                    await self._response(method, upstream_reader, writer, limit, idle)
                except (_Reply, _Broken, OSError) as exc:
                    ended = exc  # raised past the group, which would wrap it
                finally:
                    up.cancel()
        if ended is not None:
            raise ended

    async def _response(self, method: bytes, upstream: asyncio.StreamReader, writer: asyncio.StreamWriter, limit: int, idle: _Idle) -> None:
        """Relay interim answers, then the response head (hop-by-hop headers dropped) and its
        body by its framing.

        Raises:
            _Reply: 502, before anything was sent to the client.
            _Broken: the response broke after something was sent.
        """
        sent = False
        while True:
            try:
                raw = await upstream.readuntil(b"\r\n\r\n")
            except asyncio.LimitOverrunError:
                raise _Reply(502, f"bingo's proxy had a response head longer than {limit // 1024} KiB") from None
            except asyncio.IncompleteReadError:
                if sent:
                    raise _Broken("the server left after an interim answer") from None
                raise _Reply(502, "bingo's proxy had no response: the server closed the connection") from None
            head = _parse_head(raw)
            matched = None if head is None else _STATUS.match(head.first)
            if head is None or matched is None:
                if sent:
                    raise _Broken("a response head could not be read")
                raise _Reply(502, "bingo's proxy could not read the server's response")
            status = int(matched.group(2))
            if status == 101:
                raise _Reply(502, "the server switched protocols, which bingo's proxy does not carry (use CONNECT)")
            if status >= 200:
                break
            writer.write(raw)  # an interim answer (100 Continue) goes on as it came
            sent = True
        chunked = _chunked(head)
        try:
            length = _content_length(head) if chunked is False else None
        except _Reply:
            raise _Reply(502, "bingo's proxy could not read the server's Content-Length") from None
        headers = _forwarded(head)
        if chunked:
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        writer.write(_serialize(head.first, headers))
        await writer.drain()
        idle.touch()
        if method == b"HEAD" or status in (204, 304):
            return
        if chunked:
            await _copy_chunked(upstream, writer, limit, idle)
        elif length is None:
            await _copy_to_end(upstream, writer, idle)
        else:
            await _copy(upstream, writer, length, idle)
