"""Reading, once at start, what the person and a trusted project bring (see the package)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.interfaces import Command, Hook
from ..kernel.notices import Notices
from ..kernel.settings import Settings
from ._files import Layer
from ._slash import slash_commands
from .agents import AgentFile, agent_catalogue, agent_places, find_agents
from .commands import MarkdownCommandFile, command_places, find_commands
from .hooks import command_hooks
from .skills import Skill, catalogue, find_skills, skill_places

if TYPE_CHECKING:
    from ..sandbox import Sandbox

__all__ = ["Brought", "bring"]


@dataclass(slots=True)
class Brought:
    """What a run takes from what the person (and a trusted project) brought."""

    skills: dict[str, Skill] = field(default_factory=lambda: {})
    commands: dict[str, MarkdownCommandFile] = field(default_factory=lambda: {})
    hooks: list[Hook] = field(default_factory=lambda: [])
    bare: dict[str, MarkdownCommandFile] = field(default_factory=lambda: {})
    """A package's command by its bare name (`/NAME` for `/PLUGIN:NAME`), offered only while
    no other command has the name (ADR-0048)."""
    agents: dict[str, AgentFile] = field(default_factory=lambda: {})
    """The agent files (INTERFACE.md §15), by name."""
    plugin_skills: dict[str, Skill] = field(default_factory=lambda: {})
    """A package's skills by their long names (`PLUGIN:NAME`): each is `/PLUGIN:NAME`, as
    Claude Code offers a plugin's skill, whichever skill has the bare name (ADR-0048)."""

    def catalogue(self) -> str:
        """The system prompt's section on skills ("" with none)."""
        return catalogue(self.skills)

    def agents_catalogue(self) -> str:
        """The system prompt's section on subagents and the agents there are."""
        return agent_catalogue(self.agents)

    def slash(
        self, *, taken: Collection[str], plugins: Mapping[str, str], say: Callable[[str], None]
    ) -> dict[str, Command]:
        """The slash commands the markdown commands and skills make (names refused as
        `slash_commands` says)."""
        return slash_commands(
            self.commands, self.skills, taken=taken, plugins=plugins, say=say, bare=self.bare, long=self.plugin_skills
        )


def bring(
    *,
    home: Path,
    user_home: Path,
    project: Path | None,
    settings: Settings,
    notices: Notices,
    sandbox: Sandbox | None,
    workdir: Path,
    session: Callable[[], str],
    mcp: Collection[str],
    packages: Sequence[Path] = (),
) -> Brought:
    """Read what the person brings (`home` is `~/.bingo`, `user_home` their home) and, when
    `project` is given (a trusted project's root), what the project brings; each file that
    cannot be loaded is one notice; `packages` are the directories of installed plugin
    packages (ADR-0048), each named as its directory: its `skills/` and `agents/` are read as
    the user's, after the user's own places, and each of its `commands/` is `/PLUGIN:NAME`, and
    `/NAME` too while no other command has that name (as Claude Code offers a plugin's command).
    `settings.command_hooks` holds only what is in force
    (an untrusted project's are not), each made a hook running in `sandbox` in `workdir`."""

    def say(line: str) -> None:
        notices.say("bingo", line, "warning")

    everywhere = Path("/")
    places = skill_places(home, user_home, project)
    theirs = [(root, find_skills([Layer(root / "skills", "user", everywhere)], say)) for root in packages]
    # As one find_skills over the user's places, the packages' and the project's would give,
    # each package read once: the project's win a name, then the user's own, then the first package's.
    skills: dict[str, Skill] = {}
    for _root, found in reversed(theirs):
        skills.update(found)
    skills.update(find_skills([place for place in places if place.whose == "user"], say))
    skills.update(find_skills([place for place in places if place.whose != "user"], say))
    plugin_skills = {
        f"{root.name}:{name}": replace(skill, name=f"{root.name}:{name}")
        for root, found in theirs
        for name, skill in found.items()
    }
    commands = find_commands(command_places(home, user_home, project), say)
    bare: dict[str, list[MarkdownCommandFile]] = {}
    for root in packages:
        for name, file in find_commands([Layer(root / "commands", "user", everywhere)], say).items():
            file = replace(file, whose=f"plugin {root.name}")
            commands.setdefault(f"{root.name}:{name}", replace(file, name=f"{root.name}:{name}"))
            bare.setdefault(name, []).append(file)
    agents = find_agents(
        _with(
            agent_places(home, user_home, project), [Layer(root / "agents", "user", everywhere) for root in packages]
        ),
        say,
    )
    hooks = command_hooks(
        settings.command_hooks, notices=notices, sandbox=sandbox, project=workdir, session=session, mcp=mcp
    )
    free = {name: files[0] for name, files in bare.items() if len(files) == 1 and name not in commands}
    return Brought(skills, commands, hooks, free, agents, plugin_skills)


def _with(places: list[Layer], packages: list[Layer]) -> list[Layer]:
    """`places` with the packages' places after the user's own (before the project's)."""
    users = sum(1 for place in places if place.whose == "user")
    return [*places[:users], *packages, *places[users:]]
