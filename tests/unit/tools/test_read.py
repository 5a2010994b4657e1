"""The read tool: numbered lines, its window and bounds, and its polite refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bingo.kernel.interfaces import ToolCall
from bingo.tools import ReadTool
from bingo.wire import Json, TextPart, ToolOutput


def _read(cwd: Path, raw: Json) -> ToolOutput:
    async def go() -> ToolOutput:
        async with asyncio.timeout(5):
            call = ToolCall(call_id="c1", input=raw, cwd=str(cwd), session="s", turn=1)
            return await ReadTool().call(call)

    return asyncio.run(go())


def _text(output: ToolOutput) -> str:
    (part,) = output.parts
    assert isinstance(part, TextPart)
    return part.text


def test_read_numbers_lines_like_cat_n(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\r\n\ngamma")
    output = _read(tmp_path, {"path": "notes.txt"})
    assert not output.is_error
    assert _text(output) == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


def test_read_takes_an_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    output = _read(Path("/"), {"path": str(tmp_path / "a.txt")})
    assert _text(output) == "     1\tx"


def test_read_shows_the_window_and_says_where_to_continue(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    output = _read(tmp_path, {"path": "f.txt", "offset": 3, "limit": 2})
    assert _text(output) == ("     3\tline 3\n     4\tline 4\n[6 more lines: read again with offset=5 to continue]")


def test_read_shows_at_most_2000_lines_by_default(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"{n}\n" for n in range(1, 2101)))
    lines = _text(_read(tmp_path, {"path": "big.txt"})).splitlines()
    assert len(lines) == 2001
    assert lines[-2] == "  2000\t2000"
    assert lines[-1] == "[100 more lines: read again with offset=2001 to continue]"


def test_read_cuts_overlong_lines(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("y" * 2500 + "\nshort\n")
    lines = _text(_read(tmp_path, {"path": "wide.txt"})).splitlines()
    assert lines[0] == "     1\t" + "y" * 2000 + "… [line cut: 500 more characters]"
    assert lines[1] == "     2\tshort"


def test_read_refuses_a_binary_file_as_an_error_output(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x89PNG\r\n\x00\x00\x01")
    output = _read(tmp_path, {"path": "blob.bin"})
    assert output.is_error
    assert "binary file (9 bytes)" in _text(output)


def test_read_of_a_missing_file_says_what_and_what_to_do(tmp_path: Path) -> None:
    output = _read(tmp_path, {"path": "nope.txt"})
    assert output.is_error
    assert _text(output) == (
        f"{tmp_path / 'nope.txt'} does not exist. Check the path (relative paths start at the "
        "working directory), or use glob to find the file."
    )


def test_read_of_a_directory_points_at_glob(tmp_path: Path) -> None:
    output = _read(tmp_path, {"path": "."})
    assert output.is_error
    assert "is a directory" in _text(output)
    assert "glob" in _text(output)


def test_read_of_an_empty_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("")
    output = _read(tmp_path, {"path": "empty.txt"})
    assert not output.is_error
    assert _text(output) == "empty.txt is empty."


def test_read_past_the_end_says_how_long_the_file_is(tmp_path: Path) -> None:
    (tmp_path / "short.txt").write_text("a\nb\n")
    output = _read(tmp_path, {"path": "short.txt", "offset": 9})
    assert _text(output) == ("short.txt has 2 lines; offset 9 is past its end. Read again with a smaller offset.")


def test_read_replaces_undecodable_bytes(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    assert _text(_read(tmp_path, {"path": "latin.txt"})) == "     1\tcaf\ufffd"


def test_read_answers_bad_input_with_an_error_naming_the_field(tmp_path: Path) -> None:
    cases: list[tuple[Json, str]] = [
        ({"path": "a", "offset": 0}, "$.offset"),
        ({"path": "a", "limit": "ten"}, "$.limit"),
        ({"path": 7}, "$.path"),
        ({}, "`path`"),
        (None, "object"),
    ]
    for raw, named in cases:
        output = _read(tmp_path, raw)
        assert output.is_error
        assert named in _text(output)
        assert _text(output).startswith("read: invalid input: ")


def test_read_counts_the_lines_past_the_window_even_a_last_one_without_newline(tmp_path: Path) -> None:
    # Past the window lines are counted a block (1 MiB) at a time: 3 MB of lines, then one
    # with no newline, and a line that straddles a block boundary somewhere in between.
    (tmp_path / "big.txt").write_bytes(b"".join(b"%07d\n" % n for n in range(375_000)) + b"tail")
    text = _text(_read(tmp_path, {"path": "big.txt", "offset": 2, "limit": 2}))
    assert text == "     2\t0000001\n     3\t0000002\n[374998 more lines: read again with offset=4 to continue]"


def test_a_line_longer_than_a_piece_is_cut_counted_and_the_lines_around_it_kept(tmp_path: Path) -> None:
    # 200 000 characters, past _PIECE (64 KiB): read in pieces, the count still exact, and
    # multi-byte characters split across pieces still counted as characters.
    long = "a" + "é" * 100_000 + "x" * 100_000  # the "a" puts piece boundaries inside an "é"
    (tmp_path / "long.txt").write_text(f"first\n{long}\r\nthird\nfourth")
    assert _text(_read(tmp_path, {"path": "long.txt"})) == (
        f"     1\tfirst\n     2\ta{'é' * 1999}… [line cut: 198001 more characters]\n     3\tthird\n     4\tfourth"
    )
    assert _text(_read(tmp_path, {"path": "long.txt", "offset": 3, "limit": 1})) == (
        "     3\tthird\n[1 more lines: read again with offset=4 to continue]"
    )
    assert _text(_read(tmp_path, {"path": "long.txt", "offset": 2, "limit": 1})).endswith(
        "[line cut: 198001 more characters]\n[2 more lines: read again with offset=3 to continue]"
    )
