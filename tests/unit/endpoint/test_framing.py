"""The line discipline: one message per line, bad lines are values, long lines are dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import msgspec

from bingo.endpoint._framing import MAX_LINE, BadLine, LineReader, memory_pair


class _Msg(msgspec.Struct):
    n: int


_decode = msgspec.json.Decoder(_Msg).decode


def _read_all(
    data: bytes,
    *,
    limit: int = 64,
    decode: Callable[[bytes], _Msg] = _decode,
    deep: Callable[[bytes], _Msg | None] | None = None,
) -> list[_Msg | BadLine]:
    async def main() -> list[_Msg | BadLine]:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(data)
        reader.feed_eof()
        lines = LineReader(reader, decode, deep)
        out: list[_Msg | BadLine] = []
        async with asyncio.timeout(5):
            while (item := await lines.read()) is not None:
                out.append(item)
        return out

    return asyncio.run(main())


def test_each_line_is_one_message_and_a_last_line_needs_no_newline() -> None:
    assert _read_all(b'{"n":1}\n\n{"n":2}\n{"n":3}') == [_Msg(1), _Msg(2), _Msg(3)]


def test_not_json_and_bad_utf8_are_values_not_exceptions() -> None:
    items = _read_all(b'hello\n{"n":"\xff"}\n[1]\n{"n":4}\n')
    assert [type(i) for i in items] == [BadLine, BadLine, BadLine, _Msg]
    bad = items[0]
    assert isinstance(bad, BadLine) and bad.preview == "hello"
    assert isinstance(items[2], BadLine) and items[2].reason.startswith("not a message")


def test_a_line_past_the_limit_is_discarded_up_to_its_newline() -> None:
    long = b'{"n":' + b"1" * 500 + b"}\n"
    items = _read_all(b'{"n":1}\n' + long + b'{"n":2}\n', limit=64)
    assert items[0] == _Msg(1)
    assert isinstance(items[1], BadLine) and "longer than the limit" in items[1].reason
    assert items[2] == _Msg(2)
    assert len(items) == 3


def test_a_long_line_arriving_in_pieces_is_discarded_without_losing_the_next() -> None:
    async def main() -> list[_Msg | BadLine]:
        reader = asyncio.StreamReader(limit=32)
        lines = LineReader(reader, _decode)

        async def feed() -> None:
            for _ in range(10):
                reader.feed_data(b"x" * 30)
                await asyncio.sleep(0)
            reader.feed_data(b'\n{"n":7}\n')
            reader.feed_eof()

        out: list[_Msg | BadLine] = []
        async with asyncio.timeout(5), asyncio.TaskGroup() as tg:
            tg.create_task(feed())
            while (item := await lines.read()) is not None:
                out.append(item)
        return out

    items = asyncio.run(main())
    assert isinstance(items[0], BadLine)
    assert items[1:] == [_Msg(7)]


def test_the_memory_pair_carries_bytes_both_ways_and_close_is_eof() -> None:
    async def main() -> tuple[bytes, bytes, bytes]:
        (a_reader, a_writer), (b_reader, b_writer) = memory_pair()
        a_writer.write(b"to b\n")
        b_writer.write(b"to a\n")
        a_writer.close()
        async with asyncio.timeout(5):
            return await b_reader.readline(), await a_reader.readline(), await b_reader.read()

    assert asyncio.run(main()) == (b"to b\n", b"to a\n", b"")


_DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"
"""A line nested 100 000 deep: msgspec would recurse until RecursionError."""
_TOO_DEEP = "nested too deeply (more than 128 levels)"


def test_a_line_nested_too_deeply_is_a_bad_line_and_the_next_is_read() -> None:
    items = _read_all(_DEEP + b'{"n":2}\n', limit=MAX_LINE)
    assert items == [BadLine(_TOO_DEEP, "[" * 200), _Msg(2)]


def test_a_deep_line_goes_to_the_deep_reader_which_may_still_read_it() -> None:
    offered: list[int] = []

    def deep(line: bytes) -> _Msg | None:
        offered.append(len(line))
        return _Msg(len(offered)) if len(offered) == 1 else None

    items = _read_all(_DEEP + _DEEP + b'{"n":3}\n', limit=MAX_LINE, deep=deep)
    assert items == [_Msg(1), BadLine(_TOO_DEEP, "[" * 200), _Msg(3)]
    assert offered == [len(_DEEP), len(_DEEP)]


def test_a_deep_line_too_long_to_read_cheaply_is_not_offered() -> None:
    offered: list[bytes] = []

    def deep(line: bytes) -> _Msg | None:
        offered.append(line)
        return _Msg(0)

    huge = b"[" * 600_000 + b"]" * 600_000 + b"\n"  # past 1 MiB
    assert _read_all(huge, limit=MAX_LINE, deep=deep) == [BadLine(_TOO_DEEP, "[" * 200)]
    assert offered == []


def test_a_decoder_that_runs_out_of_stack_gives_a_bad_line_not_an_exception() -> None:
    def decode(line: bytes) -> _Msg:
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    assert _read_all(b'{"n":1}\n', decode=decode) == [BadLine(_TOO_DEEP, '{"n":1}')]
