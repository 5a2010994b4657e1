"""The janitor's part of the sandbox: what it keeps for the run, and each confined spawn's plan.

Owns, in the janitor's process, the run's network namespace (made once, on bingo's first
request for its listener), the Landlock rules of each policy (walked once, walked again when
a directory on the walk changed), the seccomp filter, and for each confined spawn its
TMPDIR (made here, 0700; removed by the janitor when the warden ends) and its `Plan` (a
fresh ruleset with that TMPDIR in it). What the plan does in the child is `_confine.enter`.

Imported by the janitor at its first confined spawn or network request, never before: an
unconfined run does not load `ctypes`.
"""

from __future__ import annotations

import os

from . import _confine

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Sandbox"]

_NOFILE = 1 << 16
"""The janitor's soft limit on open files once it holds rules (each walked entry is an
O_PATH fd); a confined process gets the limit the janitor started with."""


class Sandbox:
    """The run's confinement state, in the janitor."""

    def __init__(self) -> None:
        abi, why = _confine.landlock_abi()
        if not abi:
            raise OSError(95, why)
        if _confine.MACHINE not in ("x86_64", "aarch64"):
            raise OSError(95, f"bingo's seccomp filter is written for x86-64 and arm64, not {_confine.MACHINE}")
        self.abi = abi
        self.filter = _confine.seccomp_filter(_confine.MACHINE)
        self.netns: _confine.Netns | str | None = None
        self.rules: dict[tuple[tuple[str, ...], ...], _confine.Rules] = {}
        import resource

        self.nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
        soft, hard = self.nofile
        wanted = _NOFILE if hard == resource.RLIM_INFINITY else min(hard, _NOFILE)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            except (OSError, ValueError):
                pass

    def network(self) -> _confine.Netns | str:
        """The run's namespace (made on first asking), or why there is none."""
        if self.netns is None:
            self.netns = _confine.make_network()
        return self.netns

    def _rules(self, denied: list[str], writable: list[str], protected: list[str]) -> list[_confine.Rules]:
        """The walked rules for these paths: reading (shared by every policy with the same
        `denied`) and writing; walked again where a walked directory changed."""
        keys = ((tuple(denied), (), ()), (tuple(denied), tuple(writable), tuple(protected)))
        found: list[_confine.Rules] = []
        for index, key in enumerate(keys):
            rules = self.rules.get(key)
            if rules is not None and rules.stale():
                rules.close()
                rules = None
            if rules is None:
                if index == 0:
                    rules = _confine.Rules.reading(denied)
                else:
                    rules = _confine.Rules.writing(writable, protected, denied)
                self.rules[key] = rules
            found.append(rules)
        return found

    def prepare(self, spawn: Any) -> None:
        """Make `spawn`'s TMPDIR and plan (its ruleset fd is the caller's to close after the
        fork).

        Raises:
            OSError: it cannot be confined as asked.
        """
        confine = spawn.confine
        netns: _confine.Netns | None = None
        if confine.netns:
            made = self.network()
            if isinstance(made, str):
                raise OSError(1, made)
            netns = made
        base = os.environ.get("TMPDIR") or "/tmp"
        tmpdir = os.path.join(os.path.realpath(base), "bingo-" + os.urandom(6).hex())
        os.mkdir(tmpdir, 0o700)
        try:
            rules = self._rules(confine.denied, confine.writable, confine.protected)
            # In the namespace only the proxy's listener is reachable, so TCP needs no
            # port rule, unless there is no network at all; without it, Landlock allows
            # the proxy's port alone.
            if netns is not None:
                port = -1 if confine.port < 0 else None
            else:
                port = confine.port
            ruleset = _confine.ruleset(self.abi, rules, tmpdir, port)
        except BaseException:
            os.rmdir(tmpdir)
            raise
        env = dict(spawn.env)
        env["TMPDIR"] = tmpdir
        spawn.env = env
        spawn.tmpdir = tmpdir
        spawn.plan = _confine.Plan(ruleset, netns, self.filter, self.nofile)
