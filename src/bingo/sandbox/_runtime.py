"""The run's sandbox: whether it is in force, and what each process bingo starts gets.

Owns the run's side of INTERFACE.md §9: the mode (from the settings, `--no-sandbox`), the
probe of the mechanism and the one start line when it is missing (or exit 2 with
`mode: "required"`), the proxy's listener, and, per process, the Policy and environment
(`_build.py`) handed to the mechanism at spawn (which adds the process's own TMPDIR). What `/sandbox` shows
is built here too (`describe`). It does not confine (the mechanism does) nor speak HTTP
(the proxy does).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

import msgspec

from ..kernel.errors import SettingsError
from ..kernel.notices import Notices
from ..kernel.sandboxing import Grant, SandboxGrants
from ._build import Build, Launched, confined_environ, launcher_grants
from ._hosts import Hosts
from ._mechanism import probe, start_proxy
from ._policy import Policy

__all__ = ["Confined", "Sandbox"]


class Confined(msgspec.Struct, frozen=True):
    """What one process is started with under the sandbox: its policy and environment."""

    policy: Policy
    env: dict[str, str]
    who: str


class _Plugin(msgspec.Struct, frozen=True):
    """A plugin's grants as this run applies them (for `/sandbox` and `/plugins`)."""

    hosts: tuple[Grant, ...]
    write: tuple[Grant, ...]
    off: Grant | None
    launched: Launched | None


class Sandbox:
    """The run's sandbox. `start` probes the mechanism; use as `async with`: on leaving it
    stops the proxy."""

    def __init__(
        self,
        grants: SandboxGrants,
        *,
        home: Path,
        bingo_home: Path,
        project: Path,
        environ: Mapping[str, str],
        notices: Notices,
        matrix_token: str = "BINGO_MATRIX_TOKEN",
    ) -> None:
        self.grants = grants
        self._home = home
        self._bingo_home = bingo_home
        self._project = project
        self._environ = dict(environ)
        self._notices = notices
        self._matrix_token = matrix_token
        self.mechanism: str | None = None
        """The mechanism in force, in words (`Landlock ABI 7, seccomp, ...`); None when none is."""
        self.missing: str | None = None
        """What the kernel lacks for confinement, in words; None when nothing is missing."""
        self.weaker: tuple[str, ...] = ()
        """What holds less than the full sandbox here (it is in force), in words."""
        self.user_settings = str(bingo_home / "settings.json")
        self.local_settings = str(project / ".bingo" / "settings.local.json")
        self.hosts = Hosts(
            self._hosts(grants.hosts),
            notices=notices,
            user_settings=self.user_settings,
            local_settings=self.local_settings,
        )
        self._listeners: dict[str, tuple[str, int]] = {}
        self._starting = asyncio.Lock()
        self._closers: list[Callable[[], Awaitable[None]]] = []
        self._plugins: dict[str, _Plugin] = {}
        self._own_hosts: dict[str, list[str]] = {}
        """Each plugin's own host grants, checked once (its restarts reuse them)."""

    def _hosts(self, written: Sequence[Grant]) -> list[str]:
        """The canonical patterns of host grants; each that is no host named in one notice."""
        patterns: list[str] = []
        if not written:
            return patterns
        from ._pattern import parse_pattern  # only when something is granted

        for grant in written:
            try:
                patterns.append(parse_pattern(grant.value))
            except ValueError as exc:
                self._notices.say(
                    "bingo", f"{grant.where}: {grant.key} holds {grant.value[:80]!r}, which {exc}: ignored", "warning"
                )
        return patterns

    # --- the run -------------------------------------------------------------------

    @property
    def on(self) -> bool:
        """The settings ask for the sandbox (`mode` is not "off")."""
        return self.grants.mode != "off"

    @property
    def in_force(self) -> bool:
        """Every process this run starts is confined (bash and plugins not turned off)."""
        return self.on and self.missing is None

    def start(self) -> None:
        """Probe the mechanism; SettingsError (exit 2) when it is missing and the mode is
        "required"; else the one start line saying what is missing (a notice)."""
        if not self.on:
            return
        self.mechanism, self.missing, self.weaker = probe()
        if self.missing is None:
            return
        if self.grants.mode == "required":
            raise SettingsError(
                f"the sandbox is required (sandbox.mode in {self.grants.mode_from}) and this system cannot confine: {self.missing}",
                'run where it can, or set sandbox.mode to "on" to run unconfined with bash asked about every call',
            )
        self._notices.say(
            "bingo",
            f"the sandbox is not in force: {self.missing}; bash is asked about every call and plugins run unconfined "
            '(sandbox.mode "required" makes this an error)',
            "warning",
        )

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for close in reversed(self._closers):
            with contextlib.suppress(Exception):
                await close()
        self._closers.clear()

    async def _proxy(self, who: str) -> tuple[str, int] | None:
        """The proxy listener of `who` (started on first need), or None without a proxy."""
        async with self._starting:  # the first listener is the namespace's own: made once
            if who in self._listeners:
                return self._listeners[who]
            try:
                first = not self._listeners
                (address, close), degraded = await start_proxy(
                    self.hosts.decider(who), self.hosts.refusal(who), first=first
                )
            except OSError as exc:
                # No listener, no network for it: confined all the same, never unconfined.
                self._notices.say_once(
                    "bingo",
                    f"proxy:{who}",
                    f"the sandbox's proxy could not be started for {who} ({exc.strerror or exc}): it runs with no network",
                    "warning",
                )
                return None
            self._listeners[who] = address
            self._closers.append(close)
            if first and degraded:
                self._degraded(degraded)
            return address

    def _degraded(self, why: str) -> None:
        """The run's network namespace could not be made: where the probe at start expected
        one (a kernel that allows user namespaces, a container's seccomp profile that refuses
        them), say so once with what is weaker, which the probe knows now; never silently."""
        known = any("user namespace" in line for line in self.weaker)
        mechanism, missing, weaker = probe()
        if missing is None and mechanism is not None:
            self.mechanism, self.weaker = mechanism, weaker
        if known:
            return  # the start's probe knew: /sandbox says it
        self._notices.say_once(
            "bingo",
            "sandbox:degraded",
            f"the sandbox's network namespace could not be made ({why}): processes are confined without it; "
            f"weaker here: {'; '.join(self.weaker) or 'each process can reach its proxy port on any address'}",
            "warning",
        )

    def _build(self, proxy: tuple[str, int] | None) -> Build:
        return Build(
            grants=self.grants, home=self._home, bingo_home=self._bingo_home, project=self._project, proxy=proxy
        )

    # --- per process -----------------------------------------------------------------

    async def for_bash(self, readable: Sequence[Path] = (), writable: Sequence[Path] = ()) -> Confined | None:
        """The policy and environment of a `bash` call, or None when it runs unconfined;
        `readable`: directories inside `~/.bingo` it may read too, `writable` write too (a
        package's own and its data directory, for its hooks)."""
        if not self.in_force:
            return None
        proxy = await self._proxy("bash")
        keep = [grant.value for grant in self.grants.keep]
        env = confined_environ(self._environ, keep=keep, proxy=proxy, tmpdir=None, matrix_token=self._matrix_token)
        return Confined(policy=self._build(proxy).for_bash(readable, writable), env=env, who="bash")

    def plugin_off(self, name: str) -> Grant | None:
        """Where `plugins.<name>.sandbox.mode: "off"` came from, or None."""
        return self.grants.plugin(name).off

    async def for_plugin(
        self,
        name: str,
        *,
        argv: Sequence[str],
        env: Mapping[str, str],
        own: Mapping[str, str],
        root: Path,
        data_dir: Path,
    ) -> Confined | None:
        """The policy and environment of plugin `name`'s process (`env` is what it would get
        unconfined, `own` its manifest's or `.mcp.json`'s own `env`), or None when it runs
        unconfined (the sandbox not in force, or the person turned it off for this plugin)."""
        grants = self.grants.plugin(name)
        launched = launcher_grants(argv, env, self._home)
        self._plugins[name] = _Plugin(hosts=grants.hosts, write=grants.write, off=grants.off, launched=launched)
        if not self.in_force or grants.off is not None:
            return None
        self.hosts.grant(name, self._own_hosts.setdefault(name, self._hosts(grants.hosts)))
        if launched is not None:
            self.hosts.grant(name, launched.hosts)
        proxy = await self._proxy(name)
        keep = [grant.value for grant in self.grants.keep]
        # What the host would pass (PATH, the settings' own), less secrets, plus its own env.
        unconfined = {key: value for key, value in env.items() if key not in own}
        confined = confined_environ(
            unconfined, keep=keep, own=own, proxy=proxy, tmpdir=None, matrix_token=self._matrix_token
        )
        policy = self._build(proxy).for_plugin(name, root=root, data_dir=data_dir, launched=launched)
        return Confined(policy=policy, env=confined, who=name)

    # --- what the person sees --------------------------------------------------------

    def state(self) -> str:
        """One line: the mechanism in force, or why there is none."""
        if not self.on:
            return f'off (sandbox.mode "off" from {self.grants.mode_from}): every process reaches what you can; bash is asked about every call'
        if self.missing is not None:
            return f"not in force: {self.missing}; bash is asked about every call, plugins run unconfined"
        required = " (required)" if self.grants.mode == "required" else ""
        weaker = "".join(f"; weaker here: {line}" for line in self.weaker)
        return f"in force{required}: {self.mechanism}{weaker}"

    def rows(self) -> list[tuple[str, str, str]]:
        """Every grant in force, as (what, grant, where it came from), then each plugin's."""
        rows: list[tuple[str, str, str]] = [("mode", self.grants.mode, self.grants.mode_from or "default")]
        rows += [("network", grant.value, grant.where) for grant in self.grants.hosts if _is_host(grant.value)]
        rows += [("write", grant.value, grant.where) for grant in self.grants.write]
        rows += [("deny", grant.value, grant.where) for grant in self.grants.deny]
        rows += [("env.keep", grant.value, grant.where) for grant in self.grants.keep]
        for name in sorted({*self.grants.plugins, *self._plugins}):
            rows += [(f"plugin {name}", text, where) for text, where in self.plugin_grants(name)]
        return rows

    def plugin_grants(self, name: str) -> list[tuple[str, str]]:
        """What plugin `name` is granted beyond every process, as (grant, where it came from)."""
        grants = self.grants.plugin(name)
        out: list[tuple[str, str]] = []
        if grants.off is not None:
            out.append(('unconfined (mode "off")', grants.off.where))
        out += [(f"network {grant.value}", grant.where) for grant in grants.hosts if _is_host(grant.value)]
        out += [(f"write {grant.value}", grant.where) for grant in grants.write]
        seen = self._plugins.get(name)
        if seen is not None and seen.launched is not None:
            by = f"its launcher ({seen.launched.said})"
            out += [(f"network {host}", by) for host in seen.launched.hosts]
            out += [(f"write {path}", by) for path in seen.launched.write]
        out.append((f"write {self._bingo_home / 'data' / 'plugins' / name} (its dataDir)", "every plugin"))
        return out


def _is_host(pattern: str) -> bool:
    """Whether a host grant is one (the line saying it is not was said when it was read)."""
    from ._pattern import parse_pattern

    try:
        parse_pattern(pattern)
    except ValueError:
        return False
    return True
