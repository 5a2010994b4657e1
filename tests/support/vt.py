"""A terminal the pty tests read: pyte's VT emulator, plus what a person can still scroll back
to, as one text (ADR-0041).

`Terminal.text()` is the scrollback followed by the screen's rows, one line per logical line:
a row the terminal wrapped at its right edge joins the next (as a terminal's copy does), and
a row ends after its last written character. A cell erased or never written is not a space
that was written: a row of written spaces keeps them (a code block's padding is seen), an
erased row is empty. Lines that scroll off the top are kept in order, so what was drawn
before stays at the same place in `text()` while the live area below it is redrawn.
"""

from __future__ import annotations

from typing import Any

import pyte
from pyte import modes
from pyte.screens import Char

_BLANK = "\x00"
"""A cell no character was written to (never, or erased since)."""


class _Screen(pyte.Screen):
    """pyte's screen, marking wrapped rows and erased cells, and keeping rows scrolled off."""

    def __init__(self, columns: int, lines: int) -> None:
        self.history: list[str] = []
        """Rows scrolled off the top, rendered; a wrapped row ends with `_WRAPPED`."""
        self.wrapped: set[int] = set()
        """Rows (by position on the screen) the terminal wrapped at the right edge."""
        self.touched: int | None = None
        """The highest row written or erased since `Terminal.touched` last asked, counted from
        the first row of the scrollback."""
        super().__init__(columns, lines)
        self.cursor.attrs = self.default_char

    @property
    def default_char(self) -> Char:
        return super().default_char._replace(data=_BLANK)

    def reset(self) -> None:
        super().reset()
        self.cursor.attrs = self.default_char
        self.wrapped = set()

    def _touch(self, y: int) -> None:
        row = len(self.history) + y
        self.touched = row if self.touched is None else min(self.touched, row)

    def draw(self, data: str) -> None:
        self._touch(self.cursor.y)
        for char in data:
            if self.cursor.x == self.columns and modes.DECAWM in self.mode:
                self.wrapped.add(self.cursor.y)
            super().draw(char)

    def index(self) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if self.cursor.y == bottom:
            if top == 0:
                self.history.append(self.row(0) + (_WRAPPED if 0 in self.wrapped else ""))
            self.wrapped = {y - 1 if top < y <= bottom else y for y in self.wrapped if y != top}
        super().index()

    def reverse_index(self) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if self.cursor.y == top:
            self._touch(top)
            self.wrapped = {y + 1 if top <= y < bottom else y for y in self.wrapped if y != bottom}
        super().reverse_index()

    def insert_lines(self, count: int | None = None) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if top <= self.cursor.y <= bottom:
            self._touch(self.cursor.y)
            n = count or 1
            self.wrapped = {y + n if self.cursor.y <= y <= bottom else y for y in self.wrapped}
            self.wrapped = {y for y in self.wrapped if y <= bottom or y > bottom + n}
        super().insert_lines(count)

    def delete_lines(self, count: int | None = None) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if top <= self.cursor.y <= bottom:
            self._touch(self.cursor.y)
            n = count or 1
            self.wrapped = {
                y - n if self.cursor.y + n <= y <= bottom else y
                for y in self.wrapped
                if not self.cursor.y <= y < self.cursor.y + n
            }
        super().delete_lines(count)

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        self._erasing(super().erase_in_line, how, private)
        if how in (0, 2):
            self.wrapped.discard(self.cursor.y)

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        self._erasing(super().erase_in_display, how, *args, **kwargs)
        rows = {0: range(self.cursor.y, self.lines), 1: range(self.cursor.y + 1)}.get(how, range(self.lines))
        self.wrapped -= set(rows)
        self._touch(rows.start)

    def erase_characters(self, count: int | None = None) -> None:
        self._erasing(super().erase_characters, count)

    def insert_characters(self, count: int | None = None) -> None:
        self._touch(self.cursor.y)
        super().insert_characters(count)

    def delete_characters(self, count: int | None = None) -> None:
        self._touch(self.cursor.y)
        super().delete_characters(count)

    def _erasing(self, erase: Any, *args: Any, **kwargs: Any) -> None:
        self._touch(self.cursor.y)
        attrs = self.cursor.attrs
        self.cursor.attrs = attrs._replace(data=_BLANK)
        try:
            erase(*args, **kwargs)
        finally:
            self.cursor.attrs = attrs

    def write_process_input(self, data: str) -> None:
        pass  # the test answers the terminal's reports itself (Screen's `cpr`)

    def row(self, y: int) -> str:
        """Row `y` as shown: up to its last written character, unwritten cells as blanks."""
        line = self.buffer[y]
        cells = [line[x].data for x in range(self.columns)]  # a wide character's second cell is ""
        return "".join(cells).rstrip(_BLANK).replace(_BLANK, " ")


_WRAPPED = "\x01"
"""Ends a kept row the terminal wrapped: the next row continues its logical line."""


class Terminal:
    """A `columns`×`lines` terminal fed what a program wrote to it."""

    __slots__ = ("_screen", "_stream")

    def __init__(self, columns: int, lines: int) -> None:
        self._screen = _Screen(columns, lines)
        self._stream = pyte.Stream(self._screen)

    def feed(self, data: str) -> None:
        self._stream.feed(data)

    def view(self) -> tuple[str, list[int], list[int]]:
        """The text (the scrollback, then the screen down to its last written row or the
        cursor's); for each row from the first of the scrollback, the offset in the text where
        it starts and where its logical line starts."""
        screen = self._screen
        rows = [screen.row(y) + (_WRAPPED if y in screen.wrapped else "") for y in range(screen.lines)]
        last = max([screen.cursor.y] + [y for y, row in enumerate(rows) if row])
        parts: list[str] = []
        starts: list[int] = []
        lines: list[int] = []
        at = line = 0
        for row in screen.history + rows[: last + 1]:
            starts.append(at)
            lines.append(line)
            wrapped = row.endswith(_WRAPPED)
            text = row.removesuffix(_WRAPPED)
            parts.append(text if wrapped else text + "\n")
            at += len(parts[-1])
            if not wrapped:
                line = at
        text = "".join(parts)
        return text.removesuffix("\n"), starts, lines

    def text(self) -> str:
        """The text of `view`."""
        return self.view()[0]

    def touched(self) -> int | None:
        """The highest row (counted as `view` counts them) written or erased since this was
        last asked, if any."""
        row, self._screen.touched = self._screen.touched, None
        return row
