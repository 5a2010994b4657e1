"""bingo's own slash commands, in one table: each name, the places it is offered, and how it
is made over a run.

A run takes the entries of its place (`commands_for`) and hands them to its dispatcher,
which finds them before any plugin's (and the registry keeps their names from plugins:
`kernel.registry.BUILTIN_COMMANDS`). `/help` lists what the run offers and, in one line,
what it does not and where that is. Adding a command is one entry here; the command classes
live with the state they read (the kernel's, the sandbox's, the bridge's, a surface's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..kernel.commands import CompactCommand, ContextCommand, HelpCommand, ModelCommand, ToolsCommand
from ..kernel.interfaces import Command
from ..sandbox import SandboxCommand
from ..surfaces import EXIT_COMMANDS, ClearCommand, ExitCommand, SessionsCommand, UsageCommand
from ._run import Place, Run

if TYPE_CHECKING:
    from ._factory import RunFactory

__all__ = ["EVERYWHERE", "PLACES", "TABLE", "Entry", "commands_for", "elsewhere"]

PLACES: dict[Place, str] = {
    "terminal": "the terminal",
    "print": "bingo -p",
    "room": "a Matrix room",
    "editor": "an editor",
}
"""Each place, as `/help` names it."""

EVERYWHERE: frozenset[Place] = frozenset(PLACES)

_EDITOR_CLEARED = (
    "a fresh conversation starts with your next prompt: the model sees nothing before it (this thread keeps it)"
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One of bingo's commands: its name, where it is offered, and how it is made over a run
    (with the factory that opened it, for what the process shares)."""

    name: str
    places: frozenset[Place]
    make: Callable[[Run, RunFactory], Command]


def _clear(run: Run, factory: RunFactory) -> Command:
    if run.place == "editor":
        return ClearCommand(run.clear, said=_EDITOR_CLEARED)
    return ClearCommand(run.clear)


def _result(run: Run, factory: RunFactory) -> Command:
    from ..surfaces.terminal import ResultCommand, TerminalSurface

    assert isinstance(run.surface, TerminalSurface)  # offered on the terminal only
    return ResultCommand(run.surface)


def _resume(run: Run, factory: RunFactory) -> Command:
    from ..surfaces.terminal import ResumeCommand, TerminalSurface

    assert isinstance(run.surface, TerminalSurface)  # offered on the terminal only
    return ResumeCommand(run, run.surface)


def _stop(run: Run, factory: RunFactory) -> Command:
    from ..surfaces.channel import StopCommand

    return StopCommand()


def _exit(name: str) -> Callable[[Run, RunFactory], Command]:
    return lambda run, factory: ExitCommand.named(name)


def _skills(run: Run, factory: RunFactory) -> Command:
    from ..bring import SkillsCommand

    return SkillsCommand(factory.brought.skills if factory.brought is not None else {})


def _agents(run: Run, factory: RunFactory) -> Command:
    from ..bring import AgentsCommand

    return AgentsCommand(factory.agents())


def _plugins(run: Run, factory: RunFactory) -> Command:
    from ..bridge import PluginsCommand

    return PluginsCommand(factory.plugins, factory.trust, factory.sandbox)


def _rewind(run: Run, factory: RunFactory) -> Command:
    from ._rewind import RewindCommand

    return RewindCommand(run, factory.checkpoints)


TABLE: tuple[Entry, ...] = (
    Entry("help", EVERYWHERE, lambda run, f: HelpCommand(run.commands, elsewhere(run.place))),
    Entry("tools", EVERYWHERE, lambda run, f: ToolsCommand(f.registry, f.gate)),
    Entry("compact", EVERYWHERE, lambda run, f: CompactCommand(run.compact)),
    Entry("context", EVERYWHERE, lambda run, f: ContextCommand(run.conversation, run.choose)),
    Entry("model", EVERYWHERE, lambda run, f: ModelCommand(run.conversation, run.choose)),
    Entry("plugins", EVERYWHERE, _plugins),
    Entry("sandbox", EVERYWHERE, lambda run, f: SandboxCommand(f.sandbox)),
    Entry("sessions", EVERYWHERE, lambda run, f: SessionsCommand(run.sessions)),
    Entry("usage", EVERYWHERE, lambda run, f: UsageCommand(run.used, run.spent)),
    # A fresh conversation means nothing for one prompt under -p.
    Entry("clear", frozenset({"terminal", "room", "editor"}), _clear),
    # A room's bot runs on (the room says so), and an editor ends its own sessions.
    *(Entry(name, frozenset({"terminal", "print"}), _exit(name)) for name in sorted(EXIT_COMMANDS)),
    # The terminal's own: the results it drew, and a list to choose from on it.
    Entry("result", frozenset({"terminal"}), _result),
    Entry("resume", frozenset({"terminal"}), _resume),
    # The room takes the word before its queue: a room's Ctrl-C.
    Entry("stop", frozenset({"room"}), _stop),
    Entry("skills", EVERYWHERE, _skills),
    # Files and conversation back to before a prompt (ADR-0044): asks on a terminal only.
    Entry("rewind", EVERYWHERE, _rewind),
    # The agents the model can hand a task to (INTERFACE.md §15, ADR-0049).
    Entry("agents", EVERYWHERE, _agents),
)
"""bingo's own commands: one entry each."""


def commands_for(run: Run, factory: RunFactory) -> Mapping[str, Command]:
    """The table's commands of `run`'s place, bound to it; then the markdown commands and
    skills the person brought (their names were checked against the table's: ADR-0045)."""
    own = {entry.name: entry.make(run, factory) for entry in TABLE if run.place in entry.places}
    return {**factory.brought_commands, **own}


def elsewhere(place: Place) -> str | None:
    """`/help`'s line on the commands not offered at `place`, and where they are."""
    missing = [
        f"/{entry.name} ({', '.join(PLACES[p] for p in PLACES if p in entry.places)})"
        for entry in TABLE
        if place not in entry.places
    ]
    return f"not offered here: {'; '.join(missing)}" if missing else None
