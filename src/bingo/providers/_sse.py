"""Server-sent events: turns the lines of a streamed HTTP body into events.

Owns the event-stream grammar (WHATWG HTML, "Parsing an event stream") as far as the two
model APIs use it: `event:` names an event, `data:` lines are joined with newlines, a blank
line dispatches, a line starting with `:` is a comment, `id:` and `retry:` are ignored.
It does not decode the data (each provider does, into its own types), does no I/O and knows
no HTTP: its input is any async iterator of lines (`kernel.lines.bounded_lines` over the
body in use, a list in tests), already split on `\\r\\n`, `\\n` or `\\r`. What it holds is
bounded (ADR-0028): a line the splitter threw away as over-long, or an event whose data lines
add up past `EVENT_MAX`, ends the stream with `TooLarge`.

Hand-written rather than `httpx-sse`: the grammar is forty lines, and owning them keeps the
dependency list at msgspec and httpx and lets a malformed stream stay a value for the
provider to judge instead of a foreign exception to map.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable

import msgspec

from ..kernel.lines import Overlong

__all__ = ["EVENT_MAX", "ServerEvent", "TooLarge", "events"]

EVENT_MAX = 16 * 1024 * 1024
"""Bytes of one event (a line, or the data lines of one event together) kept (16 MiB, the
plugin wire's line): an event carries one delta, a few KiB at most from either API."""

_DEFAULT_EVENT = "message"
"""The event name when a block has no `event:` line (what OpenAI-style streams send)."""


class TooLarge(Exception):
    """An event of the stream is longer than EVENT_MAX: `size` bytes of it were seen."""

    def __init__(self, size: int) -> None:
        super().__init__(f"an event of {size} bytes or more")
        self.size = size


class ServerEvent(msgspec.Struct, frozen=True):
    """One dispatched event: its name and its data (the `data:` lines, newline-joined)."""

    event: str
    data: str


def _field(line: str) -> tuple[str, str]:
    name, colon, value = line.partition(":")
    if not colon:
        # A line with no colon is a field name with an empty value.
        return name, ""
    # One space after the colon belongs to the syntax, not to the value.
    return name, value[1:] if value.startswith(" ") else value


async def events(lines: AsyncIterable[str | bytes | Overlong]) -> AsyncGenerator[ServerEvent, None]:
    """The events in `lines`, in order.

    A block with no data dispatches nothing (the grammar says so). At the end of the lines a
    block still pending is dispatched too: some compatible servers omit the final blank line,
    and a truncated event is still judged by the provider that decodes it.

    Raises:
        TooLarge: a line was over-long, or an event's data passed EVENT_MAX.
    """
    name = ""
    data: list[str] = []
    size = 0
    async for raw in lines:
        if isinstance(raw, Overlong):
            raise TooLarge(raw.size)
        line = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw).rstrip("\r\n")
        if not line:
            if data:
                yield ServerEvent(name or _DEFAULT_EVENT, "\n".join(data))
            name, data, size = "", [], 0
            continue
        if line.startswith(":"):
            continue
        field, value = _field(line)
        if field == "event":
            name = value
        elif field == "data":
            size += len(value) + 1
            if size > EVENT_MAX:
                raise TooLarge(size)
            data.append(value)
    if data:
        yield ServerEvent(name or _DEFAULT_EVENT, "\n".join(data))
