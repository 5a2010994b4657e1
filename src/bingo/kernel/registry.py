"""The registry: every tool, command, contributor, compactor, provider, hook and service the
host has, by the name the kernel knows it by.

Owns the rule for clashes: the first to claim a name keeps it and the later one is refused
with a notice. A clash never ends the program. It does not start or stop anything.
"""

from __future__ import annotations

import msgspec


from .interfaces import Command, Compactor, ContextContributor, Hook, Provider, Service, Tool
from .notices import Notices

__all__ = ["Registry"]


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

    def add_tool(self, tool: Tool) -> bool:
        """Register a tool under `tool.spec.name`; False (and a notice) if the name is taken."""
        name = tool.spec.name
        if name in self.tools:
            self._refuse("tool", name, tool.source, self.tools[name].source)
            return False
        self.tools[name] = tool
        return True

    def add_command(self, command: Command) -> bool:
        """Register a command under its name; False (and a notice) if the name is taken."""
        name = command.spec.name
        if name in self.commands:
            self._refuse("command", "/" + name, command.source, self.commands[name].source)
            return False
        self.commands[name] = command
        return True

    def add_contributor(self, contributor: ContextContributor) -> None:
        """Register a context contributor."""
        self.contributors.append(contributor)

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

    def add_hook(self, hook: Hook) -> None:
        """Register a hook; hooks run in registration order."""
        self.hooks.append(hook)

    def add_service(self, service: Service) -> bool:
        """Register a service under its key; False (and a notice) if the key is taken."""
        key = service.spec.key
        if key in self.services:
            self._refuse("service", key, service.source, self.services[key].source)
            return False
        self.services[key] = service
        return True
