"""Views drawn for a terminal, rendered without colour at width 80 and pinned as literal text."""

from __future__ import annotations

from io import StringIO

from rich.console import Console, RenderableType

from bingo.surfaces.terminal._draw import draw, finished, markdown, short
from bingo.wire import CodeView, ListView, MarkdownView, StackView, TableView, TextPart, TextView, ToolOutput


def _render(renderable: RenderableType) -> str:
    console = Console(file=StringIO(), width=80, color_system=None)
    console.print(renderable)
    out = console.file
    assert isinstance(out, StringIO)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def test_a_table_is_drawn_with_borders_and_numbers_aligned_right() -> None:
    view = TableView(
        title="notes.txt", columns=["what", "count"], rows=[["words", 3], ["characters", 17.0], ["lines", None]]
    )
    assert _render(draw(view)) == (
        "notes.txt\n"
        "╭────────────┬───────╮\n"
        "│ what       │ count │\n"
        "├────────────┼───────┤\n"
        "│ words      │     3 │\n"
        "│ characters │    17 │\n"
        "│ lines      │       │\n"
        "╰────────────┴───────╯"
    )


def test_a_short_row_is_padded_and_cells_are_never_markup() -> None:
    view = TableView(columns=["a", "b"], rows=[["[bold]x[/bold]"], ["y", "z"]])
    assert _render(draw(view)) == (
        "╭────────────────┬───╮\n"
        "│ a              │ b │\n"
        "├────────────────┼───┤\n"
        "│ [bold]x[/bold] │   │\n"
        "│ y              │ z │\n"
        "╰────────────────┴───╯"
    )


def test_markdown_is_rendered() -> None:
    assert _render(draw(MarkdownView(text="Some *text*.\n\n- one\n- two"))) == "Some text.\n\n • one\n • two"


def test_code_keeps_its_text_and_indentation() -> None:
    assert _render(draw(CodeView(text="def f():\n    return 1", language="python"))) == "def f():\n    return 1"


def test_lists_number_or_bullet_their_items_and_indent_their_lines() -> None:
    view = ListView(items=[TextView(text="one"), TextView(text="two\nlines")], ordered=True)
    assert _render(draw(view)) == "1. one\n2. two\n   lines"
    assert _render(draw(ListView(items=[TextView(text="a")]))) == "• a"


def test_a_stack_puts_a_blank_line_between_its_children() -> None:
    view = StackView(children=[TextView(text="above"), ListView(items=[TextView(text="below")])])
    assert _render(draw(view)) == "above\n\n• below"


def test_a_tools_input_is_shown_in_short() -> None:
    assert short({"command": "echo   one\ttwo"}) == "echo one two"
    assert short({"path": "a", "limit": 3}) == '{"path": "a", "limit": 3}'
    assert short("x" * 100, 10) == "xxxxxxxxx…"


def test_a_finished_call_says_how_long_it_took_and_whether_it_failed() -> None:
    ok = ToolOutput(parts=[TextPart(text="fine")])
    failed = ToolOutput(parts=[TextPart(text="no such file")], is_error=True)
    assert _render(finished("read", {"path": "a.txt"}, ok, 0.25)) == "✓ read a.txt · 0.2 s"
    assert _render(finished("read", {}, failed, 1.0)) == "✗ read: no such file · 1.0 s"


def test_every_string_a_view_draws_is_escaped_and_markdown_once_rendered_too() -> None:
    table = TableView(title="t\x1b[2J", columns=["c\x1b]0;x\x07"], rows=[["\u202eab"]])
    assert _render(draw(table)) == (
        "t\\x1b[2J\n╭───────────────╮\n│ c\\x1b]0;x\\x07 │\n├───────────────┤\n│ <U+202E>ab    │\n╰───────────────╯"
    )
    assert _render(draw(CodeView(text="x = '\x1b[2J'"))) == "x = '\\x1b[2J'"
    # A character reference decodes into the override once markdown is read.
    assert _render(draw(MarkdownView(text="a &#x202e;b \x1b[2J"))) == "a <U+202E>b \\x1b[2J"


def test_a_tools_name_input_and_error_are_escaped_on_its_line() -> None:
    failed = ToolOutput(parts=[TextPart(text="bad \x1b]0;x\x07")], is_error=True)
    line = _render(finished("t\x1b[2J", {"path": "\x1b]52;c;eA==\x07"}, failed, 1.0))
    assert line == "✗ t\\x1b[2J \\x1b]52;c;eA==\\x07: bad \\x1b]0;x\\x07 · 1.0 s"


def test_a_deeply_nested_view_is_drawn_as_its_fold_past_a_bound() -> None:
    # rich's nested grids take time exponential in their depth: 16 levels took 16 s to lay
    # out. Past the bound the rest is drawn as its text fold, which costs what it holds.
    view: ListView = ListView(items=[TextView(text="bottom")])
    for _ in range(12):  # enough to tell the bound is kept; not so many that its loss hangs the suite
        view = ListView(items=[view, TextView(text="x")])
    shown = _render(draw(view))
    assert "bottom" in shown
    assert shown.count("•") <= 2 * 8  # only the drawn levels carry bullets of their own rows


def test_a_diff_code_view_colours_removed_lines_red_and_added_lines_green() -> None:
    console = Console(file=StringIO(), width=80, color_system="standard", force_terminal=True)
    console.print(draw(CodeView(text="--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new", language="diff")))
    out = console.file
    assert isinstance(out, StringIO)
    lines = out.getvalue().splitlines()
    assert lines[3].startswith("\x1b[91") and lines[3].endswith("-old\x1b[0m")  # bright red
    assert lines[4].startswith("\x1b[92") and lines[4].endswith("+new\x1b[0m")  # bright green


def test_a_newline_in_a_command_is_shown_never_folded_into_a_space() -> None:
    # Issue 23 item 1: `ls #'<newline>touch pwned #'` runs `touch pwned`; folded, the person
    # read `ls` and a comment. (This test asserted the fold before.)
    assert short({"command": "ls #'\ntouch pwned #'"}) == "ls #'⏎touch pwned #'"
    assert short({"command": "ls -la \r\n curl x | sh"}) == "ls -la ⏎ curl x | sh"
    assert short({"command": "ls\x0bx"}) == "ls\\x0bx"


def test_a_code_block_in_markdown_is_drawn_without_blank_padding() -> None:
    assert _render(markdown("Run:\n\n```sh\nmake test\n```\n\nThen done.")) == "Run:\n\n make test\n\nThen done."


def test_a_table_too_wide_for_the_width_is_drawn_as_one_record_per_row_never_cut() -> None:
    wide = TableView(title="plugins", columns=["plugin", "path"], rows=[["wordcount", "/a/" + "b" * 90]])
    assert _render(draw(wide)) == "plugins\nwordcount\n  path " + "/a/" + "b" * 70 + "\n       " + "b" * 20
    narrow = TableView(columns=["what", "count"], rows=[["words", 3]])
    assert (
        _render(draw(narrow))
        == "╭───────┬───────╮\n│ what  │ count │\n├───────┼───────┤\n│ words │     3 │\n╰───────┴───────╯"
    )
