"""Keyboard input: the main prompt's session, slash-command completion, and the prompts that
answer a question (a gate permission, a plugin's ask).

Owns completion: `/` offers every command with its hint; after a command's name, the
command's own completions, asked asynchronously so a slow or dead plugin never blocks a
keystroke (the bridge bounds `command/complete` by its deadline; prompt_toolkit drops an
answer whose text has changed since it was asked). It does not decide what a submitted line
does: the keyboard loop does. What it shows of a command or a question (names, hints, a
plugin's question and choices) is escaped (`surfaces.escape`), as the rest of the terminal is.
A permission shows the rule "yes, always" adds; Esc answers it "no". A blank typed right after
a completed command name (which ends with its own) is not doubled.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncGenerator, Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, WordCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.utils import get_cwidth

from .._calls import PREVIEW_LINES, Preview
from .._escape import escape, one_line
from .._seam import Driver
from ._surface import Question

__all__ = ["CommandCompleter", "answer", "main_session"]

_COMPLETE_CAP = 10.0
"""A guard for in-process commands' completion; the bridge applies `command/complete`'s own
(shorter) deadline to plugin commands."""

_PERMISSION_KEYS = {"y": "once", "1": "once", "a": "always", "2": "always", "n": "no", "3": "no"}

_AROUND_PREVIEW = 8
"""Screen rows a permission question keeps for its title, its keys and the prompt's own
lines: its preview is cut to the rest, so the keys are never pushed off the screen."""
_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "fg:ansicyan"), ("+", "fg:ansigreen"), ("-", "fg:ansired"))


class CommandCompleter(Completer):
    """Slash commands by name, then each command's own completions."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    def _names(self, typed: str) -> Iterable[Completion]:
        for spec in self._driver.commands():
            if spec.name.startswith(typed):
                value = spec.name + (" " if spec.args.kind == "free" else "")
                yield Completion(value, start_position=-len(typed), display="/" + escape(spec.name), display_meta=escape(spec.hint))

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            yield from self._names(text[1:])

    async def get_completions_async(self, document: Document, complete_event: CompleteEvent) -> AsyncGenerator[Completion, None]:
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        name, sep, partial = text[1:].partition(" ")
        if not sep:
            for completion in self._names(name):
                yield completion
            return
        # Blanks before the argument are no part of it (the command reads its args stripped).
        partial = partial.lstrip()
        try:
            async with asyncio.timeout(_COMPLETE_CAP):
                answers = await self._driver.complete(name, partial)
        except TimeoutError:
            return
        for found in answers:
            yield Completion(found.value, start_position=-len(partial), display=escape(found.value), display_meta=escape(found.hint or ""))


def _after_command_name(buffer: Buffer) -> bool:
    """The cursor is just past `/name ` with no argument begun: the blank a completed name
    ends with is there already."""
    before = buffer.document.text_before_cursor
    return before.startswith("/") and before.endswith(" ") and " " not in before[1:-1] and len(before) > 2


def _keys() -> KeyBindings:
    keys = KeyBindings()

    @keys.add(" ", filter=Condition(lambda: _after_command_name(get_app().current_buffer)))
    def _(event: KeyPressEvent) -> None:
        # A completed command name ends with its blank; the blank a person types out of habit
        # would come second, and the argument's completion would then see " s" for "s".
        # An open menu's choice is taken as the space would take it.
        buffer = event.current_buffer
        if buffer.complete_state is not None:
            buffer.complete_state = None

    return keys


def main_session(history: Path, driver: Driver, toolbar: Callable[[], str] | None = None) -> PromptSession[str]:
    """The prompt a person types into: history kept in `history`, slash commands completed,
    `toolbar` (when given) as its bottom status line. It is erased when done; the loop
    echoes what was submitted."""
    history.parent.mkdir(parents=True, exist_ok=True)
    return PromptSession(
        history=FileHistory(str(history)),
        completer=CommandCompleter(driver),
        complete_while_typing=True,
        erase_when_done=True,
        reserve_space_for_menu=6,
        key_bindings=_keys(),
        bottom_toolbar=(lambda: FormattedText([("", " " + toolbar())])) if toolbar is not None else None,
    )


async def answer(question: Question) -> str:
    """Put `question` to the person; their answer (`once`/`always`/`no` for a permission).

    Raises:
        KeyboardInterrupt: Ctrl-C.  EOFError: Ctrl-D.
    """
    if question.tool is not None:
        return await _permission(question)
    choices = question.choices or []
    lines: list[tuple[str, str]] = [("bold", f"? {escape(question.text)}\n")]
    lines += [("", f"  {n}) {escape(choice)}\n") for n, choice in enumerate(choices, 1)]
    lines.append(("bold", "answer> "))
    session: PromptSession[str] = PromptSession(erase_when_done=True, completer=WordCompleter(choices, display_dict={c: escape(c) for c in choices}) if choices else None)
    while True:
        text = (await session.prompt_async(FormattedText(lines))).strip()
        if not choices:
            return text
        if text.isdigit() and 1 <= int(text) <= len(choices):
            return choices[int(text) - 1]
        if text in choices:
            return text


def _wrapped(text: str, width: int) -> list[str]:
    """`text` (one line) in rows of at most `width` terminal cells."""
    rows: list[str] = []
    row: list[str] = []
    used = 0
    for char in text:
        cells = get_cwidth(char)
        if used + cells > width and row:
            rows.append("".join(row))
            row, used = [], 0
        row.append(char)
        used += cells
    rows.append("".join(row))
    return rows


def preview_rows(preview: Preview, width: int, height: int) -> list[tuple[str, str]]:
    """`preview` as at most `height` rows of at most `width` cells, each indented two
    spaces, as formatted text: a diff's lines cut at the edge (`…`) and coloured, a command
    or JSON wrapped (every character of a command is seen); past `height`, a last row counts
    the lines left out."""
    rows: list[tuple[str, str]] = []
    if preview.note:
        rows += [("fg:ansiyellow", f"  {row}\n") for row in _wrapped(preview.note, width)]
    lines = preview.text.splitlines()
    room = max(height - len(rows), 1)
    shown: list[tuple[str, str]] = []
    left = 0
    # More characters than `room` rows hold unless most take no cell: a longer line is
    # shown as far as it fits and counted among the lines left out, never laid out whole.
    cap = (width + 1) * room * 4
    for n, line in enumerate(lines):
        if preview.kind == "diff":
            pieces = [line if get_cwidth(line) <= width else _wrapped(line, width - 1)[0] + "…"]
            style = next((style for mark, style in _DIFF_STYLES if line.startswith(mark)), "")
        else:
            pieces, style = _wrapped(line[:cap], width), ""
        if len(line) > cap or len(shown) + len(pieces) > room - (1 if n < len(lines) - 1 or preview.more else 0):
            # What fits of this line is shown; it counts among the lines left out.
            shown += [(style, f"  {piece}\n") for piece in pieces[: max(room - 1 - len(shown), 0)]]
            left = len(lines) - n
            break
        shown += [(style, f"  {piece}\n") for piece in pieces]
    left += preview.more
    if left:
        shown.append(("fg:ansibrightblack", f"  … {left} more line{'s' if left != 1 else ''}\n"))
    return rows + shown


async def _permission(question: Question) -> str:
    keys = KeyBindings()
    for key, said in _PERMISSION_KEYS.items():

        def pick(event: KeyPressEvent, said: str = said) -> None:
            event.app.exit(result=said)

        keys.add(key)(pick)
    @keys.add("escape", eager=True)
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result="no")  # Esc turns the question away, as n does

    always = f"yes, always: {one_line(question.always)}" if question.always else "yes, always"
    # The lines above a prompt's last are not wrapped by prompt_toolkit but cut at the
    # window's edge: the preview is wrapped or cut here, so nothing is out of sight unsaid.
    size = shutil.get_terminal_size()
    width = max(size.columns - 3, 20)
    height = max(min(PREVIEW_LINES, size.lines - _AROUND_PREVIEW), 3)
    rows = preview_rows(question.preview, width, height) if question.preview is not None else []
    message: list[tuple[str, str]] = [
        ("bold", escape(question.text) + "\n"),
        *rows,
        ("", f"  [y] yes, once   [a] {always}   [n] no (Esc) "),
    ]
    session: PromptSession[str] = PromptSession(erase_when_done=True, key_bindings=keys)
    while True:
        said = await session.prompt_async(FormattedText(message))
        if said in ("once", "always", "no"):
            return said
