"""The registry: every tool, command, contributor, compactor, provider, hook and service the
host has, by the name the kernel knows it by, and who it came from.

Owns the only way in and out: `add_*` to register one thing, `unregister(owner)` to drop
everything one owner (a plugin, by its `source`) contributed; what it holds is read through
read-only live views (`tools`, `hooks`, ...), so nothing outside edits its dicts and lists.
Owns the rule for clashes: the first to claim a name keeps it and the later one is refused
with a notice; bingo's own command and tool names, and service keys starting `bingo.`, are
reserved, so a plugin that declares one is refused it whatever the order they are
registered in; and a hook whose declaration names no valid site and points (`hook_problem`)
is refused rather than registered to never run. Contributors and hooks keep their run order
(registration order): what replaces an owner's goes where its were (`Places`). A refusal
never ends the program. It does not start or stop anything.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, TypeVar, overload

from .hooks import hook_problem
from .interfaces import Command, Compactor, ContextContributor, Hook, Provider, Service, Tool
from .notices import Notices
from .problems import HOOK_REFUSED, RESERVED_NAME, RESERVED_SERVICE

__all__ = ["BUILTIN", "BUILTIN_COMMANDS", "BUILTIN_TOOLS", "RESERVED_SERVICE_PREFIX", "Places", "Registry"]

BUILTIN = "builtin"
"""The `source` of bingo's own commands, tools and services; no plugin may take this name
(manifest.py)."""

BUILTIN_COMMANDS: frozenset[str] = frozenset(
    {
        "agents",
        "clear",
        "compact",
        "context",
        "exit",
        "help",
        "model",
        "plugins",
        "quit",
        "result",
        "resume",
        "rewind",
        "sandbox",
        "sessions",
        "skills",
        "tools",
        "usage",
    }
)
"""bingo's own slash commands, every surface's (the terminal's `/clear` included): a
plugin's command never takes one."""

BUILTIN_TOOLS: frozenset[str] = frozenset({"agent", "bash", "edit", "glob", "grep", "read", "skill", "write"})
"""bingo's own tools, with `write` and `edit` to come: no tool but bingo's has one of these
names (a plugin's tools are `plugin__<plugin>__<tool>` besides)."""

RESERVED_SERVICE_PREFIX = "bingo."
"""Service keys starting with this are the host's (`bingo.host`): no plugin declares one."""

_T = TypeVar("_T")


class _ListView(Sequence[_T]):
    """A read-only view of a list that follows it as it changes (a tuple copy would not:
    the hooks runner reads the registry's hooks live, across a re-registration)."""

    __slots__ = ("_items",)

    def __init__(self, items: list[_T]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> _T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[_T]: ...

    def __getitem__(self, index: int | slice) -> _T | Sequence[_T]:
        if isinstance(index, slice):
            return tuple(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[_T]:
        return iter(self._items)

    def __repr__(self) -> str:
        return repr(self._items)


@dataclass(slots=True)
class Places:
    """Where an owner's first contributor and first hook stood in their run order when
    `unregister` dropped them (None: it had none). Adding at a `Places` puts each new one
    there and moves the place on by one, so an owner's replacements keep its place, in the
    order they are added."""

    contributor: int | None = None
    hook: int | None = None


def _insert(items: list[_T], item: _T, at: int | None) -> int | None:
    """Insert `item` at index `at` (None: last); the index after it, or None."""
    if at is None:
        items.append(item)
        return None
    items.insert(at, item)
    return at + 1


def _drop_owned(items: dict[str, _T], owner: str, sources: dict[str, str]) -> None:
    """Drop from `items` every name `sources` says `owner` registered."""
    for name in [name for name, owned in sources.items() if owned == owner]:
        del items[name]
        del sources[name]


class _Sourced(Protocol):
    @property
    def source(self) -> str: ...


_S = TypeVar("_S", bound=_Sourced)


def _drop_listed(items: list[_S], owner: str) -> int | None:
    """Drop from `items` every one `owner` registered; the index the first stood at, or None."""
    first = next((index for index, item in enumerate(items) if item.source == owner), None)
    items[:] = [item for item in items if item.source != owner]
    return first


class Registry:
    """What the host can use this run."""

    __slots__ = (
        "_commands",
        "_compactors",
        "_contributors",
        "_hooks",
        "_providers",
        "_services",
        "_sources",
        "_tools",
        "notices",
    )

    def __init__(self, notices: Notices) -> None:
        self.notices = notices
        self._tools: dict[str, Tool] = {}
        self._commands: dict[str, Command] = {}
        self._contributors: list[ContextContributor] = []
        self._compactors: dict[str, Compactor] = {}
        self._providers: dict[str, Provider] = {}
        self._hooks: list[Hook] = []
        self._services: dict[str, Service] = {}
        # Who owns each named thing, by kind: read once at registration, so `unregister`
        # reads no tool's `source` (nor anything that could import a built-in's module).
        self._sources: dict[str, dict[str, str]] = {
            kind: {} for kind in ("tool", "command", "compactor", "provider", "service")
        }

    # --- reading: read-only views that follow what they show as it changes ----------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """Every tool, by the name the model and the gate know it by."""
        return MappingProxyType(self._tools)

    @property
    def commands(self) -> Mapping[str, Command]:
        """Every slash command, by its name (without the slash)."""
        return MappingProxyType(self._commands)

    @property
    def contributors(self) -> Sequence[ContextContributor]:
        """Every context contributor, in run order."""
        return _ListView(self._contributors)

    @property
    def compactors(self) -> Mapping[str, Compactor]:
        """Every compactor, by its name."""
        return MappingProxyType(self._compactors)

    @property
    def providers(self) -> Mapping[str, Provider]:
        """Every provider a plugin brings, by its name."""
        return MappingProxyType(self._providers)

    @property
    def hooks(self) -> Sequence[Hook]:
        """Every hook, in run order (registration order); the hooks runner holds this view,
        so a plugin re-registered mid-run is run from then on."""
        return _ListView(self._hooks)

    @property
    def services(self) -> Mapping[str, Service]:
        """Every service, by its key."""
        return MappingProxyType(self._services)

    # --- refusals -------------------------------------------------------------------

    def _refuse(self, kind: str, name: str, loser: str, keeper: str) -> None:
        self.notices.say(
            loser,
            f"{kind} {name!r} is already provided by {keeper}; this one is not used",
            "warning",
        )

    def _reserved(self, kind: str, shown: str, source: str) -> None:
        self.notices.say(source, RESERVED_NAME.words(kind=kind, shown=shown), "warning")

    def _named(
        self, kind: str, items: dict[str, _T], name: str, item: _T, source: str, shown: str | None = None
    ) -> bool:
        """Put `item` under `name` unless another has it (a notice then)."""
        owners = self._sources[kind]
        if name in items:
            self._refuse(kind, shown or name, source, owners[name])
            return False
        items[name] = item
        owners[name] = source
        return True

    # --- registering ----------------------------------------------------------------

    def add_tool(self, tool: Tool, *, name: str | None = None) -> bool:
        """Register a tool under `tool.spec.name`; False (and a notice) if the name is taken
        or is one of bingo's own and the tool is not. With `name`, the tool is registered
        under it without its spec being read: a built-in's spec imports its module, which
        only a model turn needs."""
        name = tool.spec.name if name is None else name
        source = tool.source
        if name in BUILTIN_TOOLS and source != BUILTIN:
            self._reserved("tool", name, source)
            return False
        return self._named("tool", self._tools, name, tool, source)

    def add_command(self, command: Command) -> bool:
        """Register a command under its name; False (and a notice) if the name is taken or
        is one of bingo's own and the command is not."""
        name, source = command.spec.name, command.source
        if name in BUILTIN_COMMANDS and source != BUILTIN:
            self._reserved("command", "/" + name, source)
            return False
        return self._named("command", self._commands, name, command, source, "/" + name)

    def add_contributor(self, contributor: ContextContributor, at: Places | None = None) -> bool:
        """Register a context contributor, last or at `at` (where the ones it replaces were).
        Always True: contributors have no names to clash."""
        place = _insert(self._contributors, contributor, None if at is None else at.contributor)
        if at is not None:
            at.contributor = place
        return True

    def add_compactor(self, compactor: Compactor) -> bool:
        """Register a compactor under its name; False (and a notice) if the name is taken."""
        return self._named("compactor", self._compactors, compactor.spec.name, compactor, compactor.source)

    def add_provider(self, provider: Provider) -> bool:
        """Register a provider under its name; False (and a notice) if the name is taken."""
        return self._named("provider", self._providers, provider.spec.name, provider, provider.source)

    def add_hook(self, hook: Hook, at: Places | None = None) -> bool:
        """Register a hook, last or at `at` (where the ones it replaces were): hooks run in
        list order. False (and a notice naming the valid pairs) when its declaration is no
        hook: registered, it would be listed and never run."""
        problem = hook_problem(hook.spec)
        if problem is not None:
            self.notices.say(hook.source, HOOK_REFUSED.said(name=hook.spec.name, problem=problem), "warning")
            return False
        place = _insert(self._hooks, hook, None if at is None else at.hook)
        if at is not None:
            at.hook = place
        return True

    def add_service(self, service: Service) -> bool:
        """Register a service under its key; False (and a notice) if the key is taken, or
        starts `bingo.` and the service is not bingo's own."""
        key, source = service.spec.key, service.source
        if key.startswith(RESERVED_SERVICE_PREFIX) and source != BUILTIN:
            self.notices.say(source, RESERVED_SERVICE.said(key=key, prefix=RESERVED_SERVICE_PREFIX), "warning")
            return False
        return self._named("service", self._services, key, service, source)

    # --- unregistering --------------------------------------------------------------

    def unregister(self, owner: str) -> Places:
        """Drop everything `owner` (a `source`) contributed, of every kind; where its first
        contributor and first hook stood, so that what replaces them (added at the answered
        `Places`) keeps the run order."""
        _drop_owned(self._tools, owner, self._sources["tool"])
        _drop_owned(self._commands, owner, self._sources["command"])
        _drop_owned(self._compactors, owner, self._sources["compactor"])
        _drop_owned(self._providers, owner, self._sources["provider"])
        _drop_owned(self._services, owner, self._sources["service"])
        return Places(contributor=_drop_listed(self._contributors, owner), hook=_drop_listed(self._hooks, owner))
