"""The event-stream grammar: names, joined data lines, comments, and the stream's end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from bingo.providers._sse import ServerEvent, events


async def _lines(lines: list[str]) -> AsyncIterator[str]:
    for line in lines:
        yield line


def _parse(lines: list[str]) -> list[ServerEvent]:
    async def main() -> list[ServerEvent]:
        async with asyncio.timeout(5):
            return [event async for event in events(_lines(lines))]

    return asyncio.run(main())


def test_a_blank_line_dispatches_the_named_event() -> None:
    got = _parse(["event: ping", 'data: {"type": "ping"}', ""])
    assert got == [ServerEvent("ping", '{"type": "ping"}')]


def test_an_event_without_a_name_is_a_message() -> None:
    assert _parse(["data: [DONE]", ""]) == [ServerEvent("message", "[DONE]")]


def test_data_lines_of_one_event_are_joined_with_newlines() -> None:
    assert _parse(["data: a", "data:b", "data:  c", ""]) == [ServerEvent("message", "a\nb\n c")]


def test_comments_ids_retries_and_empty_blocks_dispatch_nothing() -> None:
    got = _parse([": keep-alive", "", "id: 7", "retry: 10", "", "event: x", "", "data: y", ""])
    assert got == [ServerEvent("message", "y")]


def test_a_name_is_reset_after_each_dispatch() -> None:
    got = _parse(["event: one", "data: 1", "", "data: 2", ""])
    assert got == [ServerEvent("one", "1"), ServerEvent("message", "2")]


def test_a_last_event_without_its_blank_line_is_still_dispatched() -> None:
    assert _parse(["data: tail"]) == [ServerEvent("message", "tail")]


def test_line_endings_left_on_a_line_are_not_part_of_the_value() -> None:
    assert _parse(["data: x\r\n", "\r\n"]) == [ServerEvent("message", "x")]
