"""Lines of a peer's stream, bounded: the one splitter of an HTTP body into lines that never
holds more than its limit of one line (ADR-0028).

Owns `bounded_lines`, which turns an async iterator of byte chunks (httpx's `aiter_bytes()`)
into lines split at `\\n`, `\\r\\n` or `\\r` (the event-stream grammar's three), and a line
longer than the limit into one `Overlong` value, said as soon as it passes the limit (a
caller can stop reading there: a line that never ends costs no wait), the rest of it thrown
away as it arrives. `head_bytes` reads at most a given number of bytes of a body
(an error page). It knows no HTTP and no event grammar: the model providers' SSE reader and
the MCP Streamable HTTP transport both read through it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable

import msgspec

__all__ = ["Overlong", "bounded_lines", "head_bytes"]

_HEAD = 256
"""Bytes of an over-long line kept, for a log line."""


class Overlong(msgspec.Struct, frozen=True):
    """A line that passed the limit: its first bytes and its size when it did (the bytes of
    it seen by then, so at least that)."""

    head: bytes
    size: int


async def bounded_lines(chunks: AsyncIterable[bytes], limit: int) -> AsyncGenerator[bytes | Overlong]:
    """Each line of `chunks` without its end, or an `Overlong` as soon as a line passes
    `limit` bytes (a caller that reads on gets the next line after it: the rest of this one
    is thrown away as it arrives). A last line without an end still counts."""
    buffer = bytearray()
    skip_lf = False  # a `\r` ended the last chunk: a `\n` first in the next belongs to it
    dropping = False  # the line under way passed the limit and was said
    async for chunk in chunks:
        if not chunk:
            continue
        pos = 1 if skip_lf and chunk[0] == 0x0A else 0
        skip_lf = False
        size = len(chunk)
        lf, cr = chunk.find(b"\n", pos), chunk.find(b"\r", pos)
        while True:
            if 0 <= lf < pos:
                lf = chunk.find(b"\n", pos)
            if 0 <= cr < pos:
                cr = chunk.find(b"\r", pos)
            end = lf if cr < 0 else cr if lf < 0 else min(lf, cr)
            if end < 0:
                break
            piece = chunk[pos:end]
            pos = end + 1
            if end == cr:
                if pos < size and chunk[pos] == 0x0A:
                    pos += 1
                elif pos == size:
                    skip_lf = True
            if dropping:
                dropping = False
            elif len(buffer) + len(piece) > limit:
                yield Overlong(head=(bytes(buffer[:_HEAD]) + piece[:_HEAD])[:_HEAD], size=len(buffer) + len(piece))
                buffer.clear()
            elif buffer:
                buffer += piece
                yield bytes(buffer)
                buffer.clear()
            else:
                yield piece
        rest = chunk[pos:]
        if dropping:
            continue
        if len(buffer) + len(rest) > limit:
            dropping = True
            yield Overlong(head=(bytes(buffer[:_HEAD]) + rest[:_HEAD])[:_HEAD], size=len(buffer) + len(rest))
            buffer.clear()
        else:
            buffer += rest
    if buffer and not dropping:
        yield bytes(buffer)


async def head_bytes(chunks: AsyncIterable[bytes], limit: int) -> bytes:
    """At most `limit` bytes of `chunks`: the reading stops there, the rest is never read."""
    kept = bytearray()
    async for chunk in chunks:
        kept += chunk[: limit - len(kept)]
        if len(kept) >= limit:
            break
    return bytes(kept)
