"""What the person (and a trusted project) brings into the process, registered once at start
(INTERFACE.md §11, ADR-0045, ADR-0048): the installed packages' command hooks added to the
settings' own, the skills and the `skill` tool, the command hooks beside the plugins' hooks,
and the slash commands the markdown commands and skills make. The app calls it once; every
run the factory opens shares what it registered.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.registry import BUILTIN_COMMANDS, Registry
from ..kernel.settings import CommandHookEntry
from ._commands import TABLE
from ._run import current_run

if TYPE_CHECKING:
    from ..bring import Brought
    from ..kernel.interfaces import Command
    from ..kernel.notices import Notices
    from ..kernel.settings import Settings
    from ..sandbox import Sandbox

__all__ = ["bring_in"]


def bring_in(
    registry: Registry,
    notices: Notices,
    settings: Settings,
    sandbox: Sandbox,
    *,
    home: Path,
    user_home: Path,
    project: Path | None,
    workdir: Path,
    mcp: set[str],
) -> tuple[Brought, dict[str, Command]]:
    """What the person (and, when `project` is given, the trusted project) brings
    (INTERFACE.md §11): its skills (and the `skill` tool when there are any), its command
    hooks registered beside the plugins' (the same choke point runs both), and the slash
    commands its markdown commands and skills make, their names checked against bingo's own
    and the plugins'."""
    from ..bring import bring

    def session_id() -> str:
        run = current_run()
        return (run.session_id() or "") if run is not None else ""

    from msgspec.structs import replace

    from ..bridge._package import package_parts

    packages = package_parts(home, project)
    extra = tuple(
        CommandHookEntry(
            hook.event,
            hook.matcher,
            hook.command,
            hook.timeout,
            False,
            f"plugin {package.name}",
            (str(root), str(home / "data" / "plugins" / package.name)),
        )
        for root, package in packages
        for hook in package.hooks
    )
    if extra:
        settings = replace(settings, command_hooks=settings.command_hooks + extra)
    brought = bring(
        packages=[root for root, _ in packages],
        home=home,
        user_home=user_home,
        project=project,
        settings=settings,
        notices=notices,
        sandbox=sandbox,
        workdir=workdir,
        session=session_id,
        mcp=mcp,
    )
    if brought.skills:
        from ..tools import SkillTool

        registry.add_tool(SkillTool(lambda: brought.skills))
    for hook in brought.hooks:
        registry.add_hook(hook)
    commands = brought.slash(
        taken=BUILTIN_COMMANDS | {entry.name for entry in TABLE},
        plugins={name: command.source for name, command in registry.commands.items()},
        say=lambda line: notices.say("bingo", line, "warning"),
    )
    return brought, commands
