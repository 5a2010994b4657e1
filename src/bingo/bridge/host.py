"""The plugin host: every plugin process of this run, and what they contribute.

Owns starting the discovered plugins (spawn and handshake concurrently, each under the
`initialize` deadline), registering one proxy per declared capability in the Registry in
plugin-name order (so the first in name order keeps a contested name or key), refusing
`bingo.*` service keys, the reserved `bingo.host` service, the `/plugins` status, and, on
leaving the `async with`, the concurrent bounded shutdown of every process and its children.

It does not discover plugins (discovery.py does), decide trust, or run turns.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..kernel.notices import Notices
from ..kernel.registry import Registry
from ..kernel.settings import Settings
from ..wire import HOST_SERVICE_KEY, InitializeResult
from ._link import Calls
from ._plugin import Backoff, HostFacts, Plugin
from .command import BridgedCommand
from .compactor import BridgedCompactor
from .contributor import BridgedContributor
from .discovery import PluginSource
from .hook import BridgedHook
from .provider import BridgedProvider
from .service import BridgedService, HostService, ServiceRouter
from .tool import BridgedTool

__all__ = ["PluginHost", "PluginStatus"]

_RESERVED_PREFIX = "bingo."


def _host_version() -> str:
    try:
        return importlib.metadata.version("bingo")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


@dataclass(slots=True, frozen=True)
class PluginStatus:
    """One plugin as `/plugins` shows it. `state` is `running`, `stopped` or `refused`;
    `why` says why it is not running; `contributes` names what it registered, as the kernel
    knows it (`tool plugin__wordcount__count`, `command /wordcount`, ...)."""

    name: str
    layer: Literal["user", "project"]
    path: Path
    version: str
    state: Literal["running", "stopped", "refused"]
    why: str | None
    contributes: tuple[str, ...]


class PluginHost:
    """Owns every plugin process. `async with PluginHost(...) as host: await host.start()`;
    on exit every plugin process, and every child it forked, is gone."""

    def __init__(
        self,
        *,
        sources: Sequence[PluginSource],
        registry: Registry,
        notices: Notices,
        settings: Settings,
        data_dir: Path,
        cwd: Path,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self._sources = sorted(sources, key=lambda source: source.name)
        self._registry = registry
        self._notices = notices
        self._settings = settings
        self._data_dir = data_dir
        self._cwd = cwd
        self._environ = dict(os.environ if environ is None else environ)
        self._clock = clock
        self._backoff = backoff or Backoff()
        self._books: dict[str, Calls] = {}
        self._router = ServiceRouter(registry, notices, self._books)
        self._plugins: dict[str, Plugin] = {}
        self._contributes: dict[str, list[str]] = {}
        self._group = asyncio.TaskGroup()

    async def __aenter__(self) -> PluginHost:
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for plugin in self._plugins.values():
            plugin.stop()
        await self._group.__aexit__(None, None, None)

    async def start(self) -> None:
        """Spawn every plugin without a problem and handshake with all of them at once, then
        register what each contributes, in plugin-name order. Never raises for a plugin's
        fault: a plugin that fails is a notice and a `/plugins` line."""
        loop = asyncio.get_running_loop()
        facts = HostFacts(
            version=_host_version(), cwd=self._cwd, data_dir=self._data_dir, environ=self._environ
        )
        if HOST_SERVICE_KEY not in self._registry.services:
            self._registry.add_service(HostService())
        for source in self._sources:
            if source.manifest is None:
                self._notices.say(source.name, f"refused: {source.problem}", "warning")
                continue
            plugin = Plugin(
                source,
                source.manifest,
                facts=facts,
                settings=self._settings,
                notices=self._notices,
                router=self._router,
                group=self._group,
                clock=self._clock or loop.time,
                backoff=self._backoff,
            )
            self._plugins[source.name] = plugin
            self._books[source.name] = plugin.calls
        await asyncio.gather(*(plugin.start() for plugin in self._plugins.values()))
        for name in sorted(self._plugins):
            plugin = self._plugins[name]
            if plugin.info is not None:
                self._contributes[name] = self._register(plugin, plugin.info)

    def _register(self, plugin: Plugin, info: InitializeResult) -> list[str]:
        registry, added = self._registry, list[str]()
        for tool_spec in info.tools:
            tool = BridgedTool(plugin, tool_spec)
            if registry.add_tool(tool):
                added.append(f"tool {tool.spec.name}")
        for command_spec in info.commands:
            if registry.add_command(BridgedCommand(plugin, command_spec)):
                added.append(f"command /{command_spec.name}")
        for contributor_spec in info.contributors:
            registry.add_contributor(BridgedContributor(plugin, contributor_spec))
            added.append(f"contributor {contributor_spec.name}")
        for compactor_spec in info.compactors:
            compactor = BridgedCompactor(plugin, compactor_spec)
            if registry.add_compactor(compactor):
                added.append(f"compactor {compactor.spec.name}")
        for provider_spec in info.providers:
            provider = BridgedProvider(plugin, provider_spec)
            if registry.add_provider(provider):
                added.append(f"provider {provider.spec.name}")
        for hook_spec in info.hooks:
            registry.add_hook(BridgedHook(plugin, hook_spec))
            added.append(f"hook {hook_spec.name} ({hook_spec.site}: {', '.join(hook_spec.points)})")
        for service_spec in info.services:
            if service_spec.key.startswith(_RESERVED_PREFIX):
                self._notices.say(
                    plugin.name,
                    f"service {service_spec.key!r} refused: keys starting "
                    f"{_RESERVED_PREFIX!r} are reserved for the host",
                    "warning",
                )
                continue
            if registry.add_service(BridgedService(plugin, service_spec)):
                added.append(f"service {service_spec.key}")
        return added

    def status(self) -> list[PluginStatus]:
        """Every discovered plugin, in name order, for `/plugins`."""
        statuses: list[PluginStatus] = []
        for source in self._sources:
            plugin = self._plugins.get(source.name)
            if plugin is None:
                statuses.append(
                    PluginStatus(
                        name=source.name,
                        layer=source.layer,
                        path=source.root,
                        version="",
                        state="refused",
                        why=source.problem,
                        contributes=(),
                    )
                )
                continue
            state = plugin.state
            version = plugin.info.version if plugin.info is not None else plugin.manifest.version
            statuses.append(
                PluginStatus(
                    name=source.name,
                    layer=source.layer,
                    path=source.root,
                    version=version or plugin.manifest.version,
                    state="stopped" if state == "starting" else state,
                    why=plugin.why,
                    contributes=tuple(self._contributes.get(source.name, ())),
                )
            )
        return statuses
