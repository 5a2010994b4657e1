"""The print surface: `bingo -p`, a pipe, or one turn without the terminal surface.

Owns plain-text output: the model's text streamed to stdout as it arrives, each View folded
to text, notices as one line each on stderr, and on stderr too what the person sees of each
call that ran (its tidy line and its result's first lines, `surfaces._calls`, ADR-0034):
stdout stays the answer a script takes. Everything it writes passes `escape` first
(INTERFACE.md §8): a pipe is often a terminal in the end (`bingo -p ... | less -R`, a CI
log viewer). Nothing waits for a person here: every question is answered "no"
(GateError), and the kernel tells the model why in words.
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..kernel.errors import GateError
from ..kernel.interfaces import PermissionAnswer
from ..wire import (
    CommandOutcome,
    ErrorOutcome,
    Json,
    NoneOutcome,
    Notice,
    PromptOutcome,
    TextOutcome,
    ToolOutput,
    ViewOutcome,
    fold,
)
from ._calls import call_line, result_lines
from ._escape import escape, escape_view

__all__ = ["PrintSurface"]

_ERROR_SHOWN = 2000
"""Characters of a failed call's first line shown on its line."""


class PrintSurface:
    """Plain text on stdout, notices on stderr, and nobody to ask."""

    __slots__ = ("_at_line_start", "_inputs", "err", "out")

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self._at_line_start = True
        self._inputs: dict[str, Json] = {}
        """The input of each call running, for its line when it finishes."""

    # --- TurnEvents ---------------------------------------------------------------

    def text(self, text: str) -> None:
        if not text:
            return
        text = escape(text)
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        text = escape(text)
        if not self._at_line_start:
            self.out.write("\n")
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()
        self._at_line_start = True

    def _err(self, line: str) -> None:
        """One line on stderr (`line` already escaped), after ending the text line stdout
        has open: on a terminal the two streams share one screen, and a refusal or notice
        written mid-sentence would join the model's line."""
        self.end()
        self.err.write(line + "\n")
        self.err.flush()

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        self._inputs[call_id] = input

    def tool_progress(self, call_id: str, tail: str) -> None:
        return None

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        input = self._inputs.pop(call_id, None)
        # The error's whole first line: here there is no /result to show the rest.
        shown = [call_line(name, input, output, error_width=_ERROR_SHOWN)]
        lines, more = result_lines(name, output)
        shown += [("  ⎿ " if n == 0 else "    ") + row for n, row in enumerate(lines)]
        shown += [f"    … {more} more line{'s' if more != 1 else ''}"] if more else []
        self._err("\n".join(shown))  # escaped by `call_line` and `result_lines`
        if output.display is not None:
            self._line(fold(escape_view(output.display)))

    def waiting(self, what: str) -> None:
        self._err(f"bingo: {escape(what)}")

    def refused(self, call_id: str, name: str, why: str) -> None:
        self._err(f"bingo: {escape(why)}")

    def end(self) -> None:
        """The turn is over: end the last line."""
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True

    # --- notices and outcomes -----------------------------------------------------

    def notice(self, notice: Notice) -> None:
        self._err(f"{escape(notice.source)}: {escape(notice.message)}")

    def outcome(self, outcome: CommandOutcome) -> None:
        """Show a command's outcome (an `error` one goes to stderr; a `prompt` is not shown)."""
        match outcome:
            case TextOutcome(text=text):
                self._line(text)
            case ViewOutcome(view=view):
                self._line(fold(escape_view(view)))  # escaped before the fold, so columns line up
            case ErrorOutcome(message=message):
                self._err(escape(message))
            case PromptOutcome() | NoneOutcome():
                pass

    # --- Asker: nobody is here ----------------------------------------------------

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise GateError("no person to ask")
