"""The seam between a surface and the run it shows: what a surface must offer (`Surface`)
and what it may ask of the run (`Driver`). Both are Protocols, so the terminal surface, the
print surface and any test twin meet the run the same way."""

from __future__ import annotations

from typing import Protocol

from ..kernel.interfaces import Asker, TurnEvents
from ..wire import CommandOutcome, CommandSpec, Completion, Notice

__all__ = ["Driver", "Surface"]


class Surface(TurnEvents, Asker, Protocol):
    """Where a run is shown: its turn events, its questions, its notices and outcomes."""

    def notice(self, notice: Notice) -> None: ...

    def outcome(self, outcome: CommandOutcome) -> None: ...

    def end(self) -> None:
        """A turn or command is over."""
        ...


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
