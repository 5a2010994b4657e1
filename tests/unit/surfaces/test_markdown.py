"""Model text cut into markdown blocks as it streams (`terminal._markdown.Blocks`), and a
block rendered (`terminal._draw.markdown`): bold drawn bold, code highlighted, nothing of the
model's reaching the terminal as an escape sequence."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from bingo.surfaces.terminal._draw import markdown
from bingo.surfaces.terminal._markdown import Blocks


def _fed(*deltas: str) -> tuple[list[str], str | None]:
    blocks = Blocks()
    done = [block for delta in deltas for block in blocks.feed(delta)]
    return done, blocks.rest()


def test_a_block_ends_at_a_blank_line_even_when_the_newlines_arrive_apart() -> None:
    assert _fed("First para", "graph.\n", "\n", "Second ", "one.") == (["First paragraph."], "Second one.")
    assert _fed("a\r\n\r\nb\n\n\n\nc\n") == (["a", "b"], "c")


def test_a_code_fence_holds_its_blank_lines_and_ends_its_block() -> None:
    text = "Look:\n```python\ndef f():\n\n    return 1\n```\nAfter.\n\n"
    assert _fed(*[text[i : i + 5] for i in range(0, len(text), 5)]) == (
        ["Look:\n```python\ndef f():\n\n    return 1\n```", "After."],
        None,
    )
    # A shorter or different fence closes nothing; an unclosed one ends with the text.
    assert _fed("````\n```\n~~~\n\nx\n") == ([], "````\n```\n~~~\n\nx")


def test_the_live_area_sees_the_last_lines_of_the_unfinished_block() -> None:
    blocks = Blocks()
    assert blocks.feed("one\ntwo\nthr") == []
    assert blocks.pending() == "one\ntwo\nthr"
    blocks.feed("ee\n" + "".join(f"{n}\n" for n in range(10)))
    assert blocks.pending() == "4\n5\n6\n7\n8\n9"
    assert Blocks().pending() == ""


def _shown(text: str, color: bool = False) -> str:
    out = StringIO()
    Console(file=out, width=60, color_system="standard" if color else None, force_terminal=color).print(markdown(text))
    return out.getvalue()


def test_bold_is_drawn_bold_and_a_fence_is_highlighted() -> None:
    shown = _shown("It has **9 words** in it.", color=True)
    assert "\x1b[1m9 words\x1b[0m" in shown and "*" not in shown
    code = _shown("```python\ndef f():\n    return 1\n```", color=True)
    assert "def" in code and "return" in code and code.count("\x1b[") > 4  # keywords coloured


def test_no_escape_sequence_of_the_models_reaches_the_terminal() -> None:
    hostile = "Title \x1b]0;pwned\x07 and [a link](https://example.com/\x1b[2J) and ![img](https://e.com/i.png) `\x1b[31m`\n\n```\n\x1b]52;c;SGVsbG8=\x07\n```"
    shown = _shown(hostile, color=True)
    # Every ESC left is rich's own SGR (a style); none opens an OSC (title, clipboard, hyperlink).
    assert "\x1b]" not in shown and "\x07" not in shown
    assert all(
        shown[i + 1] == "[" and shown[i + 2 : shown.index("m", i)].replace(";", "").isdigit()
        for i, c in enumerate(shown)
        if c == "\x1b"
    )
    assert "\\x1b]0;pwned" in shown
    assert "https://example.com" in _shown("[a link](https://example.com)")  # the address is shown as text
