"""Server-sent events: turns the lines of a streamed HTTP body into events.

Owns the event-stream grammar (WHATWG HTML, "Parsing an event stream") as far as the two
model APIs use it: `event:` names an event, `data:` lines are joined with newlines, a blank
line dispatches, a line starting with `:` is a comment, `id:` and `retry:` are ignored.
It does not decode the data (each provider does, into its own types), does no I/O and knows
no HTTP: its input is any async iterator of lines (httpx's `aiter_lines()` in use, a list in
tests), already split on `\\r\\n`, `\\n` or `\\r`.

Hand-written rather than `httpx-sse`: the grammar is forty lines, and owning them keeps the
dependency list at msgspec and httpx and lets a malformed stream stay a value for the
provider to judge instead of a foreign exception to map.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable

import msgspec

__all__ = ["ServerEvent", "events"]

_DEFAULT_EVENT = "message"
"""The event name when a block has no `event:` line (what OpenAI-style streams send)."""


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


async def events(lines: AsyncIterable[str]) -> AsyncGenerator[ServerEvent, None]:
    """The events in `lines`, in order.

    A block with no data dispatches nothing (the grammar says so). At the end of the lines a
    block still pending is dispatched too: some compatible servers omit the final blank line,
    and a truncated event is still judged by the provider that decodes it."""
    name = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield ServerEvent(name or _DEFAULT_EVENT, "\n".join(data))
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, value = _field(line)
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:
        yield ServerEvent(name or _DEFAULT_EVENT, "\n".join(data))
