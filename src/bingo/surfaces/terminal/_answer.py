"""How a person answers a question on the terminal: one style for every question (ADR-0035).

Owns the keys. A question with a few answers whose first letters differ is answered by one
key each, shown as `[y] yes   [n] no (Esc)`: the gate's permission (y, a, n, and t for a
"no" with words for the model), a hook's `ask`, trust's question, a plugin's `ask` with
such choices. Esc is "no" wherever "no" is an answer; elsewhere it answers nothing (the
asker is told the person did not answer). A longer list (a plugin's choices, this
project's sessions) is a numbered list: a digit picks at once, ↑/↓ then Enter picks the
marked row. Keys no answer takes are ignored, so a word typed out of habit answers nothing.

It draws only the line of keys and the list's rows; what a question shows above them (the
call, its input) is its caller's. Everything shown is escaped (`surfaces.escape`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from .._escape import escape, one_line

__all__ = ["REASON_MAX", "Key", "keyed", "keys_for", "listed", "reason"]

_LISTED_ROWS = 10
"""Rows of a list shown at once; the rest scroll into view with ↑/↓."""
_ROW_SHOWN = 100
"""Characters of one row of a list shown (a plugin's choice, a session's first prompt)."""
REASON_MAX = 1000
"""Characters of the words a person gives with a "no" that the model is told."""


@dataclass(frozen=True, slots=True)
class Key:
    """One answer: the key that gives it, what it answers, and how it is shown."""

    key: str
    value: str
    label: str


def keys_for(choices: Sequence[str]) -> list[Key] | None:
    """One key per choice, its first letter, when the first letters of `choices` differ
    (`yes`/`no`, `y`/`a`/`n`); None when they do not (the choices are then a list)."""
    firsts = [choice[:1].lower() for choice in choices]
    if (
        not choices
        or len(choices) > 9
        or len(set(firsts)) != len(firsts)
        or not all(f.isalnum() and f.isascii() for f in firsts)
    ):
        return None
    return [Key(first, choice, choice) for first, choice in zip(firsts, choices)]


def _ignoring_the_rest(keys: KeyBindings) -> None:
    @keys.add("<any>")
    def _(event: KeyPressEvent) -> None:
        return None  # a key no answer takes answers nothing, and is not typed

    @keys.add("enter")
    def _(event: KeyPressEvent) -> None:
        return None


async def keyed(
    head: list[tuple[str, str]], options: Sequence[Key], *, esc: str | None, aliases: dict[str, str] | None = None
) -> str | None:
    """The value of the key pressed; Esc gives `esc` (None: no answer). `head` is drawn
    above the line of keys (already escaped); `aliases` are more keys for a value.

    Raises:
        KeyboardInterrupt: Ctrl-C.  EOFError: Ctrl-D.
    """
    keys = KeyBindings()
    _ignoring_the_rest(keys)
    for key, value in [*((o.key, o.value) for o in options), *(aliases or {}).items()]:

        def pick(event: KeyPressEvent, value: str = value) -> None:
            event.app.exit(result=value)

        keys.add(key)(pick)

    @keys.add("escape", eager=True)
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    shown = "   ".join(f"[{escape(o.key)}] {escape(o.label)}{' (Esc)' if o.value == esc else ''}" for o in options)
    message = FormattedText([*head, ("", f"  {shown} ")])
    session: PromptSession[str | None] = PromptSession(erase_when_done=True, key_bindings=keys)
    said = await session.prompt_async(message)
    return esc if said is None else said


async def listed(head: list[tuple[str, str]], rows: Sequence[str], *, esc: str = "Esc answers nothing") -> int | None:
    """The index of the row chosen (a digit picks one of the first nine at once; ↑/↓ then
    Enter picks the marked one); None on Esc. `rows` are escaped and cut here; `esc` says
    what Esc does.

    Raises:
        KeyboardInterrupt: Ctrl-C.  EOFError: Ctrl-D.
    """
    at = 0
    keys = KeyBindings()
    _ignoring_the_rest(keys)

    def move(by: int) -> None:
        nonlocal at
        at = max(0, min(len(rows) - 1, at + by))

    @keys.add("up")
    def _(event: KeyPressEvent) -> None:
        move(-1)

    @keys.add("down")
    def _(event: KeyPressEvent) -> None:
        move(1)

    @keys.add("enter")
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result=at)

    @keys.add("escape", eager=True)
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    for n in range(1, min(len(rows), 9) + 1):

        def pick(event: KeyPressEvent, n: int = n) -> None:
            event.app.exit(result=n - 1)

        keys.add(str(n))(pick)

    shown_rows = [one_line(row) for row in rows]
    shown_rows = [row if len(row) <= _ROW_SHOWN else row[: _ROW_SHOWN - 1] + "…" for row in shown_rows]

    def message() -> FormattedText:
        top = max(0, min(at - _LISTED_ROWS // 2, len(rows) - _LISTED_ROWS))
        lines: list[tuple[str, str]] = list(head)
        if top:
            lines.append(("fg:ansibrightblack", f"  ↑ {top} more\n"))
        for n in range(top, min(top + _LISTED_ROWS, len(rows))):
            mark = "❯" if n == at else " "
            lines.append(("reverse" if n == at else "", f"{mark} {n + 1}) {shown_rows[n]}"))
            lines.append(("", "\n"))
        below = len(rows) - top - _LISTED_ROWS
        if below > 0:
            lines.append(("fg:ansibrightblack", f"  ↓ {below} more\n"))
        digits = f"1-{min(len(rows), 9)} or " if rows else ""
        lines.append(("", f"  {digits}↑/↓ and Enter choose · {esc} "))
        return FormattedText(lines)

    session: PromptSession[int | None] = PromptSession(erase_when_done=True, key_bindings=keys)
    return await session.prompt_async(message)


async def reason(name: str) -> str:
    """The words a person gives with a "no" to `name` (bounded); "" when they give none
    (Esc, or Enter on nothing).

    Raises:
        KeyboardInterrupt: Ctrl-C.  EOFError: Ctrl-D.
    """
    keys = KeyBindings()

    @keys.add("escape", eager=True)
    def _(event: KeyPressEvent) -> None:
        event.app.exit(result="")

    session: PromptSession[str] = PromptSession(erase_when_done=True, key_bindings=keys)
    message = FormattedText(
        [
            ("bold", f"no to {escape(name)}: "),
            ("", "tell the model why (Enter sends, Esc: a plain no)\n"),
            ("bold", "why> "),
        ]
    )
    said = (await session.prompt_async(message)).strip()
    return said[:REASON_MAX]
