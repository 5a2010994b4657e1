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
connection to its own listening port on this machine (403: a loop), and an address on this machine (loopback or
unspecified) reached through a name other than `localhost` (403: a granted name whose DNS
answer points at the person's own machine). Every port 1–65535 is decided by `decide`: a grant
names a host, not a service.

Bounds (`Limits`): a request or response head past 64 KiB (431 / 502), a client that has
not sent its head within `head` seconds (408, closed), an upstream connect (resolution
included) past `connect` seconds (504), a decision past `decide` seconds (refused), at most
`connections` connections at once (503 to the next), nothing relayed for `idle` seconds
(closed), and at most one buffer (`_peer.BUFFER`, 256 KiB) per direction: a copy sends
what it read whole before it reads again (`_peer.py`), so a slow side slows the other.

It does not know who is asking (the caller makes one `Proxy` per decision-maker), does no
TLS (CONNECT carries the client's own), and speaks no SOCKS.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType

from ._http1 import (
    STATUS,
    TOKEN,
    VERSION,
    Broken,
    Head,
    Reply,
    chunked,
    content_length,
    forwarded,
    parse_head,
    reply_bytes,
    serialize,
    target,
)
from ._pattern import shown
from ._peer import Idle, Peer, copy_chunked, copy_exactly, copy_to_end

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
    """Connections served at once (each holds at most two 256 KiB buffers and one head);
    the next one gets 503."""


_ANSWER_WAIT = 5.0
"""Seconds a one-line answer has to reach the client's socket buffer (it fits: the wait is
only against a client that stopped reading before its request was answered)."""
_ACCEPT_AGAIN = frozenset(
    {
        errno.ECONNABORTED,
        errno.EPROTO,
        errno.EPERM,
        errno.EINTR,
        errno.ENETDOWN,
        errno.ENOPROTOOPT,
        errno.EHOSTDOWN,
        errno.EHOSTUNREACH,
        errno.EOPNOTSUPP,
        errno.ENETUNREACH,
    }
)
"""accept(2) errors about one connection only (Linux passes on the new socket's pending
network errors: accept(2), "Error handling")."""
_ACCEPT_LATER = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""accept(2) errors that may pass: out of descriptors or memory."""
_ACCEPT_PAUSE = 0.1
"""Seconds the accept loop pauses after a failed accept: out of descriptors (EMFILE) would
fail again at once, and the loop would spin."""


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

    Use as `async with Proxy(sock, decide)`: it serves from entering to leaving; leaving
    closes the listener and every connection, tunnels included, and returns once every task
    it made is done. Its tasks live in a task group of its own, which needs no exception
    from the body and never cancels the task that entered it (no task of it fails), so it
    may be left from another task than the one that entered it.
    """

    def __init__(
        self, sock: socket.socket, decide: Decide, *, refusal: Refusal = refused, limits: Limits | None = None
    ) -> None:
        self._listener = sock
        self._decide = decide
        self._refusal = refusal
        self._limits = limits or Limits()
        self._group = asyncio.TaskGroup()
        self._tasks: set[asyncio.Task[None]] = set()
        self._accepting: asyncio.Task[None] | None = None
        self._closing = False
        name = sock.getsockname()
        self.address: tuple[str, int] = (str(name[0]), int(name[1]))
        """The listening address (host, port), as the sandboxed process reaches it."""

    async def __aenter__(self) -> Proxy:
        self._listener.setblocking(False)
        await self._group.__aenter__()
        self._accepting = self._group.create_task(self._accept())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        del kind, exc, tb
        self._closing = True
        if self._accepting is not None:
            self._accepting.cancel()
        for task in list(self._tasks):
            task.cancel()
        try:
            # The body's own exception goes on as it is: handed to the group, 3.11 would
            # wrap it in an ExceptionGroup.
            await self._group.__aexit__(None, None, None)
        finally:
            self._listener.close()

    @property
    def connections(self) -> int:
        """How many connections are being served now."""
        return len(self._tasks)

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _address = await loop.sock_accept(self._listener)
            except OSError as exc:
                if exc.errno in _ACCEPT_AGAIN:
                    continue  # a connection gone before it was taken
                if exc.errno in _ACCEPT_LATER:
                    _log.warning("bingo's proxy could not accept a connection: %s", exc)
                    await asyncio.sleep(_ACCEPT_PAUSE)
                    continue
                # The listener itself is broken (closed, or never listening): serve no more.
                _log.error("bingo's proxy stopped accepting: %s", exc)
                return
            if len(self._tasks) >= self._limits.connections:
                with contextlib.suppress(OSError):
                    sock.setblocking(False)
                    sock.send(reply_bytes(503, "bingo's proxy has too many connections open; try again", reason=False))
                sock.close()
                continue
            task = self._group.create_task(self._serve(Peer(sock)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _serve(self, client: Peer) -> None:
        """One client connection, start to end; no exception leaves it (it would end the group)."""
        try:
            await self._exchange(client)
        except Reply as reply:
            with contextlib.suppress(OSError, TimeoutError):
                async with asyncio.timeout(_ANSWER_WAIT):
                    await client.send(reply_bytes(reply.status, reply.line, reason=reply.reason))
                await client.linger()
        except (Broken, OSError, TimeoutError):
            pass
        except Exception:  # the connection's boundary: one bad exchange never ends the proxy
            _log.exception("bingo's proxy failed on a connection")
        finally:
            client.close()

    async def _head(self, client: Peer) -> Head:
        try:
            async with asyncio.timeout(self._limits.head):
                raw = await client.until(b"\r\n\r\n", self._limits.head_bytes)
        except TimeoutError:
            raise Reply(408, f"bingo's proxy had no request within {self._limits.head:g} s") from None
        except Broken:
            raise Broken("the client left before its request") from None
        if raw is None:
            raise Reply(431, f"bingo's proxy takes request heads of at most {self._limits.head_bytes // 1024} KiB")
        head = parse_head(raw)
        if head is None:
            raise Reply(400, "bingo's proxy could not read the request head")
        return head

    async def _exchange(self, client: Peer) -> None:
        head = await self._head(client)
        parts = head.first.split(b" ")
        if len(parts) != 3:
            raise Reply(400, "bingo's proxy could not read the request line")
        method, request_target, version = parts
        if not TOKEN.match(method):
            raise Reply(400, "bingo's proxy could not read the request method")
        if not VERSION.match(version):
            raise Reply(505, "bingo's proxy speaks HTTP/1.0 and HTTP/1.1")
        host, port, path, host_header = target(method, request_target)
        length: int | None = None
        is_chunked: bool | None = False
        if method != b"CONNECT":
            is_chunked = chunked(head)
            if is_chunked is None:
                raise Reply(501, "bingo's proxy passes request bodies framed by Content-Length or chunked only")
            length = content_length(head)
            if is_chunked and length is not None:
                raise Reply(400, "bingo's proxy refuses a request with both Content-Length and chunked framing")
        await self._allowed(host, port)
        upstream = await self._connect(host, port)
        try:
            if method == b"CONNECT":
                await self._tunnel(client, upstream)
            else:
                first = b" ".join((method, path, version))
                headers = [(b"Host", host_header), *((k, v) for k, v in forwarded(head) if k.lower() != b"host")]
                await self._forward(serialize(first, headers), method, client, upstream, length, bool(is_chunked))
                await client.linger()
        finally:
            upstream.close()

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
            raise Reply(403, self._refusal(host, port), reason=True)

    async def _connect(self, host: str, port: int) -> Peer:
        """Resolve `host` and connect to `port` on the first address that answers.

        Raises:
            Reply: 403 (the proxy itself, or this machine through a name), 502 (no such
                name, every address refused), 504 (past the connect deadline).
        """
        loop = asyncio.get_running_loop()
        where = f"{shown(host)}:{port}"
        # A name reaches this machine only if it says so: a granted name whose DNS answer
        # is 127.0.0.1 must not open the person's local services.
        local_ok = host == "localhost" or host.endswith(".localhost") or _is_ip(host)
        try:
            async with asyncio.timeout(self._limits.connect):
                try:
                    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
                except socket.gaierror as exc:
                    raise Reply(502, f"bingo's proxy could not resolve {shown(host)}: {exc.strerror}") from None
                failure = "no address"
                for family, kind, proto, _name, address in infos:
                    ip = ipaddress.ip_address(address[0])
                    if self._is_me(ip, int(address[1])):
                        raise Reply(403, f"bingo's proxy refused {where}: that is the proxy itself", reason=True)
                    if _is_local(ip) and not local_ok:
                        raise Reply(
                            403, f"bingo's proxy refused {where}: the name points at this machine ({ip})", reason=True
                        )
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
                    return Peer(sock)
                raise Reply(502, f"bingo's proxy could not connect to {where}: {failure.lower()}")
        except TimeoutError:
            raise Reply(504, f"bingo's proxy could not connect to {where} within {self._limits.connect:g} s") from None

    def _is_me(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> bool:
        if port != self.address[1]:
            return False
        mine = ipaddress.ip_address(self.address[0])
        return ip == mine or (_is_local(ip) and _is_local(mine))

    async def _tunnel(self, client: Peer, upstream: Peer) -> None:
        """Relay both ways, each end of stream passed on; over when both ways are, or either
        fails (then both sockets are shut, which ends the other way)."""

        async def one_way(source: Peer, sink: Peer, idle: Idle) -> None:
            try:
                await copy_to_end(source, sink, idle)
                sink.end()
            except OSError:
                for peer in (client, upstream):
                    with contextlib.suppress(OSError):
                        peer.sock.shutdown(socket.SHUT_RDWR)

        async with asyncio.timeout(self._limits.idle) as deadline:
            idle = Idle(deadline, self._limits.idle)
            await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
            async with asyncio.TaskGroup() as group:
                group.create_task(one_way(client, upstream, idle))
                group.create_task(one_way(upstream, client, idle))

    async def _forward(
        self, request: bytes, method: bytes, client: Peer, upstream: Peer, length: int | None, is_chunked: bool
    ) -> None:
        """Send the request head, then stream the body up while the response comes down;
        over when the response is."""
        limit = self._limits.head_bytes

        async def body_up(idle: Idle) -> None:
            try:
                if is_chunked:
                    await copy_chunked(client, upstream, limit, idle)
                elif length:
                    await copy_exactly(client, upstream, length, idle)
            except (OSError, Broken):
                # The client broke its body, or the server stopped taking it (it may have
                # answered already): stop sending, let the response finish or fail.
                upstream.end()

        ended: BaseException | None = None
        async with asyncio.timeout(self._limits.idle) as deadline:
            idle = Idle(deadline, self._limits.idle)
            try:
                await upstream.send(request)
            except OSError as exc:
                raise Reply(
                    502,
                    f"bingo's proxy could not send the request: {os.strerror(exc.errno).lower() if exc.errno else 'the server closed the connection'}",
                ) from None
            async with asyncio.TaskGroup() as group:
                up = group.create_task(body_up(idle))
                try:
                    await self._response(method, upstream, client, limit, idle)
                except (Reply, Broken, OSError) as exc:
                    ended = exc  # raised past the group, which would wrap it
                finally:
                    up.cancel()
        if ended is not None:
            raise ended

    async def _response(self, method: bytes, upstream: Peer, client: Peer, limit: int, idle: Idle) -> None:
        """Relay interim answers, then the response head (hop-by-hop headers dropped) and its
        body by its framing.

        Raises:
            Reply: 502, before anything was sent to the client.
            Broken: the response broke after something was sent.
        """
        sent = False
        while True:
            try:
                raw = await upstream.until(b"\r\n\r\n", limit)
            except Broken:
                if sent:
                    raise
                raise Reply(502, "bingo's proxy had no response: the server closed the connection") from None
            head = None if raw is None else parse_head(raw)
            matched = None if head is None else STATUS.match(head.first)
            if raw is None or head is None or matched is None:
                if sent:
                    raise Broken("a response head could not be read")
                if raw is None:
                    raise Reply(502, f"bingo's proxy had a response head longer than {limit // 1024} KiB")
                raise Reply(502, "bingo's proxy could not read the server's response")
            status = int(matched.group(2))
            if status == 101:
                if sent:
                    raise Broken("the server switched protocols")
                raise Reply(502, "the server switched protocols, which bingo's proxy does not carry (use CONNECT)")
            if status >= 200:
                break
            await client.send(raw)  # an interim answer (100 Continue) goes on as it came
            sent = True
        is_chunked = chunked(head)
        try:
            length = content_length(head) if is_chunked is False else None
        except Reply:
            if sent:
                raise Broken("the server's Content-Length could not be read") from None
            raise Reply(502, "bingo's proxy could not read the server's Content-Length") from None
        headers = forwarded(head)
        if is_chunked:
            headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
        await client.send(serialize(head.first, headers))
        idle.touch()
        if method == b"HEAD" or status in (204, 304):
            return
        if is_chunked:
            await copy_chunked(upstream, client, limit, idle)
        elif length is None:
            await copy_to_end(upstream, client, idle)
        else:
            await copy_exactly(upstream, client, length, idle)
