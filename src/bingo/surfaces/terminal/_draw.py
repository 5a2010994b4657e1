"""Drawing for the terminal: each View as a rich renderable, and the one-line summaries a
turn shows (a tool call's input in short, a finished call).

Owns how each View shape looks on a terminal: a table with borders (numbers right-aligned,
as in the fold), markdown rendered, code highlighted, lists and stacks composed of their
parts. Every text crosses as `Text`, never as markup, so nothing a plugin or a model says is
read as rich markup, and is escaped (`surfaces.escape`) as it becomes a `Text`: rich keeps
ESC, so a View's cell or a tool's input could otherwise draw on the person's terminal.
Markdown is escaped once rendered instead: its character references (`&#x202e;`) decode
into what an earlier escape would have caught, and escaped text read as markdown loses a
backslash. It writes nothing: the surface prints what this returns.
"""

from __future__ import annotations

import json
import re

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.measure import Measurement
from rich.segment import Segment
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from ...wire import (
    CodeView,
    Json,
    ListView,
    MarkdownView,
    StackView,
    TableView,
    TextView,
    ToolOutput,
    View,
    fold,
    is_object,
)
from .._calls import call_line
from .._escape import escape, one_line

__all__ = ["draw", "finished", "markdown", "result", "short"]

_SHORT = 60
"""Characters of a tool's input shown on its one line."""
_BLANKS = re.compile(r"[ \t]+")
"""Runs of blanks in a short input, folded to one space (a newline is shown, never folded)."""
_UNBOUNDED = 1 << 20
"""A width no table reaches: what a table is measured in to learn its natural width."""
_NESTED_MAX = 6
"""Lists and stacks drawn inside one another; deeper, a View is drawn as its text fold. rich
lays nested grids out in time exponential in their depth (a list 16 deep took 16 s to draw),
so a small View from a plugin could otherwise freeze the terminal."""


def draw(view: View, depth: int = 0) -> RenderableType:
    """The renderable for `view`, every string it shows escaped."""
    if depth > _NESTED_MAX and isinstance(view, (ListView, StackView)):
        return Text(escape(fold(view)))
    match view:
        case TextView(text=text):
            return Text(escape(text))
        case MarkdownView(text=text):
            return markdown(text)
        case CodeView(text=text, language=language):
            return Syntax(
                escape(text), language or "text", theme="ansi_dark", background_color="default", word_wrap=True
            )
        case TableView():
            return _table(view)
        case ListView(items=items, ordered=ordered):
            grid = Table.grid(padding=(0, 1))
            grid.add_column(no_wrap=True)
            grid.add_column()
            for n, item in enumerate(items, 1):
                grid.add_row(Text(f"{n}." if ordered else "•"), draw(item, depth + 1))
            return grid
        case StackView(children=children):
            parts: list[RenderableType] = []
            for child in children:
                if parts:
                    parts.append(Text())
                parts.append(draw(child, depth + 1))
            return Group(*parts)


def markdown(text: str) -> RenderableType:
    """`text` rendered as markdown (a View's, or a block of the model's), escaped once
    rendered. Links are drawn as their text and address, never as terminal hyperlinks: an
    OSC 8 sequence would carry the address, which is foreign, to the terminal as an escape
    sequence (`_Rendered` escapes text, not styles). Code is highlighted with the terminal's
    own palette, on its own background."""
    return _Rendered(_Markdown(text, code_theme="ansi_dark", hyperlinks=False))


class _Code(CodeBlock):
    """A code block drawn as its lines, without the blank line rich pads it with above and
    below (issue 25 item 11): the block is set off by the blank lines around it already."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Syntax(str(self.text).rstrip(), self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 1))


class _Markdown(Markdown):
    """rich's Markdown, its code blocks drawn by `_Code`."""

    elements = {**Markdown.elements, "fence": _Code, "code_block": _Code}


class _Rendered:
    """A renderable whose text is escaped once drawn (rich's own control segments pass)."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            if segment.control is None:
                shown = escape(segment.text)
                style = segment.style
                if style is not None and style.link:
                    style = style.update_link(None)  # a hyperlink is an escape sequence holding its address
                if shown is not segment.text or style is not segment.style:
                    segment = Segment(shown, style)
            yield segment


def _cell(value: str | int | float | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _table(view: TableView) -> RenderableType:
    return _Fitted(_bordered(view), view)


class _Fitted:
    """A table drawn with borders when its columns fit the width it is given whole; else
    one record per row (its first cell, then each other column's name and value), folded
    to the width and never cut: a table squeezed into a narrow terminal cuts its cells to
    `plug…` (issue 25 item 11)."""

    def __init__(self, table: Table, view: TableView) -> None:
        self.table = table
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Measured unbounded: rich clamps a measurement to the width it is given.
        if Measurement.get(console, options.update_width(_UNBOUNDED), self.table).maximum <= options.max_width:
            yield self.table
            return
        yield from _records(self.view)


def _records(view: TableView) -> list[RenderableType]:
    width = max([len(view.columns)] + [len(row) for row in view.rows])
    names = [escape(name) for name in view.columns + [""] * (width - len(view.columns))]
    drawn: list[RenderableType] = [Text(escape(view.title), style="bold")] if view.title else []
    for row in view.rows:
        cells = [escape(_cell(c)) for c in row + [None] * (width - len(row))]
        drawn.append(Text(cells[0] if cells else "", style="bold", overflow="fold"))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        for name, cell in zip(names[1:], cells[1:]):
            grid.add_row(Text(f"  {name}"), Text(cell, overflow="fold"))
        drawn.append(grid)
    return drawn


def _bordered(view: TableView) -> Table:
    width = max([len(view.columns)] + [len(row) for row in view.rows])
    header = view.columns + [""] * (width - len(view.columns))
    numeric = [
        bool(view.rows)
        and all(
            i >= len(r) or r[i] is None or (isinstance(r[i], (int, float)) and not isinstance(r[i], bool))
            for r in view.rows
        )
        for i in range(width)
    ]
    title = Text(escape(view.title), style="bold") if view.title else None
    table = Table(title=title, title_justify="left", box=box.ROUNDED, header_style="bold")
    for name, num in zip(header, numeric):
        table.add_column(Text(escape(name)), justify="right" if num else "left")
    for row in view.rows:
        table.add_row(*(Text(escape(_cell(c))) for c in row + [None] * (width - len(row))))
    return table


def short(input: Json, limit: int = _SHORT) -> str:
    """A tool's input on one line, escaped: a lone string argument as itself, anything else
    as JSON; runs of blanks folded to one space, a newline shown as ⏎ (`one_line`)."""
    if is_object(input) and len(input) == 1:
        (only,) = input.values()
        input = only if isinstance(only, str) else input
    text = input if isinstance(input, str) else json.dumps(input, ensure_ascii=False)
    # Escaped before it is cut: the limit counts what is shown, and a cut can shorten an
    # escape but never let a control through.
    text = one_line(_BLANKS.sub(" ", text.strip()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def finished(name: str, input: Json, output: ToolOutput, seconds: float) -> Text:
    """The line a finished call leaves: ✓ or ✗, its name and what it was about (with the
    counts of a change, or an error's first line: `surfaces._calls.call_line`), how long it
    took."""
    said = call_line(name, input, output)
    line = Text(said)
    line.stylize("red" if output.is_error else "green", 0, 1)
    line.stylize("bold", 2, 2 + len(escape(name)))
    if output.is_error:
        line.stylize("red", 2 + len(escape(name)))
    line.append(f" · {seconds:.1f} s", style="dim")
    return line


def result(lines: list[str], more: int, number: int) -> Text:
    """The first lines of a result, under its call's line (already escaped), and how to see
    the rest: `… 12 more lines (/result 3 shows it whole)`."""
    shown = Text(style="dim")
    for n, row in enumerate(lines):
        shown.append(("  ⎿ " if n == 0 else "    ") + row + "\n")
    if more:
        shown.append(f"    … {more} more line{'s' if more != 1 else ''} (/result {number} shows it whole)\n")
    shown.rstrip()
    return shown
