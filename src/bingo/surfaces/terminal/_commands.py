"""The terminal's own slash commands: `/clear` starts a new session, `/sessions` lists this
project's sessions.

Each implements the kernel's `Command` interface over a `SessionKeeper` (the run behind the
surface). They keep no state: the run owns the session and the store.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from ...kernel.interfaces import Command, CommandContext
from ...kernel.registry import BUILTIN
from ...store import SessionInfo
from ...wire import CommandOutcome, CommandSpec, Completion, StackView, TableView, TextOutcome, TextView, ViewOutcome

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


class _Sessions(msgspec.Struct):
    keeper: SessionKeeper
    spec: CommandSpec = CommandSpec(name="sessions", hint="list this project's sessions", instant=True, family="bingo")
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        found = self.keeper.sessions()
        if not found:
            return TextOutcome(text="no sessions in this project yet")
        rows: list[list[str | int | float | None]] = [
            [("* " if s.id == ctx.session else "") + s.id, s.updated.strftime("%Y-%m-%d %H:%M"), s.frames, s.title] for s in found
        ]
        table = TableView(title="sessions", columns=["id", "updated (UTC)", "frames", "title"], rows=rows)
        return ViewOutcome(view=StackView(children=[table, TextView(text="bingo --resume ID continues one")]))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


def terminal_commands(keeper: SessionKeeper) -> list[Command]:
    """`/clear` and `/sessions`, over `keeper`."""
    return [_Clear(keeper), _Sessions(keeper)]
