"""The grep tool: `file:line:text`, filtered and bounded, never in `.git` or binary files."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from bingo.kernel.interfaces import ToolCall
from bingo.tools import GrepTool
from bingo.tools._common import in_thread
from bingo.wire import Json, TextPart, ToolOutput


def _grep(cwd: Path, raw: Json) -> ToolOutput:
    async def go() -> ToolOutput:
        async with asyncio.timeout(5):
            call = ToolCall(call_id="c1", input=raw, cwd=str(cwd), session="s", turn=1)
            return await GrepTool().call(call)

    return asyncio.run(go())


def _text(output: ToolOutput) -> str:
    (part,) = output.parts
    assert isinstance(part, TextPart)
    return part.text


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    _write(tmp_path, "b.py", "import os\ndef main():\n    return os.sep\n")
    _write(tmp_path, "a/x.py", "def helper():\n    pass\n")
    _write(tmp_path, "a/notes.md", "def is not code here\nDEF upper\n")
    _write(tmp_path, ".git/config", "def inside git\n")
    (tmp_path / "blob.bin").write_bytes(b"def\x00binary\n")
    return tmp_path


def test_grep_lists_file_line_text_by_path_then_line(tree: Path) -> None:
    output = _grep(tree, {"pattern": r"^def \w+"})
    assert not output.is_error
    assert _text(output) == ("a/notes.md:1:def is not code here\na/x.py:1:def helper():\nb.py:2:def main():")


def test_grep_can_ignore_case(tree: Path) -> None:
    output = _grep(tree, {"pattern": "^def u", "ignoreCase": True})
    assert _text(output) == "a/notes.md:2:DEF upper"


def test_grep_glob_filters_by_file_name(tree: Path) -> None:
    output = _grep(tree, {"pattern": "def", "glob": "*.py"})
    assert _text(output) == "a/x.py:1:def helper():\nb.py:2:def main():"


def test_grep_glob_with_a_slash_filters_by_path(tree: Path) -> None:
    output = _grep(tree, {"pattern": "def", "glob": "a/*.{py,txt}"})
    assert _text(output) == "a/x.py:1:def helper():"


def test_grep_searches_under_path_or_in_one_file(tree: Path) -> None:
    assert _text(_grep(tree, {"pattern": "pass", "path": "a"})) == "a/x.py:2:    pass"
    assert _text(_grep(tree, {"pattern": "os", "path": "b.py"})) == ("b.py:1:import os\nb.py:3:    return os.sep")


def test_grep_skips_git_and_binary_files(tree: Path) -> None:
    output = _grep(tree, {"pattern": "inside git|binary"})
    assert _text(output) == "No lines match 'inside git|binary'."


def test_grep_lists_at_most_500_lines_and_counts_the_rest(tmp_path: Path) -> None:
    _write(tmp_path, "many.txt", "hit\n" * 600)
    lines = _text(_grep(tmp_path, {"pattern": "hit"})).splitlines()
    assert len(lines) == 501
    assert lines[499] == "many.txt:500:hit"
    assert lines[-1] == "[100 more matching lines not shown: narrow the pattern, path or glob]"


def test_grep_cuts_overlong_lines(tmp_path: Path) -> None:
    _write(tmp_path, "wide.txt", "x" * 800 + "\n")
    assert _text(_grep(tmp_path, {"pattern": "x"})) == "wide.txt:1:" + "x" * 500 + "… [line cut]"


def test_grep_with_an_invalid_regex_names_the_problem(tmp_path: Path) -> None:
    output = _grep(tmp_path, {"pattern": "(unclosed"})
    assert output.is_error
    assert "invalid regular expression '(unclosed': missing ): (unclosed" in _text(output)


def test_look_around_and_backreferences_are_refused_saying_the_syntax_is_re2s(tmp_path: Path) -> None:
    for pattern, reason in (("(?<=a)b", "invalid perl operator: (?<="), (r"(a)\1", "invalid escape sequence: \\1")):
        output = _grep(tmp_path, {"pattern": pattern})
        assert output.is_error
        assert f"{reason}. Fix the pattern (RE2 syntax, as ripgrep's: no look-around or backreferences" in _text(output)


def test_each_line_matches_as_if_alone_in_blocks_searched_whole_and_across_their_bounds(tmp_path: Path) -> None:
    # A file is searched a block of lines at a time, whole first (`_grep._Pattern`): what a
    # line alone matches is found, on the right line, and nothing matches across two lines.
    lines = [f"filler {n}" for n in range(1, 10_001)]
    for number, text in (
        (1, "needle at the start"),
        (2000, "needle inside"),
        (4096, "the end is a needle"),
        (4097, "needle"),
        (9_000, "needle late"),
        (9_999, "x NEEDLE"),
    ):
        lines[number - 1] = text
    lines[4999], lines[5000] = "ends with a", "b starts this one"
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "crlf.txt").write_bytes(b"one\r\nfoo\r\nthree\r\n")

    def found(pattern: str, **more: Json) -> list[str]:
        return _text(_grep(tmp_path, {"pattern": pattern, **more})).splitlines()

    starts = [
        "big.txt:1:needle at the start",
        "big.txt:2000:needle inside",
        "big.txt:4097:needle",
        "big.txt:9000:needle late",
    ]
    assert found("^needle") == starts
    assert found("needle$") == ["big.txt:4096:the end is a needle", "big.txt:4097:needle"]
    assert found(r"\Aneedle") == found("^needle")  # the start of each line, as a line alone
    assert found("needle", ignoreCase=True)[-1] == "big.txt:9999:x NEEDLE"
    assert found(r"a\sb") == ["No lines match 'a\\\\sb'."]
    assert found(r"a[^x]*b") == ["No lines match 'a[^x]*b'."]  # "ends with a" / "b starts this one"
    assert found("^foo$") == ["crlf.txt:2:foo"]


def test_a_line_with_many_matches_is_one_hit_and_an_empty_match_moves_on_to_the_next_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"aaa aaa\nb\n\xff\xfe caf\xc3\xa9 a\n")
    many = _text(_grep(tmp_path, {"pattern": "a"})).splitlines()
    assert many == ["a.txt:1:aaa aaa", "a.txt:3:\ufffd\ufffd café a"]  # bytes not UTF-8 shown replaced
    assert _text(_grep(tmp_path, {"pattern": "x*"})).splitlines() == ["a.txt:1:aaa aaa", "a.txt:2:b", many[1]]
    assert _text(_grep(tmp_path, {"pattern": "café"})).splitlines() == [many[1]]


def test_grep_in_a_missing_path_is_an_error(tmp_path: Path) -> None:
    output = _grep(tmp_path, {"pattern": "x", "path": "gone"})
    assert output.is_error
    assert "does not exist" in _text(output)


def test_grep_answers_bad_input_with_an_error_naming_the_field(tmp_path: Path) -> None:
    output = _grep(tmp_path, {"pattern": "x", "ignoreCase": "yes"})
    assert output.is_error
    assert "$.ignoreCase" in _text(output)


def test_grep_pattern_that_re_warns_about_is_searched_quietly(tmp_path: Path) -> None:
    _write(tmp_path, "s.txt", "[[x\n")
    assert _text(_grep(tmp_path, {"pattern": "[[]"})) == "s.txt:1:[[x"


def test_cancelling_threaded_work_tells_the_thread_to_stop() -> None:
    started = threading.Event()
    seen_stop = threading.Event()

    def work(stop: threading.Event) -> None:
        started.set()
        if stop.wait(5):
            seen_stop.set()

    async def go() -> None:
        async with asyncio.timeout(5):
            task = asyncio.create_task(in_thread(work))
            await asyncio.to_thread(started.wait, 5)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.to_thread(seen_stop.wait, 5)

    asyncio.run(go())
    assert seen_stop.is_set()


def test_a_pattern_matching_nothing_finds_no_line_past_a_files_end(tmp_path: Path) -> None:
    # A file of exactly one block of lines (4,096) is read as that block and an empty one; an
    # empty file as an empty one: neither has a line for `^` or `x*` to match.
    (tmp_path / "block.txt").write_text("line\n" * 4096)
    (tmp_path / "empty.txt").write_text("")
    output = _text(_grep(tmp_path, {"pattern": "^", "path": "block.txt"}))
    assert output.endswith("[3596 more matching lines not shown: narrow the pattern, path or glob]")
    assert _text(_grep(tmp_path, {"pattern": "x*", "path": "empty.txt"})) == "No lines match 'x*'."
