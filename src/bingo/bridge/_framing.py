"""Framing: bytes ↔ one message per line over asyncio streams.

Owns the line discipline of the plugin wire: `\\n`-terminated lines, a bounded line length
(a longer line is discarded up to its newline without being held whole), and the first
decode of each line. A line that is too long, not UTF-8 or not of the expected shape is a
`BadLine` *value* on the read stream, never an exception (the MCP SDK's `_parse_line`
style): the layer above decides what a bad line costs.

It does not know JSON-RPC, ids or methods: the decoder it is given does. It also holds the
in-memory twin (`memory_pair`) the connection's tests run on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import msgspec

__all__ = [
    "MAX_LINE",
    "BadLine",
    "LineReader",
    "LineWriter",
    "MemoryWriter",
    "memory_pair",
]

MAX_LINE = 16 * 1024 * 1024
"""The longest line read whole (16 MiB); the StreamReader's `limit` must be this."""

_PREVIEW = 200
"""How much of a bad line is kept for the log and the notice."""

T = TypeVar("T")


class BadLine(msgspec.Struct, frozen=True):
    """A line that could not be read as a message: why, and the start of it."""

    reason: str
    preview: str


class LineWriter(Protocol):
    """The write half: asyncio's StreamWriter, or the in-memory twin."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...

    def is_closing(self) -> bool: ...


def _preview(line: bytes) -> str:
    return line[:_PREVIEW].decode("utf-8", "replace").rstrip("\r\n")


class LineReader(Generic[T]):
    """Reads one decoded message per line. `read()` answers the message, a BadLine, or None
    at the end of the stream. A final line without `\\n` still counts as a line."""

    def __init__(self, reader: asyncio.StreamReader, decode: Callable[[bytes], T]) -> None:
        self._reader = reader
        self._decode = decode

    async def read(self) -> T | BadLine | None:
        """The next message, BadLine, or None at EOF."""
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                if not exc.partial.strip():
                    return None
                line = exc.partial
            except asyncio.LimitOverrunError as exc:
                return await self._discard(exc.consumed)
            if line.strip():
                break
        try:
            return self._decode(line)
        except msgspec.DecodeError as exc:
            # msgspec rejects invalid UTF-8 and non-JSON alike; ValidationError (a subclass)
            # means JSON of the wrong shape.
            kind = "not a message" if isinstance(exc, msgspec.ValidationError) else "not JSON"
            return BadLine(f"{kind}: {exc}", _preview(line))

    async def _discard(self, consumed: int) -> BadLine:
        """Throw away an over-long line up to and including its newline, a bounded chunk at
        a time: the reader's buffer never holds more than about its limit of it."""
        head = await self._reader.readexactly(consumed)
        preview = _preview(head)
        total = consumed
        while True:
            try:
                rest = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
                total += exc.consumed
                continue
            except asyncio.IncompleteReadError as exc:
                total += len(exc.partial)
                break
            total += len(rest)
            break
        return BadLine(f"line longer than the limit ({total} bytes or more)", preview)


class MemoryWriter:
    """The in-memory twin of a StreamWriter: what is written is fed to a peer's reader."""

    def __init__(self, peer: asyncio.StreamReader) -> None:
        self._peer = peer
        self._closed = False

    def write(self, data: bytes) -> None:
        if self._closed:
            raise ConnectionResetError("the memory stream is closed")
        self._peer.feed_data(data)

    async def drain(self) -> None:
        if self._closed:
            raise ConnectionResetError("the memory stream is closed")

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._peer.feed_eof()

    def is_closing(self) -> bool:
        return self._closed


def memory_pair(
    limit: int = MAX_LINE,
) -> tuple[tuple[asyncio.StreamReader, MemoryWriter], tuple[asyncio.StreamReader, MemoryWriter]]:
    """Two connected ends, `(reader, writer)` each: what one end writes the other reads.
    Must be called inside a running loop."""
    a_reads = asyncio.StreamReader(limit=limit)
    b_reads = asyncio.StreamReader(limit=limit)
    return (a_reads, MemoryWriter(b_reads)), (b_reads, MemoryWriter(a_reads))
