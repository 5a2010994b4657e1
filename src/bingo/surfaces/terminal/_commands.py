"""The terminal's own slash command: `/clear` starts a new session (`/sessions`, `/exit` and
`/quit` are every surface's: `surfaces._commands`).

Each implements the kernel's `Command` interface over a `SessionKeeper` (the run behind the
surface). They keep no state: the run owns the session and the store.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from ...kernel.interfaces import Command, CommandContext
from ...kernel.registry import BUILTIN
from ...store import SessionInfo
from ...wire import CommandOutcome, CommandSpec, Completion, TextOutcome

__all__ = ["SessionKeeper", "terminal_commands"]


class SessionKeeper(Protocol):
    """What these commands ask of the run."""

    def clear(self) -> None:
        """Start a new session with the next prompt."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """This project's sessions, the latest first."""
        ...


class _Clear(msgspec.Struct):
    keeper: SessionKeeper
    spec: CommandSpec = CommandSpec(name="clear", hint="start a new session (this one stays in /sessions)", family="bingo")
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        self.keeper.clear()
        return TextOutcome(text="a new session starts with your next prompt")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


def terminal_commands(keeper: SessionKeeper) -> list[Command]:
    """`/clear`, over `keeper`."""
    return [_Clear(keeper)]
