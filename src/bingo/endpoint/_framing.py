"""Framing: bytes ↔ one message per line over asyncio streams.

Owns the line discipline of every JSON-RPC peer (a plugin, an MCP server, an editor):
`\\n`-terminated lines, a bounded line length (a longer line is discarded up to its newline
without being held whole), and the first decode of each line. A line that is too long,
nested deeper than `wire.MAX_DEPTH`, not UTF-8 or not of the expected shape is a `BadLine`
*value* on the read stream, never an exception (the MCP SDK's `_parse_line` style): the
layer above decides what a bad line costs. A line nested too deeply is offered to the layer
above's reader of deep lines first, which may still read its top level (a JSON-RPC answer
whose result is too deep must still fail its call).

It does not know JSON-RPC, ids or methods: the decoder it is given does. It also holds the
in-memory twin (`memory_pair`) the connection's tests run on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

import msgspec

from ..wire import MAX_DEPTH, too_deep

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

_ENDS = 256
"""Bytes kept of each end of an over-long line: enough to read whose answer it is, whether
the id comes first (`{"jsonrpc":"2.0","id":7,"result":...`) or last (`...,"id":7}`)."""

_DEEP_READ_MAX = 1024 * 1024
"""The longest line nested too deeply that is offered to the reader of deep lines (1 MiB):
reading one's top level steps over the strings inside it one by one, in Python, on the loop
every plugin shares. A longer one is a bad line and nothing more."""

_TOO_DEEP = f"nested too deeply (more than {MAX_DEPTH} levels)"

T = TypeVar("T")


class BadLine(msgspec.Struct, frozen=True):
    """A line that could not be read as a message: why, and the start of it. A line longer
    than the limit also keeps its first and last bytes (`head`, `tail`) and its `size`, so
    the layer above can tell whose answer it was and fail that call (ADR-0028)."""

    reason: str
    preview: str
    head: bytes = b""
    tail: bytes = b""
    size: int = 0


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
    at the end of the stream. A final line without `\\n` still counts as a line.

    `decode` is never given a line nested deeper than MAX_DEPTH: `deep`, when given, is (it
    answers a message read from the line's top level, or None for a bad line)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        decode: Callable[[bytes], T],
        deep: Callable[[bytes], T | None] | None = None,
    ) -> None:
        self._reader = reader
        self._decode = decode
        self._deep = deep

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
            if not too_deep(line):
                return self._decode(line)
            read = self._deep(line) if self._deep is not None and len(line) <= _DEEP_READ_MAX else None
            return read if read is not None else BadLine(_TOO_DEEP, _preview(line))
        except RecursionError:
            # Not expected under MAX_DEPTH (too_deep is exact for JSON, and a decoder stops
            # at the first fault of anything else), but the read loop must outlive any line.
            return BadLine(_TOO_DEEP, _preview(line))
        except msgspec.DecodeError as exc:
            # msgspec rejects invalid UTF-8 and non-JSON alike; ValidationError (a subclass)
            # means JSON of the wrong shape.
            kind = "not a message" if isinstance(exc, msgspec.ValidationError) else "not JSON"
            return BadLine(f"{kind}: {exc}", _preview(line))

    async def _discard(self, consumed: int) -> BadLine:
        """Throw away an over-long line up to and including its newline, a bounded chunk at
        a time: the reader's buffer never holds more than about its limit of it."""
        first = await self._reader.readexactly(consumed)
        head, tail = first[:_ENDS], first[-_ENDS:]
        del first
        total = consumed
        while True:
            try:
                rest = await self._reader.readuntil(b"\n")
            except asyncio.LimitOverrunError as exc:
                tail = (tail + await self._reader.readexactly(exc.consumed))[-_ENDS:]
                total += exc.consumed
                continue
            except asyncio.IncompleteReadError as exc:
                tail = (tail + exc.partial)[-_ENDS:]
                total += len(exc.partial)
                break
            tail = (tail + rest)[-_ENDS:]
            total += len(rest)
            break
        return BadLine(
            f"line longer than the limit ({total} bytes or more)", _preview(head), head, tail.rstrip(b"\r\n"), total
        )


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
