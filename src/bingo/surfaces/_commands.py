"""The built-in slash commands every surface has that belong to none of the layers below:
`/sessions` lists this project's sessions, `/usage` the tokens this run and this session
spent (cache reads and writes apart), `/clear` starts a fresh conversation (each surface
says what that is: a new session on the terminal and in a room), `/exit` and `/quit` end
the session (where a surface has a session to end: not in a room, whose bot runs on).

`/sessions` reads the store through the callable it is given, so the store (and sqlite3) is
opened only when it runs. `/exit` and `/quit` do nothing as commands (under `--print` they
are a success with nothing to show); the terminal's keyboard loop ends the session on them
as on Ctrl-D.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..kernel.interfaces import CommandContext
from ..kernel.registry import BUILTIN
from ..wire import (
    CommandOutcome,
    CommandSpec,
    Completion,
    NoneOutcome,
    StackView,
    TableView,
    TextOutcome,
    TextView,
    Usage,
    ViewOutcome,
)

if TYPE_CHECKING:
    from ..store import SessionInfo

__all__ = ["EXIT_COMMANDS", "ClearCommand", "ExitCommand", "SessionsCommand", "UsageCommand"]

EXIT_COMMANDS = frozenset({"exit", "quit"})
"""The names that end a session on the terminal, as Ctrl-D does."""


class SessionsCommand:
    """`/sessions`: this project's sessions, the latest first."""

    __slots__ = ("sessions",)
    spec = CommandSpec(name="sessions", hint="list this project's sessions", instant=True, family="bingo")
    source = BUILTIN

    def __init__(self, sessions: Callable[[], list[SessionInfo]]) -> None:
        self.sessions = sessions

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        found = self.sessions()
        if not found:
            return TextOutcome(text="no sessions in this project yet")
        rows: list[list[str | int | float | None]] = [
            [("* " if s.id == ctx.session else "") + s.id, s.updated.strftime("%Y-%m-%d %H:%M"), s.frames, s.title]
            for s in found
        ]
        table = TableView(title="sessions", columns=["id", "updated (UTC)", "frames", "title"], rows=rows)
        return ViewOutcome(view=StackView(children=[table, TextView(text="bingo --resume ID continues one")]))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class UsageCommand:
    """`/usage`: the tokens the model responses spent in this run (`used`) and in the whole
    session (`session`: summed from its frames; None before it has any), cache reads and
    writes apart (ADR-0020). Input counts every input token, the cached ones too."""

    __slots__ = ("session", "used")
    spec = CommandSpec(name="usage", hint="tokens spent in this run and this session", instant=True, family="bingo")
    source = BUILTIN

    def __init__(self, used: Callable[[], Usage], session: Callable[[], Usage | None]) -> None:
        self.used = used
        self.session = session

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        rows: list[list[str | int | float | None]] = [["this run", *_counts(self.used())]]
        whole = self.session()
        if whole is not None:
            rows.append(["this session", *_counts(whole)])
        return ViewOutcome(
            view=TableView(title="tokens", columns=["", "input", "cache read", "cache write", "output"], rows=rows)
        )

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


def _counts(usage: Usage) -> list[str | int | float | None]:
    return [usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens, usage.output_tokens]


class ClearCommand:
    """`/clear`: the next prompt starts a fresh conversation, which the model sees nothing
    before; the one it leaves stays in the store (`/sessions`, `--resume`). `clear` is the
    surface's way to do it (the terminal's and a room's: `Run.clear`)."""

    __slots__ = ("clear", "said")
    spec = CommandSpec(name="clear", hint="start a fresh conversation (this one stays in /sessions)", family="bingo")
    source = BUILTIN

    def __init__(
        self,
        clear: Callable[[], None],
        said: str = "a fresh conversation starts with your next prompt (the last one stays in /sessions)",
    ) -> None:
        self.clear = clear
        self.said = said

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        self.clear()
        return TextOutcome(text=self.said)

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class ExitCommand:
    """`/exit` or `/quit`: end the session (the terminal's loop does, as on Ctrl-D)."""

    __slots__ = ("spec",)
    source = BUILTIN

    def __init__(self, spec: CommandSpec) -> None:
        self.spec = spec

    @classmethod
    def named(cls, name: str) -> ExitCommand:
        return cls(CommandSpec(name=name, hint="end the session (as Ctrl-D does)", instant=True, family="bingo"))

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        return NoneOutcome()

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []
