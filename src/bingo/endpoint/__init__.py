"""The JSON-RPC endpoint: one side of a line-delimited JSON-RPC 2.0 conversation over a pair
of streams, whoever is at the other end (a plugin process, an MCP server, an editor).

Three modules, each unaware of the ones above it: framing (`_framing.py`, bytes ↔ one
message per line, a bad line a value), messages (`_message.py`, decoding and the crossings
between exceptions and wire errors, no state) and the connection (`connection.py`, ids,
pending calls, deadlines, handlers by method, what is queued for a peer that does not read).

It stands on the wire's types (`bingo.wire`) and the kernel's two leaf modules (its errors,
and `kernel.log.cut`), and on nothing else: it knows no process, plugin, proxy or surface.
The plugin bridge (`bingo.bridge`) and the ACP surface (`bingo.surfaces.acp`) both speak
through it (ADR-0039).
"""

from __future__ import annotations

from ._framing import MAX_LINE, BadLine, LineReader, LineWriter, MemoryWriter, memory_pair
from ._message import BadAnswer, TooLarge, answered_error, decode_answer, decoder_for, error_object
from .connection import UNREAD_MAX, Connection, Unread

__all__ = [
    "MAX_LINE",
    "UNREAD_MAX",
    "BadAnswer",
    "BadLine",
    "Connection",
    "LineReader",
    "LineWriter",
    "MemoryWriter",
    "TooLarge",
    "Unread",
    "answered_error",
    "decode_answer",
    "decoder_for",
    "error_object",
    "memory_pair",
]
