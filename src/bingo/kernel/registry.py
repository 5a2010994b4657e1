"""The registry: every tool, command, contributor, compactor, provider, hook and service the
host has, by the name the kernel knows it by.

Owns the rule for clashes: the first to claim a name keeps it and the later one is refused
with a notice; bingo's own command and tool names are reserved, so a plugin that declares
one is refused it whatever the order they are registered in; and a hook whose declaration
names no valid site and points (`hook_problem`) is refused rather than registered to never
run. A refusal never ends the program. It does not start or stop anything.
"""

from __future__ import annotations

import msgspec

from .hooks import hook_problem
from .interfaces import Command, Compactor, ContextContributor, Hook, Provider, Service, Tool
from .notices import Notices

__all__ = ["BUILTIN", "BUILTIN_COMMANDS", "BUILTIN_TOOLS", "Registry"]

BUILTIN = "builtin"
"""The `source` of bingo's own commands and tools; no plugin may take this name (manifest.py)."""

BUILTIN_COMMANDS: frozenset[str] = frozenset(
    {"clear", "compact", "exit", "help", "plugins", "quit", "sessions", "tools"}
)
"""bingo's own slash commands, every surface's (the terminal's `/clear` and `/sessions`
included) and those to come (`/exit`, `/quit`): a plugin's command never takes one."""

BUILTIN_TOOLS: frozenset[str] = frozenset({"bash", "edit", "glob", "grep", "read", "write"})
"""bingo's own tools, with `write` and `edit` to come: no tool but bingo's has one of these
names (a plugin's tools are `plugin__<plugin>__<tool>` besides)."""


class Registry(msgspec.Struct):
    """What the host can use this run."""

    notices: Notices
    tools: dict[str, Tool] = msgspec.field(default_factory=dict[str, Tool])
    commands: dict[str, Command] = msgspec.field(default_factory=dict[str, Command])
    contributors: list[ContextContributor] = msgspec.field(default_factory=list[ContextContributor])
    compactors: dict[str, Compactor] = msgspec.field(default_factory=dict[str, Compactor])
    providers: dict[str, Provider] = msgspec.field(default_factory=dict[str, Provider])
    hooks: list[Hook] = msgspec.field(default_factory=list[Hook])
    services: dict[str, Service] = msgspec.field(default_factory=dict[str, Service])

    def _refuse(self, kind: str, name: str, loser: str, keeper: str) -> None:
        self.notices.say(
            loser,
            f"{kind} {name!r} is already provided by {keeper}; this one is not used",
            "warning",
        )

    def _reserved(self, kind: str, shown: str, source: str) -> None:
        self.notices.say(source, f"{kind} {shown!r} refused: {shown} is bingo's own {kind}; rename it", "warning")

    def add_tool(self, tool: Tool) -> bool:
        """Register a tool under `tool.spec.name`; False (and a notice) if the name is taken
        or is one of bingo's own and the tool is not."""
        name = tool.spec.name
        if name in BUILTIN_TOOLS and tool.source != BUILTIN:
            self._reserved("tool", name, tool.source)
            return False
        if name in self.tools:
            self._refuse("tool", name, tool.source, self.tools[name].source)
            return False
        self.tools[name] = tool
        return True

    def add_command(self, command: Command) -> bool:
        """Register a command under its name; False (and a notice) if the name is taken or
        is one of bingo's own and the command is not."""
        name = command.spec.name
        if name in BUILTIN_COMMANDS and command.source != BUILTIN:
            self._reserved("command", "/" + name, command.source)
            return False
        if name in self.commands:
            self._refuse("command", "/" + name, command.source, self.commands[name].source)
            return False
        self.commands[name] = command
        return True

    def add_contributor(self, contributor: ContextContributor, at: int | None = None) -> None:
        """Register a context contributor, last or at index `at` (where the one it replaces was)."""
        self.contributors.insert(len(self.contributors) if at is None else at, contributor)

    def add_compactor(self, compactor: Compactor) -> bool:
        """Register a compactor under its name; False (and a notice) if the name is taken."""
        name = compactor.spec.name
        if name in self.compactors:
            self._refuse("compactor", name, compactor.source, self.compactors[name].source)
            return False
        self.compactors[name] = compactor
        return True

    def add_provider(self, provider: Provider) -> bool:
        """Register a provider under its name; False (and a notice) if the name is taken."""
        name = provider.spec.name
        if name in self.providers:
            self._refuse("provider", name, provider.source, self.providers[name].source)
            return False
        self.providers[name] = provider
        return True

    def add_hook(self, hook: Hook, at: int | None = None) -> bool:
        """Register a hook, last or at index `at` (where the one it replaces was): hooks run
        in list order. False (and a notice naming the valid pairs) when its declaration is
        no hook: registered, it would be listed and never run."""
        problem = hook_problem(hook.spec)
        if problem is not None:
            self.notices.say(hook.source, f"hook {hook.spec.name} refused: {problem}", "warning")
            return False
        self.hooks.insert(len(self.hooks) if at is None else at, hook)
        return True

    def add_service(self, service: Service) -> bool:
        """Register a service under its key; False (and a notice) if the key is taken."""
        key = service.spec.key
        if key in self.services:
            self._refuse("service", key, service.source, self.services[key].source)
            return False
        self.services[key] = service
        return True
