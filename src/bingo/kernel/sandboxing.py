"""The sandbox's settings: what each layer grants, and who may widen (INTERFACE.md §9, ADR-0031).

Owns reading the `sandbox` key and each `plugins.<name>.sandbox` of every layer into grants
that remember where they came from, and the rule of who may widen: the user's settings and
the command line may do anything (`mode: "off"`, `write` anywhere, `env.keep`, a plugin's
`mode: "off"`); a project's settings, trusted or not, only narrow (`deny`, a stricter
`mode`), except that a trusted project may add hosts and `write` paths inside the project.
An untrusted project's `sandbox` never arrives here (settings.py cuts it, as any key beyond
deny and ask). What a layer may not give and a path that does not exist are each one
finished line in `SandboxGrants.problems`, for the run to say.

It does not build a process's policy (the `sandbox` package does), nor check that a host is a host
(the proxy's grammar, `sandbox/_pattern.py`, does, where the run's sandbox is made), nor
confine anything.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import msgspec

from ._layer import PluginSandboxLayer, SandboxLayer
from .files import inside

__all__ = [
    "Grant",
    "LayerKind",
    "PluginGrants",
    "SandboxGrants",
    "SandboxSource",
    "sandbox_grants",
]

LayerKind = Literal["user", "project", "command line"]
"""Who wrote a layer: the person (their settings, or the command line) or a project."""

Mode = Literal["on", "off", "required"]
_STRICTNESS: dict[str, int] = {"off": 0, "on": 1, "required": 2}


class Grant(msgspec.Struct, frozen=True):
    """One thing granted (a host pattern, an absolute path, a variable's name) and where it
    was written: a settings file's path, or the command line's flag."""

    value: str
    where: str
    key: str = ""
    """The key it was written under (`sandbox.network.allow`), for a line about it."""


class PluginGrants(msgspec.Struct, frozen=True):
    """What `plugins.<name>.sandbox` grants one plugin, beyond what every process gets."""

    hosts: tuple[Grant, ...] = ()
    write: tuple[Grant, ...] = ()
    off: Grant | None = None
    """Where `mode: "off"` came from (the user's settings only), or None: confined."""


def _no_plugins() -> Mapping[str, PluginGrants]:
    return MappingProxyType({})


class SandboxGrants(msgspec.Struct, frozen=True):
    """The sandbox settings in force this run, each grant with where it came from."""

    mode: Mode = "on"
    mode_from: str | None = None
    """Where the mode in force was written; None for the default."""
    hosts: tuple[Grant, ...] = ()
    write: tuple[Grant, ...] = ()
    deny: tuple[Grant, ...] = ()
    keep: tuple[Grant, ...] = ()
    plugins: Mapping[str, PluginGrants] = msgspec.field(default_factory=_no_plugins)
    problems: tuple[str, ...] = ()
    """One finished line per grant left out (a widening a project may not give, a path that
    does not exist, a host pattern that is no host), for the run to say once."""

    def plugin(self, name: str) -> PluginGrants:
        return self.plugins.get(name, PluginGrants())


class SandboxSource(msgspec.Struct, frozen=True):
    """One layer's sandbox settings as written: who wrote it (`kind`), where (`where`), its
    `sandbox` and its `plugins.<name>.sandbox` slices."""

    kind: LayerKind
    where: str
    sandbox: SandboxLayer
    plugins: Mapping[str, PluginSandboxLayer]


def _path(written: str, project: Path) -> Path:
    """A written path made absolute (`~` expanded, a relative one under the project) with its
    links resolved: what the process would really reach."""
    expanded = os.path.expanduser(written)
    return Path(os.path.realpath(project / expanded))


class _Reader:
    """Reads the layers one after another into grants, and collects what it left out."""

    def __init__(self, project: Path, user_settings: str) -> None:
        self.project = Path(os.path.realpath(project))
        self.user_settings = user_settings
        self.problems: list[str] = []
        self.mode: Mode = "on"
        self.mode_from: str | None = None
        self.hosts: list[Grant] = []
        self.write: list[Grant] = []
        self.deny: list[Grant] = []
        self.keep: list[Grant] = []
        self.plugin_hosts: dict[str, list[Grant]] = {}
        self.plugin_write: dict[str, list[Grant]] = {}
        self.plugin_off: dict[str, Grant | None] = {}

    def widening(self, source: SandboxSource, key: str) -> None:
        self.problems.append(
            f"{source.where}: {key} widens the sandbox, which only your own settings ({self.user_settings}) "
            "or the command line may do: ignored"
        )

    def take(self, source: SandboxSource) -> None:
        person = source.kind != "project"
        sandbox = source.sandbox
        if sandbox.mode is not None:
            if person or _STRICTNESS[sandbox.mode] >= _STRICTNESS[self.mode]:
                self.mode, self.mode_from = sandbox.mode, source.where
            else:
                self.widening(source, f'sandbox.mode "{sandbox.mode}"')
        self.hosts += self.hosts_of(source, sandbox.network.allow, "sandbox.network.allow")
        self.write += self.paths_of(source, sandbox.write, "sandbox.write")
        for written in sandbox.deny:
            self.deny.append(Grant(str(_path(written, self.project)), source.where))
        if sandbox.env.keep:
            if person:
                self.keep += [Grant(name, source.where) for name in sandbox.env.keep]
            else:
                self.widening(source, "sandbox.env.keep")
        for name, slice_ in source.plugins.items():
            key = f"plugins.{name}.sandbox"
            self.plugin_hosts.setdefault(name, []).extend(self.hosts_of(source, slice_.network, f"{key}.network"))
            self.plugin_write.setdefault(name, []).extend(self.paths_of(source, slice_.write, f"{key}.write"))
            if slice_.mode == "off":
                if person:
                    self.plugin_off[name] = Grant("off", source.where)
                else:
                    self.widening(source, f'{key}.mode "off"')
            elif slice_.mode == "on":
                self.plugin_off[name] = None

    def hosts_of(self, source: SandboxSource, written: list[str], key: str) -> list[Grant]:
        # Whether each is a host is the proxy's grammar (sandbox/_pattern.py): checked, and
        # named when it is not, where the run's sandbox is made.
        return [Grant(host, source.where, key) for host in written]

    def paths_of(self, source: SandboxSource, written: list[str], key: str) -> list[Grant]:
        found: list[Grant] = []
        for text in written:
            path = _path(text, self.project)
            if source.kind == "project" and not inside(path, self.project):
                self.problems.append(
                    f"{source.where}: {key} {text[:200]!r} is outside the project, and a project's settings may only "
                    f"grant paths inside it: ignored (grant it in {self.user_settings})"
                )
            elif not path.exists():
                self.problems.append(
                    f"{source.where}: {key} {text[:200]!r} does not exist: ignored (create it, or correct the path)"
                )
            else:
                found.append(Grant(str(path), source.where))
        return found

    def grants(self) -> SandboxGrants:
        names = sorted({*self.plugin_hosts, *self.plugin_write, *self.plugin_off})
        plugins = {
            name: PluginGrants(
                hosts=tuple(self.plugin_hosts.get(name, ())),
                write=tuple(self.plugin_write.get(name, ())),
                off=self.plugin_off.get(name),
            )
            for name in names
        }
        return SandboxGrants(
            mode=self.mode,
            mode_from=self.mode_from,
            hosts=tuple(self.hosts),
            write=tuple(self.write),
            deny=tuple(self.deny),
            keep=tuple(self.keep),
            plugins=MappingProxyType(plugins),
            problems=tuple(self.problems),
        )


def sandbox_grants(sources: list[SandboxSource], *, project: Path, user_settings: str) -> SandboxGrants:
    """The grants of `sources` (in layer order: user, project, local, command line), each
    remembering where it was written; what a layer may not give is left out and named."""
    reader = _Reader(project, user_settings)
    for source in sources:
        reader.take(source)
    return reader.grants()
