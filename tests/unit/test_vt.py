"""The terminal the pty tests read (tests/support/vt.py): what a person sees, as text. A
redraw in place leaves only what it drew; a line wrapped at the edge is one line; what
scrolled off stays above; an erased cell is not a written space."""

from __future__ import annotations

from tests.support.vt import Terminal


def test_a_streamed_word_split_by_a_redraw_of_the_live_area_reads_whole() -> None:
    # "Thin" streamed, the live area (working line, prompt) drawn under it, then erased and
    # redrawn with the rest of the word: the raw stream has "Thin", the working line, "king".
    term = Terminal(40, 6)
    term.feed("> go\r\nThin\r\nworking · Ctrl-C interrupts\r\n> ")
    term.feed("\x1b[2A\r\x1b[J")  # up to the live area's top, erase down
    term.feed("Thinking\r\nworking · Ctrl-C interrupts\r\n> ")
    assert term.text() == "> go\nThinking\nworking · Ctrl-C interrupts\n> "


def test_a_line_wrapped_at_the_right_edge_is_one_line() -> None:
    term = Terminal(10, 4)
    term.feed("0123456789abcdef\r\nnext")
    assert term.text() == "0123456789abcdef\nnext"


def test_rows_that_scroll_off_the_top_stay_above_the_screen_in_order() -> None:
    term = Terminal(20, 3)
    term.feed("".join(f"line {n}\r\n" for n in range(6)) + "last")
    assert term.text() == "line 0\nline 1\nline 2\nline 3\nline 4\nline 5\nlast"
    view, starts, lines = term.view()
    assert view[starts[2] :].startswith("line 2") and lines == starts  # nothing wrapped


def test_a_wrapped_row_that_scrolls_off_still_joins_the_next() -> None:
    term = Terminal(5, 2)
    term.feed("abcdefgh\r\nx\r\ny\r\nz")
    assert term.text() == "abcdefgh\nx\ny\nz"
    _, starts, lines = term.view()
    assert starts[1] == 5 and lines[1] == 0  # the second row continues the first's line


def test_written_spaces_are_kept_and_erased_or_unwritten_cells_are_not() -> None:
    term = Terminal(20, 5)
    term.feed("pad   \r\n" + " " * 8 + "\r\n\x1b[5Cmid\r\nerased\x1b[3D\x1b[K")
    assert term.text() == "pad   \n        \n     mid\nera"


def test_touched_is_the_highest_row_written_or_erased_since_last_asked() -> None:
    term = Terminal(20, 5)
    term.feed("a\r\nb\r\nc")
    assert term.touched() == 0
    assert term.touched() is None
    term.feed("\x1b[1A\r\x1b[J")  # the row of "b" erased, and all below it
    assert term.touched() == 1
    assert term.text() == "a\n"  # down to the row the cursor is on
