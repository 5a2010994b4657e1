"""The plugin host: every plugin process of this run, and what they contribute.

Owns starting the discovered plugins (spawn and handshake concurrently, each under the
`initialize` deadline), registering one proxy per declared capability in the Registry in
plugin-name order (so the first in name order keeps a contested name or key), by one table
of the kinds (`_KINDS`: declarations → proxy class → registry method), the reserved
`bingo.host` service, the `/plugins` status, and, on leaving the `async with`, the
concurrent bounded shutdown of every process and its children. Which names and keys a
plugin may not take is the Registry's rule, and only its methods change what it holds.

With the declaration cache (`_cache.py`, ADR-0012) a plugin whose answer is cached under
its current key is registered from the cache and not started (`idle`); it starts on its
first use. A plugin that declares an observer hook is started at once all the same, since
an observation never starts a plugin and it would miss what it watches. When a real
handshake answers other than what is registered, the host drops that plugin's proxies,
registers what it declares now (in the same places of the hook and contributor lists),
files the new answer and says so in one notice; a refusal drops them and the entry.

It does not discover plugins (discovery.py does), decide trust, or run turns.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

import msgspec

from .. import __version__
from ..kernel.dispatch import ChooseModel
from ..kernel.hooks import OBSERVE_POINTS, hook_problem
from ..kernel.notices import Notices
from ..kernel.registry import Places, Registry
from ..kernel.settings import Settings
from ..sandbox import Sandbox
from ..wire import HOST_SERVICE_KEY, InitializeResult
from ._backoff import Backoff
from ._desk import SignInDesk
from ._link import Calls
from .command import BridgedCommand
from .compactor import BridgedCompactor
from .contributor import BridgedContributor
from .discovery import PluginSource
from .hook import BridgedHook
from .provider import BridgedProvider
from .service import BridgedService, HostService, ServiceRouter
from .tool import BridgedTool

if TYPE_CHECKING:
    from ._cache import DeclarationCache, Declared
    from ._plugin import Plugin

__all__ = ["PluginHost", "PluginStatus"]

_log = logging.getLogger(__name__)

_NOT_STARTED = "not started yet"
"""`/plugins`' words for a plugin declared from the cache that nothing has used yet."""


class PluginStatus(msgspec.Struct, frozen=True):
    """One plugin as `/plugins` shows it. `state` is `running`, `idle` (declared from the
    cache, not started yet), `stopped`, `refused`, or `not started` (left out this run: an
    untrusted project's, or a user plugin a trusted project's hides); `why` says why it is not running;
    `contributes` names what it registered, as the kernel knows it
    (`tool plugin__wordcount__count`, `command /wordcount`, ...)."""

    name: str
    layer: Literal["user", "project"]
    path: Path
    version: str
    state: Literal["running", "idle", "stopped", "refused", "not started"]
    why: str | None
    contributes: tuple[str, ...]


_S = TypeVar("_S")
_P = TypeVar("_P")


class _Registrar(Protocol):
    def register(self, registry: Registry, plugin: Plugin, info: InitializeResult, at: Places) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class _Kind(Generic[_S, _P]):
    """One kind a plugin contributes: where its handshake lists the declarations, the proxy
    that stands for one, the registry method that registers it, and how `/plugins` names it."""

    specs: Callable[[InitializeResult], Sequence[_S]]
    proxy: Callable[[Plugin, _S], _P]
    add: Callable[[Registry, _P, Places], bool]
    shown: Callable[[_P], str]

    def register(self, registry: Registry, plugin: Plugin, info: InitializeResult, at: Places) -> list[str]:
        """Register a proxy for each declaration; how `/plugins` names the ones taken."""
        added: list[str] = []
        for spec in self.specs(info):
            proxy = self.proxy(plugin, spec)
            if self.add(registry, proxy, at):
                added.append(self.shown(proxy))
        return added


def _keyed(add: Callable[[Registry, _P], bool]) -> Callable[[Registry, _P, Places], bool]:
    """A registry method of a kind kept by name: it has no place in a run order."""

    def at(registry: Registry, proxy: _P, _places: Places) -> bool:
        return add(registry, proxy)

    return at


_KINDS: tuple[_Registrar, ...] = (
    # In this order: it is the order of the refusal notices and of `/plugins`' list.
    _Kind(lambda info: info.tools, BridgedTool, _keyed(Registry.add_tool), lambda tool: f"tool {tool.spec.name}"),
    _Kind(
        lambda info: info.commands,
        BridgedCommand,
        _keyed(Registry.add_command),
        lambda command: f"command /{command.spec.name}",
    ),
    _Kind(
        lambda info: info.contributors,
        BridgedContributor,
        Registry.add_contributor,
        lambda contributor: f"contributor {contributor.spec.name}",
    ),
    _Kind(
        lambda info: info.compactors,
        BridgedCompactor,
        _keyed(Registry.add_compactor),
        lambda compactor: f"compactor {compactor.spec.name}",
    ),
    _Kind(
        lambda info: info.providers,
        BridgedProvider,
        _keyed(Registry.add_provider),
        lambda provider: f"provider {provider.spec.name}",
    ),
    _Kind(
        lambda info: info.hooks,
        BridgedHook,
        Registry.add_hook,
        lambda hook: f"hook {hook.spec.name} ({hook.spec.site}: {', '.join(hook.spec.points)})",
    ),
    _Kind(
        lambda info: info.services,
        BridgedService,
        _keyed(Registry.add_service),
        lambda service: f"service {service.spec.key}",
    ),
)
"""Every kind a plugin contributes: kind → declarations → proxy → registry method."""


def _decides(info: InitializeResult, site: str, point: str) -> bool:
    """Whether the plugin declares a hook at decision point `site.point`."""
    return any(hook.site == site and point in hook.points for hook in info.hooks)


def _command_of(prompt: str | None) -> str | None:
    """The slash command a prompt runs (`/wordcount notes.txt` → `wordcount`), or None."""
    if prompt is None or not prompt.startswith("/"):
        return None
    return prompt[1:].partition(" ")[0] or None


def _observes(info: InitializeResult) -> bool:
    """Whether the plugin declares a hook at an observation point (one the registry takes)."""
    return any(
        (hook.site, point) in OBSERVE_POINTS and hook_problem(hook) is None
        for hook in info.hooks
        for point in hook.points
    )


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
        listed: Sequence[tuple[PluginSource, str]] = (),
        digests: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] | None = None,
        backoff: Backoff | None = None,
        cache: bool = True,
        choose_model: ChooseModel | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self._sources = sorted(sources, key=lambda source: source.name)
        self._sandbox = sandbox
        """The run's sandbox, which every plugin process is started in (None: never confined)."""
        self._listed = list(listed)
        self._digests = dict(digests or {})
        """Trust's content digest of each project plugin, by name, taken this run: the
        cache keys them by it rather than hashing them twice."""
        """Plugins shown by `/plugins` that this run does not start, and why."""
        self._registry = registry
        self._notices = notices
        self._settings = settings
        self._data_dir = data_dir
        self._cwd = cwd
        self._environ = dict(os.environ if environ is None else environ)
        self._clock = clock
        self._backoff = backoff or Backoff()
        self._choose_model = choose_model
        """The run's model, for the MCP servers the person lets sample it."""
        self._books: dict[str, Calls] = {}
        self._router = ServiceRouter(registry, notices, self._books)
        self._plugins: dict[str, Plugin] = {}
        self._contributes: dict[str, list[str]] = {}
        self._registered: set[str] = set()
        """The plugins whose declarations are registered now."""
        self._cache: DeclarationCache | None = None
        self._caches = cache
        """Whether declarations are cached: the cache is opened by `start` when there is a
        plugin (the processes' and the cache's modules are imported only then)."""
        self._declared: dict[str, Declared] = {}
        self._started = False
        self._group = asyncio.TaskGroup()
        self.sign_ins = SignInDesk(self._group.create_task)
        """The run's questions about signing in to a server (INTERFACE §14): a surface that
        can ask sets `interactive` before `start` and `listen`s once it can ask."""

    async def __aenter__(self) -> PluginHost:
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.sign_ins.close()
        for plugin in self._plugins.values():
            plugin.stop()
        await self._group.__aexit__(None, None, None)

    async def start(self) -> None:
        """Declare every plugin without a problem: from the cache where its answer is cached
        under its current key (not started), otherwise by spawning it and handshaking, all
        at once; then register what each contributes, in plugin-name order. Never raises
        for a plugin's fault: a plugin that fails is a notice and a `/plugins` line."""
        if HOST_SERVICE_KEY not in self._registry.services:
            self._registry.add_service(HostService())
        if not self._sources:
            self._started = True
            return
        from ._cache import DeclarationCache
        from ._plugin import HostFacts, Plugin

        if self._caches:
            self._cache = DeclarationCache(self._data_dir)
        loop = asyncio.get_running_loop()
        facts = HostFacts(
            version=__version__,
            cwd=self._cwd,
            data_dir=self._data_dir,
            environ=self._environ,
            choose_model=self._choose_model,
            sandbox=self._sandbox,
            sign_ins=self.sign_ins,
        )
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
                on_answer=self._answered,
            )
            self._plugins[source.name] = plugin
            self._books[source.name] = plugin.calls
        if self._cache is not None and self._plugins:
            # One thread hop for every plugin's fingerprint (it reads their files).
            self._declared = await asyncio.to_thread(self._lookup, list(self._plugins.values()))
        spawn: list[Plugin] = []
        for name, plugin in self._plugins.items():
            declared = self._declared.get(name)
            if declared is not None and declared.info is not None and not _observes(declared.info):
                plugin.declare(declared.info)
            else:
                spawn.append(plugin)
        await asyncio.gather(*(plugin.start() for plugin in spawn))
        for name in sorted(self._plugins):
            plugin = self._plugins[name]
            if plugin.info is not None:
                self._contributes[name] = self._register(plugin, plugin.info)
        self._started = True
        if self._cache is not None and spawn:
            # Bookkeeping for the next run, not part of being ready: the host's task group
            # sees it done before the host is left.
            self._group.create_task(self._file_soon(spawn))

    def warm(self, prompt: str | None) -> None:
        """Begin starting, in the background, each idle plugin the run is about to use, so
        that their interpreters start together and while the run finishes its own start-up:
        for a slash command, the plugin whose command it is and those with a
        `command.before` hook; otherwise (a prompt, or a terminal session, whose turns
        consult them), those with a contributor, a `prompt.submit` hook, or a provider that
        may be the run's (the one `provider` names, or any when it names none), and those
        with a tool or a `tool.before` hook, so a model's first call does not wait for a
        cold start (ADR-0043). Only plugins the configuration runs (admitted: declared and
        trusted) are here; nothing is started on a record of past runs."""
        chosen = self._settings.provider
        command = _command_of(prompt)
        registry = self._registry
        runs = registry.commands.get(command) if command is not None else None
        for name in sorted(self._plugins):
            plugin, info = self._plugins[name], self._plugins[name].info
            if plugin.state != "idle" or info is None:
                continue
            if command is not None:
                wants = _decides(info, "command", "before") or (runs is not None and runs.source == name)
            else:
                wants = (
                    bool(info.contributors)
                    or _decides(info, "prompt", "submit")
                    or bool(info.tools)
                    or _decides(info, "tool", "before")
                    or any(p.source == name and chosen in (None, key) for key, p in registry.providers.items())
                )
            if wants:
                plugin.begin()

    def _lookup(self, plugins: Sequence[Plugin]) -> dict[str, Declared]:
        """Each plugin's key now and its cached declaration (blocking: reads files)."""
        assert self._cache is not None
        found: dict[str, Declared] = {}
        for plugin in plugins:
            found[plugin.name] = self._cache.lookup(
                plugin.source,
                environ=self._environ,
                config=self._settings.plugins.get(plugin.name, {}),
                host_version=__version__,
                content=self._digests.get(plugin.name) if plugin.source.layer == "project" else None,
            )
        return found

    async def _file_soon(self, spawned: Sequence[Plugin]) -> None:
        try:
            await asyncio.to_thread(self._file, spawned)
        except Exception:  # boundary: bookkeeping never takes the host down
            _log.exception("cannot file what the plugins declared")

    def _file(self, spawned: Sequence[Plugin]) -> None:
        """File what the plugins started at start-up declared, where it is not what the
        cache holds; forget the entries of those refused (blocking: writes files)."""
        assert self._cache is not None
        for plugin in spawned:
            declared = self._declared.get(plugin.name)
            if declared is None:
                continue
            if plugin.state == "refused" and declared.info is not None:
                self._cache.forget(plugin.source)
            elif plugin.info is not None and plugin.info != declared.info:
                self._cache.save(plugin.source, declared.key, plugin.info)

    def _refile(self, plugin: Plugin, info: InitializeResult | None) -> None:
        """File (or, for None, forget) a declaration learned after start-up, under the key
        computed at start, if the plugin's files are still what was keyed then: a plugin
        edited during the run is learned afresh by the next run (blocking: reads files)."""
        cache, declared = self._cache, self._declared.get(plugin.name)
        if cache is None or declared is None:
            return
        if info is None:
            cache.forget(plugin.source)
            return
        config = self._settings.plugins.get(plugin.name, {})
        now = cache.key(plugin.source, environ=self._environ, config=config, host_version=__version__)
        if now == declared.key:
            cache.save(plugin.source, declared.key, info)
        from ._cache import Declared

        self._declared[plugin.name] = Declared(key=declared.key, info=info)

    async def _answered(self, plugin: Plugin, answer: InitializeResult | str) -> None:
        """A handshake's outcome after start-up: reconcile what is registered with it."""
        if not self._started:
            return  # start() registers in name order, and files what it learned
        name = plugin.name
        if isinstance(answer, str):
            self._unregister(name)
            self._contributes[name] = []
            await asyncio.to_thread(self._refile, plugin, None)
            return
        if answer == plugin.info and name in self._registered:
            return
        had = plugin.info is not None and name in self._registered
        places = self._unregister(name)
        plugin.info = answer
        self._contributes[name] = self._register(plugin, answer, places)
        await asyncio.to_thread(self._refile, plugin, answer)
        if had:
            self._notices.say(
                name,
                "declares other contributions than the ones registered for it; what it declares now is registered",
                "info",
            )

    def _unregister(self, name: str) -> Places:
        """Drop everything registered for plugin `name`; where its contributors and hooks
        stood, so that what replaces them keeps the run order."""
        self._registered.discard(name)
        return self._registry.unregister(name)

    def _register(self, plugin: Plugin, info: InitializeResult, at: Places | None = None) -> list[str]:
        """Register a proxy for each of `info`'s declarations, in the table's order (those
        with a run order at `at`); how `/plugins` names each one taken."""
        at = at or Places()
        added = [shown for kind in _KINDS for shown in kind.register(self._registry, plugin, info, at)]
        self._registered.add(plugin.name)
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
            state, why = plugin.state, plugin.why
            version = plugin.info.version if plugin.info is not None else plugin.manifest.version
            shown: Literal["running", "idle", "stopped", "refused"]
            if state == "idle":
                shown, why = "idle", _NOT_STARTED
            elif state == "starting":
                # Starting for the first time (from the cache) is still idle; a restart is
                # a stopped plugin coming back, and says why it stopped.
                shown, why = ("idle", "starting") if why is None else ("stopped", why)
            else:
                shown = state
            statuses.append(
                PluginStatus(
                    name=source.name,
                    layer=source.layer,
                    path=source.root,
                    version=version or plugin.manifest.version,
                    state=shown,
                    why=why,
                    contributes=tuple(self._contributes.get(source.name, ())),
                )
            )
        for source, why in self._listed:
            version = source.manifest.version if source.manifest is not None else ""
            statuses.append(
                PluginStatus(
                    name=source.name,
                    layer=source.layer,
                    path=source.root,
                    version=version,
                    state="not started",
                    why=why,
                    contributes=(),
                )
            )
        return sorted(statuses, key=lambda status: (status.name, status.layer))
