"""The janitor's framing, both ways: a 4-byte big-endian length, then a `marshal`led tuple.

Owns the bytes of one message on the control socket between bingo and its janitor, and
nothing of what a message means (the client and the server each match the ones they read)
nor how the socket is read or written (each end does that its own way: bingo on its event
loop, the janitor in a `select` loop).

Imported by both ends, so it imports only `marshal`: the janitor's process imports nothing
of bingo's (ADR-0013), and this module runs there as `janitor._codec`.
"""

from __future__ import annotations

import marshal

__all__ = ["HEADER", "Decoder", "Field", "Message", "encode"]

HEADER = 4
"""Bytes of the length before each message."""

Field = str | int | float | list[str] | list[int] | dict[str, str]
"""What a message is made of: only what `marshal` carries, and only what the protocol uses."""
Message = tuple[Field, ...]
"""One message: its kind first (`"spawn"`, `"spawned"`, `"failed"`, `"exit"`), then its fields."""


def encode(message: Message) -> bytes:
    """One message, framed: its length, then the marshalled tuple."""
    data = marshal.dumps(message)
    return len(data).to_bytes(HEADER, "big") + data


class Decoder:
    """Whole messages out of a byte stream that arrives in pieces of any size."""

    __slots__ = ("_pending",)

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes) -> list[object]:
        """The messages `data` completes, in order (unchecked: each end matches what it
        expects); the start of a next one is kept for the next call."""
        buffer = self._pending + data if self._pending else data
        messages: list[object] = []
        start = 0
        while len(buffer) - start >= HEADER:
            end = start + HEADER + int.from_bytes(buffer[start : start + HEADER], "big")
            if len(buffer) < end:
                break
            messages.append(marshal.loads(buffer[start + HEADER : end]))
            start = end
        self._pending = buffer[start:]
        return messages
