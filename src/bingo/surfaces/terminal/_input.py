"""Keyboard input: the main prompt's session, slash-command completion, and the prompts that
answer a question (a gate permission, a plugin's ask).

Owns completion: `/` offers every command with its hint; after a command's name, the
command's own completions, asked asynchronously so a slow or dead plugin never blocks a
keystroke (the bridge bounds `command/complete` by its deadline; prompt_toolkit drops an
answer whose text has changed since it was asked). It does not decide what a submitted line
does: the keyboard loop does. What it shows of a command or a question (names, hints, a
plugin's question and choices) is escaped (`surfaces.escape`), as the rest of the terminal is.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, WordCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from .._escape import escape
from .._seam import Driver
from ._draw import short
from ._surface import Question

__all__ = ["CommandCompleter", "answer", "main_session"]

_COMPLETE_CAP = 10.0
"""A guard for in-process commands' completion; the bridge applies `command/complete`'s own
(shorter) deadline to plugin commands."""

_PERMISSION_KEYS = {"y": "once", "1": "once", "a": "always", "2": "always", "n": "no", "3": "no"}


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
        try:
            async with asyncio.timeout(_COMPLETE_CAP):
                answers = await self._driver.complete(name, partial)
        except TimeoutError:
            return
        for found in answers:
            yield Completion(found.value, start_position=-len(partial), display=escape(found.value), display_meta=escape(found.hint or ""))


def main_session(history: Path, driver: Driver) -> PromptSession[str]:
    """The prompt a person types into: history kept in `history`, slash commands completed.
    It is erased when done; the loop echoes what was submitted."""
    history.parent.mkdir(parents=True, exist_ok=True)
    return PromptSession(
        history=FileHistory(str(history)),
        completer=CommandCompleter(driver),
        complete_while_typing=True,
        erase_when_done=True,
        reserve_space_for_menu=6,
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


async def _permission(question: Question) -> str:
    keys = KeyBindings()
    for key, said in _PERMISSION_KEYS.items():

        def pick(event: KeyPressEvent, said: str = said) -> None:
            event.app.exit(result=said)

        keys.add(key)(pick)
    message: list[tuple[str, str]] = [
        ("bold", escape(question.text) + "\n"),
        ("", f"  {short(question.input, 300)}\n"),
        ("", "  [y] yes, once   [a] yes, always   [n] no "),
    ]
    session: PromptSession[str] = PromptSession(erase_when_done=True, key_bindings=keys)
    while True:
        said = await session.prompt_async(FormattedText(message))
        if said in ("once", "always", "no"):
            return said
