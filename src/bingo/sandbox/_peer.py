"""One side of a proxied exchange: a non-blocking socket read and written with the loop's
`sock_*` calls, and the copies from one side to the other (ADR-0032).

Owns the bytes in flight: a `Peer` keeps what it read past a head or a chunk line
(`pending`, at most one head's worth), and every copy moves through one buffer of its own,
read into (`recv_into`) and sent whole (`sock_sendall`) before the next read. So each
direction of a relay holds at most `BUFFER` bytes, a slow reader slows the writer (the
kernel's socket buffers are the only other place bytes wait), and a byte is copied twice in
all (kernel to buffer, buffer to kernel). Stream transports would add a copy into their
reader's buffer and one out of it, and halve the throughput (measured in ADR-0032).

Every copy pushes the exchange's idle deadline on (`Idle.touch`); no wait here has a
deadline of its own: the caller's `asyncio.timeout` bounds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from ._http1 import CHUNK_SIZE, Broken

__all__ = ["BUFFER", "Idle", "Peer", "copy_chunked", "copy_exactly", "copy_to_end"]

BUFFER = 256 * 1024
"""The bytes one direction of a copy holds at most (one read, sent whole before the next)."""
_READ = 64 * 1024
"""The most a head or line read takes at once (the rest waits in the kernel)."""
_LINGER = 2.0
"""Seconds a closing side waits for its peer to stop sending before closing anyway."""
_LINGER_BYTES = 4 * 1024 * 1024
"""The most a closing side reads (and drops) from its peer before closing anyway."""


class Idle:
    """An exchange's idle deadline: every byte that moves pushes it on."""

    __slots__ = ("_deadline", "_idle", "_loop")

    def __init__(self, deadline: asyncio.Timeout, idle: float) -> None:
        self._deadline = deadline
        self._idle = idle
        self._loop = asyncio.get_running_loop()

    def touch(self) -> None:
        self._deadline.reschedule(self._loop.time() + self._idle)


class Peer:
    """A connected non-blocking socket, and what was read from it but not yet used."""

    __slots__ = ("_loop", "pending", "sock")

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock
        self.pending = bytearray()
        self._loop = asyncio.get_running_loop()

    async def until(self, separator: bytes, limit: int) -> bytes | None:
        """Bytes up to and including `separator`; None when `limit` bytes came without it.

        Raises:
            Broken: the peer ended its side first.
        """
        start = 0
        while (found := self.pending.find(separator, start)) < 0:
            if len(self.pending) >= limit:
                return None
            start = max(0, len(self.pending) - len(separator) + 1)
            data = await self._loop.sock_recv(self.sock, _READ)
            if not data:
                raise Broken("the peer ended before a separator")
            self.pending += data
        end = found + len(separator)
        if end > limit:
            return None
        taken = bytes(self.pending[:end])
        del self.pending[:end]
        return taken

    async def recv_into(self, view: memoryview) -> int:
        """Read into `view` (what is pending first); 0 at the end of the peer's stream."""
        if self.pending:
            n = min(len(view), len(self.pending))
            view[:n] = self.pending[:n]
            del self.pending[:n]
            return n
        return await self._loop.sock_recv_into(self.sock, view)

    async def send(self, data: bytes | memoryview) -> None:
        await self._loop.sock_sendall(self.sock, data)

    def end(self) -> None:
        """End our side of the stream (the peer reads its end); the socket stays open."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)

    async def linger(self) -> None:
        """End our side, then read (and drop) what the peer still sends until it ends its
        side, for a bounded time and size, so that closing does not reset the connection:
        a reset may destroy the last bytes sent before the peer reads them."""
        self.end()
        self.pending.clear()
        taken = 0
        with contextlib.suppress(OSError, TimeoutError):
            async with asyncio.timeout(_LINGER):
                while taken < _LINGER_BYTES and (data := await self._loop.sock_recv(self.sock, _READ)):
                    taken += len(data)

    def close(self) -> None:
        self.sock.close()


async def copy_to_end(source: Peer, sink: Peer, idle: Idle) -> None:
    """Pass on every byte until the end of `source`'s stream."""
    buffer = memoryview(bytearray(BUFFER))
    while n := await source.recv_into(buffer):
        await sink.send(buffer[:n])
        idle.touch()


async def copy_exactly(source: Peer, sink: Peer, n: int, idle: Idle) -> None:
    """Pass on exactly `n` bytes.

    Raises:
        Broken: `source`'s stream ended first.
    """
    buffer = memoryview(bytearray(min(n, BUFFER)))
    while n > 0:
        got = await source.recv_into(buffer[: min(n, len(buffer))])
        if not got:
            raise Broken("the stream ended inside a body")
        await sink.send(buffer[:got])
        n -= got
        idle.touch()


async def _line(source: Peer, limit: int) -> bytes:
    line = await source.until(b"\r\n", limit)
    if line is None:
        raise Broken("a chunk line is too long")
    return line


async def copy_chunked(source: Peer, sink: Peer, limit: int, idle: Idle) -> None:
    """Pass on a chunked body as it came, to its last chunk and trailers and no further.

    Raises:
        Broken: the framing is broken or `source`'s stream ended first.
    """
    while True:
        line = await _line(source, limit)
        size = CHUNK_SIZE.match(line[:-2])
        if size is None:
            raise Broken("a chunk size could not be read")
        n = int(size.group(1), 16)
        if n == 0:
            await sink.send(line)
            break
        await sink.send(line)
        await copy_exactly(source, sink, n, idle)
        if await _line(source, 2) != b"\r\n":
            raise Broken("a chunk did not end in CRLF")
        await sink.send(b"\r\n")
    trailers = 0
    while (line := await _line(source, limit)) != b"\r\n":
        trailers += len(line)
        if trailers > limit:
            raise Broken("the trailers are too long")
        await sink.send(line)
    await sink.send(b"\r\n")
    idle.touch()
