"""The terminal's own slash commands, over the run behind it: `/clear` is every surface's
(`surfaces._commands.ClearCommand`), wired here to start a new session; `/result [N]` shows
a call's result whole (ADR-0034) (`/sessions`, `/exit` and `/quit` are every surface's too).

Each implements the kernel's `Command` interface over what the run or the surface offers
(`SessionKeeper`, `Results`). They keep no state: the run owns the session and the store,
the surface the results it showed.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from ...kernel.interfaces import Command, CommandContext
from ...kernel.registry import BUILTIN
from ...store import SessionInfo
from ...wire import CommandArgs, CommandOutcome, CommandSpec, Completion, ErrorOutcome, TextOutcome
from .._commands import ClearCommand

__all__ = ["Results", "SessionKeeper", "terminal_commands"]


class SessionKeeper(Protocol):
    """What these commands ask of the run."""

    def clear(self) -> None:
        """Start a new session with the next prompt."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """This project's sessions, the latest first."""
        ...


class Results(Protocol):
    """What `/result` asks of the surface that showed the calls."""

    def result(self, number: int | None) -> tuple[int, str] | None:
        """Call `number`'s result (the last when None), whole and escaped, with its number."""
        ...


class _Result(msgspec.Struct):
    results: Results
    spec: CommandSpec = CommandSpec(
        name="result",
        hint="show the last call's result whole (/result N: the Nth call's of this run)",
        args=CommandArgs(kind="free"),
        instant=True,
        family="bingo",
    )
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        wanted = args.strip()
        if wanted and not wanted.isdigit():
            return ErrorOutcome(message=f"/result takes a call's number (the one its cut line names), not {wanted!r}: /result 3, or /result for the last")
        found = self.results.result(int(wanted) if wanted else None)
        if found is None:
            return ErrorOutcome(message=f"there is no result {wanted} to show: /result N shows the Nth call of this run, among the last 100" if wanted else "no call has finished yet in this run")
        number, said = found
        return TextOutcome(text=f"result {number}:\n{said}" if said else f"result {number} is empty")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


def terminal_commands(keeper: SessionKeeper, results: Results) -> list[Command]:
    """`/clear`, over `keeper`; `/result`, over `results`."""
    return [ClearCommand(keeper.clear), _Result(results)]
