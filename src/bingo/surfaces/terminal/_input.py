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
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.completion.base import get_common_complete_suffix
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.utils import get_cwidth

from ...kernel.errors import GateError
from .._calls import PREVIEW_LINES, Preview
from .._escape import escape, one_line
from .._seam import Driver
from ._answer import Key, keyed, keys_for, listed, reason
from ._surface import Question

__all__ = ["CommandCompleter", "answer", "main_session"]

_COMPLETE_CAP = 10.0
"""A guard for in-process commands' completion; the bridge applies `command/complete`'s own
(shorter) deadline to plugin commands."""

_PERMISSION_ALIASES = {"1": "once", "2": "always", "3": "no"}
"""The digits a permission took before it took letters, still taken."""

_AROUND_PREVIEW = 8
"""Screen rows a permission question keeps for its title, its keys and the prompt's own
lines: its preview is cut to the rest, so the keys are never pushed off the screen."""
_DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "fg:ansicyan"), ("+", "fg:ansigreen"), ("-", "fg:ansired"))


class CommandCompleter(Completer):
    """Slash commands by name, then each command's own completions."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self._asking = 0
        """Completions being asked of a command (a plugin's `command/complete`) right now."""
        self.tab_waiting = False
        """A Tab was pressed while they were asked for: it applies when they arrive."""

    def loading(self, buffer: Buffer) -> bool:
        """A command's completions are being asked for and none has arrived yet."""
        state = buffer.complete_state
        return self._asking > 0 and state is not None and not state.completions

    def _names(self, typed: str) -> Iterable[Completion]:
        for spec in self._driver.commands():
            if spec.name.startswith(typed):
                value = spec.name + (" " if spec.args.kind == "free" else "")
                yield Completion(
                    value, start_position=-len(typed), display="/" + escape(spec.name), display_meta=escape(spec.hint)
                )

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            yield from self._names(text[1:])

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
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
        self._asking += 1
        try:
            async with asyncio.timeout(_COMPLETE_CAP):
                answers = await self._driver.complete(name, partial)
        except TimeoutError:
            answers = []
        finally:
            self._asking -= 1
        tab = False
        try:
            for found in answers:
                yield Completion(
                    found.value,
                    start_position=-len(partial),
                    display=escape(found.value),
                    display_meta=escape(found.hint or ""),
                )
            tab = self.tab_waiting
        finally:
            self.tab_waiting = False  # a Tab waits for these completions, never for later ones
        if tab:
            # After prompt_toolkit has taken these in (it does once this generator ends).
            asyncio.get_running_loop().call_soon(_tab_arrived, get_app().current_buffer)


def _tab_arrived(buffer: Buffer) -> None:
    """Do what the Tab pressed while they loaded does to completions that have arrived, as
    prompt_toolkit's Tab does: one is applied; of several, what they share is inserted."""
    state = buffer.complete_state
    if state is None or not state.completions or state.complete_index is not None:
        return
    if len(state.completions) == 1:
        buffer.apply_completion(state.completions[0])
        return
    common = get_common_complete_suffix(buffer.document, state.completions)
    if common:
        buffer.insert_text(common)


def _after_command_name(buffer: Buffer) -> bool:
    """The cursor is just past `/name ` with no argument begun: the blank a completed name
    ends with is there already."""
    before = buffer.document.text_before_cursor
    return before.startswith("/") and before.endswith(" ") and " " not in before[1:-1] and len(before) > 2


_SHIFT_ENTER = ("\x1b[13;2u", "\x1b[27;2;13~")
"""Shift-Enter where a terminal reports it apart from Enter: the CSI u form (kitty's,
foot's, WezTerm's, iTerm2's CSI u mode) and xterm's modifyOtherKeys form (which
prompt_toolkit reads as Enter). bingo asks no terminal to report it; it takes it where the
terminal, as set up by the person, does."""


def _read_shift_enter() -> None:
    """Shift-Enter reaches the key bindings as Ctrl-J, the newline key (the parser's table is
    prompt_toolkit's one place for such sequences, read when a key is parsed)."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    for sequence in _SHIFT_ENTER:
        ANSI_SEQUENCES[sequence] = Keys.ControlJ


def _newline(event: KeyPressEvent) -> None:
    event.current_buffer.insert_text("\n")


def _keys(completer: CommandCompleter) -> KeyBindings:
    """The main prompt's own keys: a newline (Shift-Enter where reported, Alt-Enter, Ctrl-J,
    or `\\` then Enter) while Enter alone submits; Tab while completions load; a blank after
    a completed command name."""
    keys = KeyBindings()
    _read_shift_enter()
    keys.add("c-j")(_newline)
    keys.add("escape", "enter")(_newline)

    @keys.add("enter", filter=Condition(lambda: get_app().current_buffer.document.text_before_cursor.endswith("\\")))
    def _(event: KeyPressEvent) -> None:
        # A line ended by a backslash goes on, as in a shell; the backslash is not sent.
        event.current_buffer.delete_before_cursor(1)
        event.current_buffer.insert_text("\n")

    @keys.add("tab", filter=Condition(lambda: completer.loading(get_app().current_buffer)))
    def _(event: KeyPressEvent) -> None:
        # Completions are being asked for (a plugin's, up to its deadline): the Tab is kept
        # and applied when they arrive, rather than lost on the empty list they start as.
        completer.tab_waiting = True
        event.app.invalidate()

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
    completer = CommandCompleter(driver)
    return PromptSession(
        history=FileHistory(str(history)),
        completer=completer,
        complete_while_typing=True,
        erase_when_done=True,
        reserve_space_for_menu=6,
        key_bindings=_keys(completer),
        bottom_toolbar=(lambda: FormattedText([("", " " + toolbar())])) if toolbar is not None else None,
    )


async def answer(question: Question) -> str:
    """Put `question` to the person; their answer (`once`/`always`/`no` for a permission,
    with `question.words` set when they gave a reason with the "no"). One style for every
    question (`_answer`): single keys, or a list to pick from; Esc is "no".

    Raises:
        GateError: Esc where "no" is not an answer (nobody answered).
        KeyboardInterrupt: Ctrl-C.  EOFError: Ctrl-D.
    """
    if question.tool is not None:
        return await _permission(question)
    choices = question.choices or []
    # Wrapped here: prompt_toolkit cuts the lines above a prompt's last at the window's edge.
    width = max(shutil.get_terminal_size().columns - 1, 20)
    rows = [row for line in f"? {escape(question.text)}".split("\n") for row in _wrapped(line, width)]
    head: list[tuple[str, str]] = [("bold", "\n".join(rows) + "\n")]
    if not choices:
        session: PromptSession[str] = PromptSession(erase_when_done=True)
        return (await session.prompt_async(FormattedText([*head, ("bold", "answer> ")]))).strip()
    no = next((choice for choice in choices if choice.strip().lower() == "no"), None)
    keys = None if question.listed else keys_for(choices)
    if keys is not None:
        said = await keyed(head, keys, esc=no)
    else:
        at = await listed(head, choices, esc="Esc: no" if no is not None else "Esc answers nothing")
        said = no if at is None else choices[at]
    if said is None:
        raise GateError("the person did not answer")
    return said


def _wrapped(text: str, width: int) -> list[str]:
    """`text` (one line) in rows of at most `width` terminal cells, broken after a blank
    where the row has one (a word is cut only when it is wider than a row); every character
    is kept, the blanks included."""
    rows: list[str] = []
    row: list[str] = []
    cells: list[int] = []
    for char in text:
        size = get_cwidth(char)
        if sum(cells) + size > width and row:
            blank = max((i for i, c in enumerate(row) if c == " "), default=-1)
            cut = blank + 1 if 0 < blank + 1 < len(row) else len(row)
            rows.append("".join(row[:cut]))
            row, cells = row[cut:], cells[cut:]
        row.append(char)
        cells.append(size)
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
    always = f"yes, always: {one_line(question.always)}" if question.always else "yes, always"
    # The lines above a prompt's last are not wrapped by prompt_toolkit but cut at the
    # window's edge: the preview is wrapped or cut here, so nothing is out of sight unsaid.
    size = shutil.get_terminal_size()
    width = max(size.columns - 3, 20)
    height = max(min(PREVIEW_LINES, size.lines - _AROUND_PREVIEW), 3)
    rows = preview_rows(question.preview, width, height) if question.preview is not None else []
    # The title is wrapped too: a hook's reason under it can be wider than the window.
    title = "\n".join(row for line in escape(question.text).split("\n") for row in _wrapped(line, width))
    message: list[tuple[str, str]] = [
        ("bold", title + "\n"),
        *rows,
    ]
    options = [
        Key("y", "once", "yes, once"),
        Key("a", "always", always),
        Key("n", "no", "no"),
        Key("t", "tell", "no, and tell the model why"),
    ]
    said = await keyed(message, options, esc="no", aliases=_PERMISSION_ALIASES)
    if said == "tell":
        question.words = await reason(question.tool or "")
        return "no"
    return said or "no"
