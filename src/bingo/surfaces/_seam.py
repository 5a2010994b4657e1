"""The seam between a surface and the run it shows: what a surface must offer (`Surface`)
and what it may ask of the run (`Driver`, and `RunHandle` for a surface that opens and closes
runs of its own: the bot's rooms, the editor's sessions). They are Protocols, so every
surface and any test twin meet the run the same way; the run is `bingo.run.Run`, which the
factory opens for every surface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..kernel.dispatch import Submitted
from ..kernel.errors import GateError
from ..kernel.frames import Frame
from ..kernel.interfaces import Asker, Declined, PermissionAnswer, TurnEvents
from ..wire import CommandOutcome, CommandSpec, Completion, ImageBlock, Json, Notice, ToolOutput

__all__ = ["AsksForAgents", "Driver", "Headless", "RunHandle", "Surface"]


class Surface(TurnEvents, Asker, Protocol):
    """Where a run is shown: its turn events, its questions, its notices and outcomes."""

    def notice(self, notice: Notice) -> None: ...

    def outcome(self, outcome: CommandOutcome) -> None: ...

    def end(self) -> None:
        """A turn or command is over."""
        ...


class Headless:
    """A run's own surface where no turn is shown and nobody is asked (the ACP agent's and
    the bot's, whose sessions and rooms have surfaces of their own): every turn event and
    outcome is dropped, every question is a GateError. A subclass says where notices go."""

    def notice(self, notice: Notice) -> None:
        return None

    def outcome(self, outcome: CommandOutcome) -> None:
        return None

    def end(self) -> None:
        return None

    def text(self, text: str) -> None:
        return None

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        return None

    def tool_progress(self, call_id: str, tail: str) -> None:
        return None

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        return None

    def waiting(self, what: str) -> None:
        return None

    def refused(self, call_id: str, name: str, why: str) -> None:
        return None

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise GateError("no person to ask")


class Driver(Protocol):
    """What a surface may ask of the run behind it (whose submissions the kernel's
    `Dispatcher` takes: `kernel/dispatch.py`)."""

    async def submit(self, text: str) -> int:
        """Run a slash command or a model turn; its exit status (0 done, 1 failed, 2 usage)."""
        ...

    def interrupt(self) -> list[str]:
        """Interrupt the running turn; the names of calls still being waited for."""
        ...

    def commands(self) -> list[CommandSpec]:
        """Every command, built-in and plugin."""
        ...

    async def complete(self, name: str, partial: str) -> list[Completion]:
        """Completions for a command's args (never raises; none is a fine answer)."""
        ...

    def busy(self) -> bool:
        """True while a turn is running."""
        ...


class RunHandle(Driver, Protocol):
    """The run a surface is handed for one conversation (`bingo.run.Run`, whatever the
    surface): a `Driver`, plus its session and its end."""

    async def dispatch(self, text: str, images: Sequence[ImageBlock] = ()) -> Submitted:
        """Run a prompt (with its images) or a slash command; what became of it, for the
        surface to show. BingoError as the kernel's dispatcher raises it."""
        ...

    def session_id(self) -> str | None:
        """The stored session this run writes to (None until its first frame)."""
        ...

    def frames(self) -> list[Frame]:
        """The stored session's frames (none for a new one)."""
        ...

    def close(self) -> None:
        """The conversation is over: its session ends and its resources go."""
        ...


@runtime_checkable
class AsksForAgents(Protocol):
    """A surface that puts a child conversation's gate question (a subagent's, ADR-0049) with
    the agent named, on the parent's `agent` call that runs it (the terminal, an editor, a
    room). Any other surface is asked `permission_asked` or `permission`, the agent named as
    who asks where it can be."""

    async def agent_permission(
        self, call_id: str, agent: str, name: str, input: Json, always: str, by: str, cwd: str
    ) -> PermissionAnswer | Declined:
        """`Asker.permission` for agent `agent`, run by the parent's call `call_id`; `by` is
        a hook's line when a hook made the gate ask ("" when none did; foreign: escape it);
        `cwd` the child's working directory (its worktree, if it has one), where a preview
        of the call is worked out."""
        ...
