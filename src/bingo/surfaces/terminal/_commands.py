"""The terminal's own slash commands, over the run behind it: `/clear` is every surface's
(`surfaces._commands.ClearCommand`), wired here to start a new session (`/sessions`, `/exit`
and `/quit` are every surface's too).

Each implements the kernel's `Command` interface over a `SessionKeeper` (the run behind the
surface). They keep no state: the run owns the session and the store.
"""

from __future__ import annotations

from typing import Protocol

from ...kernel.interfaces import Command
from ...store import SessionInfo
from .._commands import ClearCommand

__all__ = ["SessionKeeper", "terminal_commands"]


class SessionKeeper(Protocol):
    """What these commands ask of the run."""

    def clear(self) -> None:
        """Start a new session with the next prompt."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """This project's sessions, the latest first."""
        ...


def terminal_commands(keeper: SessionKeeper) -> list[Command]:
    """`/clear`, over `keeper`."""
    return [ClearCommand(keeper.clear)]
