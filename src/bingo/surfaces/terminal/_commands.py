"""The terminal's own slash commands, over the run behind it: `/result [N]` shows a call's
result whole (ADR-0034); `/resume [ID]` continues another of this project's sessions
(ADR-0035). The run binds them (`run._commands.TABLE`, the one table of bingo's commands).

Each implements the kernel's `Command` interface over what the run or the surface offers
(`SessionKeeper`, `Results`). They keep no state: the run owns the session and the store,
the surface the results it showed.
"""

from __future__ import annotations

from typing import Protocol

from ...kernel.errors import GateError, SessionError
from ...kernel.interfaces import CommandContext
from ...kernel.registry import BUILTIN
from ...store import SessionInfo
from ...wire import CommandArgs, CommandOutcome, CommandSpec, Completion, ErrorOutcome, Message, TextOutcome
from ._opening import Opening, recap
from ._surface import TerminalSurface

__all__ = ["ResultCommand", "ResumeCommand", "Results", "SessionKeeper"]


class SessionKeeper(Protocol):
    """What these commands ask of the run."""

    def clear(self) -> None:
        """Start a new session with the next prompt."""
        ...

    def sessions(self) -> list[SessionInfo]:
        """This project's sessions, the latest first."""
        ...

    def resume(self, session: str) -> tuple[str, list[Message], tuple[int, int]]:
        """Continue `session` (an id or a prefix of one, of this project) from the next
        prompt: its id, its history, and what a compaction made of it (the messages it
        replaced, and how many of the history's first it wrote: `Opening.compacted`, `.summary`).

        Raises:
            SessionError: no such session here, or another run writes it.
        """
        ...


class Results(Protocol):
    """What `/result` asks of the surface that showed the calls."""

    def result(self, number: int | None) -> tuple[int, str] | None:
        """Call `number`'s result (the last when None), whole and escaped, with its number."""
        ...


class ResultCommand:
    """`/result [N]`: a call's result whole (ADR-0034)."""

    __slots__ = ("results",)
    spec = CommandSpec(
        name="result",
        hint="show the last call's result whole (/result N: the Nth call's of this run)",
        args=CommandArgs(kind="free"),
        instant=True,
        family="bingo",
    )
    source = BUILTIN

    def __init__(self, results: Results) -> None:
        self.results = results

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        wanted = args.strip()
        if wanted and not wanted.isdigit():
            return ErrorOutcome(
                message=f"/result takes a call's number (the one its cut line names), not {wanted!r}: /result 3, or /result for the last"
            )
        found = self.results.result(int(wanted) if wanted else None)
        if found is None:
            return ErrorOutcome(
                message=f"there is no result {wanted} to show: /result N shows the Nth call of this run, among the last 100"
                if wanted
                else "no call has finished yet in this run"
            )
        number, said = found
        return TextOutcome(text=f"result {number}:\n{said}" if said else f"result {number} is empty")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class ResumeCommand:
    """`/resume [ID]`: continue another session of this project, picked from a list (the
    latest first) or named by its id; what it said so far is drawn."""

    __slots__ = ("keeper", "surface")
    spec = CommandSpec(
        name="resume",
        hint="continue another of this project's sessions",
        args=CommandArgs(kind="free", hint="ID"),
        family="bingo",
    )
    source = BUILTIN

    def __init__(self, keeper: SessionKeeper, surface: TerminalSurface) -> None:
        self.keeper = keeper
        self.surface = surface
        """Where the list is put to the person, and the continued session's last exchanges drawn."""

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        from ._start import session_rows

        wanted = args.strip()
        if not wanted:
            others = [s for s in self.keeper.sessions() if s.id != ctx.session]
            if not others:
                return TextOutcome(text="this project has no other session to continue")
            rows = session_rows(others[:200])
            try:
                picked = await self.surface.choose("continue which session of this project?", rows)
            except GateError:
                return TextOutcome(text="no session chosen: this one goes on")
            wanted = others[rows.index(picked)].id
        try:
            session, past, (compacted, summary) = self.keeper.resume(wanted)
        except SessionError as exc:
            return ErrorOutcome(message=exc.line())
        for drawn in recap(
            Opening(
                version="",
                provider=None,
                model=None,
                cwd="",
                session=session,
                past=past,
                compacted=compacted,
                summary=summary,
            )
        ):
            self.surface.print(drawn)
        return TextOutcome(text=f"continuing session {session}: your next prompt goes on from it")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return [Completion(value=s.id, hint=s.title) for s in self.keeper.sessions()[:50] if s.id.startswith(partial)]
