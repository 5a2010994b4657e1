"""The bounded line splitter: lines split as the event-stream grammar splits them, however
the body is cut into chunks, and a line past the limit said once, as soon as it passes it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

from bingo.kernel.lines import Overlong, bounded_lines, head_bytes


async def _chunks(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def _lines(chunks: list[bytes], limit: int) -> list[bytes | str]:
    async def run() -> list[bytes | str]:
        return [line if isinstance(line, bytes) else "overlong" async for line in bounded_lines(_chunks(chunks), limit)]

    return asyncio.run(run())


def _cut(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out: list[bytes] = []
    at = 0
    while at < len(data):
        size = rng.randint(0, 7)
        out.append(data[at : at + size])
        at += size
    return out


def test_lines_end_at_lf_crlf_or_cr_however_the_body_is_cut() -> None:
    data = b"a\r\nbb\rccc\n\ndddd\r\r\neee"
    for seed in range(300):
        assert _lines(_cut(data, seed), 10) == [b"a", b"bb", b"ccc", b"", b"dddd", b"", b"eee"], seed


def test_a_line_past_the_limit_is_said_once_and_the_next_line_still_arrives() -> None:
    data = b"a\n" + b"x" * 30 + b"\nok\n" + b"y" * 12
    for seed in range(300):
        assert _lines(_cut(data, seed), 10) == [b"a", "overlong", b"ok", "overlong"], seed


def test_an_overlong_line_is_said_before_it_ends() -> None:
    async def first() -> bytes | Overlong:
        async def endless() -> AsyncIterator[bytes]:
            while True:
                yield b"x" * 1000

        async for line in bounded_lines(endless(), 5000):
            return line
        raise AssertionError("no line")

    said = asyncio.run(first())
    assert isinstance(said, Overlong) and 5000 < said.size <= 6000


def test_head_bytes_reads_no_further_than_it_keeps() -> None:
    read: list[int] = []

    async def body() -> AsyncIterator[bytes]:
        for n in range(100):
            read.append(n)
            yield b"abcd"

    assert asyncio.run(head_bytes(body(), 10)) == b"abcdabcdab"
    assert read == [0, 1, 2]
