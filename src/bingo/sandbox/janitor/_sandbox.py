"""The janitor's part of the sandbox: what it keeps for the run, and each confined spawn's plan.

Owns, in the janitor's process, the run's network namespace (made once, on bingo's first
request for its listener), the Landlock rules of each policy (walked once, walked again when
a directory on the walk or a protected path changed; with the run's namespace, its
protected paths' mounts), the seccomp filter, and for each confined spawn its
TMPDIR (made here, 0700; removed by the janitor when the warden ends) and its `Plan` (a
fresh ruleset with that TMPDIR in it). What the plan does in the child is `_confine.enter`.

Imported by the janitor at its first confined spawn or network request, never before: an
unconfined run does not load `ctypes`.
"""

from __future__ import annotations

import os
import stat

from . import _confine, _landlock, _netns, _seccomp, _syscall

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Sandbox", "key", "missing_commondirs", "sweep_commondirs"]

_KEPT_RULES = 8
"""Walked rules kept at once, the least recently used let go past it: each holds an O_PATH
fd for every entry of every directory on its walk (thousands beside a busy /tmp), and a run
has a few policies (bash's, one per plugin) while a long-lived process may meet many."""

_NOFILE = 1 << 16
"""The janitor's soft limit on open files once it holds rules (each walked entry is an
O_PATH fd); a confined process gets the limit the janitor started with."""


class Sandbox:
    """The run's confinement state, in the janitor."""

    def __init__(self) -> None:
        abi, why = _syscall.landlock_abi()
        if not abi:
            raise OSError(95, why)
        if _syscall.MACHINE not in ("x86_64", "aarch64"):
            raise OSError(95, f"bingo's seccomp filter is written for x86-64 and arm64, not {_syscall.MACHINE}")
        self.abi = abi
        self.filter = _seccomp.seccomp_filter(_syscall.MACHINE)
        self.netns: _netns.Netns | str | None = None
        self.rules: dict[tuple[object, ...], _landlock.Rules] = {}
        self.spares: dict[tuple[object, ...], tuple[str, int, list[_landlock.Rules]]] = {}
        """Per policy, the TMPDIR and ruleset made ahead for its next spawn."""
        self.last_cap = int(_syscall.read("/proc/sys/kernel/cap_last_cap") or "40")
        self.base = os.path.realpath(os.environ.get("TMPDIR") or "/tmp")
        """Where each process's TMPDIR is made: `bingo-<janitor's pid>-<random>`."""
        _remove_orphans(self.base)
        import resource

        self.nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
        soft, hard = self.nofile
        wanted = _NOFILE if hard == resource.RLIM_INFINITY else min(hard, _NOFILE)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            except (OSError, ValueError):
                pass

    def network(self) -> _netns.Netns | str:
        """The run's namespace (made on first asking), or why there is none."""
        if self.netns is None:
            self.netns = _netns.make_network()
        return self.netns

    def _rules(
        self, denied: list[str], writable: list[str], protected: list[str], mounting: bool
    ) -> list[_landlock.Rules]:
        """The walked rules for these paths: reading (shared by every policy with the same
        `denied`) and writing (`mounting`: in a mount namespace of the process's own, the
        protected paths bound read-only rather than walked around); walked again where a
        walked directory changed."""
        keys = ((tuple(denied), (), (), False), (tuple(denied), tuple(writable), tuple(protected), mounting))
        found: list[_landlock.Rules] = []
        for index, key in enumerate(keys):
            rules = self.rules.pop(key, None)
            if rules is not None and rules.stale():
                rules.close()
                rules = None
            if rules is None:
                if index == 0:
                    rules = _landlock.Rules.reading(denied)
                else:
                    rules = _landlock.Rules.writing(writable, protected, denied, mounting)
            self.rules[key] = rules  # the most recently used last
            found.append(rules)
        while len(self.rules) > _KEPT_RULES:
            oldest = next(iter(self.rules))
            if any(oldest == wanted for wanted in keys):
                break
            self.rules.pop(oldest).close()  # a ruleset made from it holds what it needs
        return found

    def prepare(self, spawn: Any) -> None:
        """Give `spawn` its TMPDIR and plan (its ruleset fd is the caller's to close after
        the fork): the one made ahead for the same policy when its rules still hold, else
        made now.

        Raises:
            OSError: it cannot be confined as asked.
        """
        confine = spawn.confine
        wanted = key(confine)
        netns = self._netns(confine)
        spare = self.spares.pop(wanted, None)
        if spare is not None and spare[2] != self.current(confine):
            os.close(spare[1])  # a directory on the walk changed since: walk again
            _confine.remove_tree(spare[0])
            spare = None
        tmpdir, ruleset, rules = spare if spare is not None else self._arm(confine)
        env = dict(spawn.env)
        env["TMPDIR"] = tmpdir
        spawn.env = env
        spawn.tmpdir = tmpdir
        spawn.plan = _confine.Plan(
            ruleset, netns, self.filter, self.nofile, self.last_cap, self.abi, confine.port, _mounts(rules, netns)
        )

    def current(self, confine: Any) -> list[_landlock.Rules]:
        """The rules that hold now for `confine`'s paths (walked again where stale): a plan
        made with others is out of date."""
        return self._rules(confine.denied, confine.writable, confine.protected, bool(confine.netns))

    def plan_ahead(self, confine: Any) -> tuple[str, _confine.Plan, list[_landlock.Rules]]:
        """A TMPDIR and a plan for a process parked ahead of its spawn (the caller closes the
        ruleset after the fork).

        Raises:
            OSError: it cannot be confined as asked.
        """
        netns = self._netns(confine)
        tmpdir, ruleset, rules = self._arm(confine)
        plan = _confine.Plan(
            ruleset, netns, self.filter, self.nofile, self.last_cap, self.abi, None, _mounts(rules, netns)
        )
        return tmpdir, plan, rules

    def rearm(self, spawn: Any) -> None:
        """Make, while nothing waits, the TMPDIR and ruleset the next spawn with `spawn`'s
        policy will take (a `bash` call after a `bash` call)."""
        wanted = key(spawn.confine)
        if wanted in self.spares:
            return
        try:
            self.spares[wanted] = self._arm(spawn.confine)
        except OSError:
            pass  # the next spawn makes its own, and says why if it cannot

    def _netns(self, confine: Any) -> _netns.Netns | None:
        if not confine.netns:
            return None
        made = self.network()
        if isinstance(made, str):
            raise OSError(1, made)
        return made

    def _arm(self, confine: Any) -> tuple[str, int, list[_landlock.Rules]]:
        """A new TMPDIR (0700) and a ruleset holding the policy's rules and that TMPDIR."""
        tmpdir = os.path.join(self.base, f"bingo-{os.getpid()}-{os.urandom(6).hex()}")
        os.mkdir(tmpdir, 0o700)
        try:
            rules = self.current(confine)
            # TCP is bounded by a layer of each process's own, with its proxy's port
            # (`_landlock.restrict_tcp`): this ruleset is made ahead and the port may differ.
            ruleset = _landlock.ruleset(self.abi, rules, tmpdir, None)
        except BaseException:
            os.rmdir(tmpdir)
            raise
        return tmpdir, ruleset, rules

    def close(self) -> None:
        """Remove what was made ahead (the janitor is ending)."""
        for tmpdir, ruleset, _rules in self.spares.values():
            os.close(ruleset)
            _confine.remove_tree(tmpdir)
        self.spares.clear()


def _mounts(rules: list[_landlock.Rules], netns: _netns.Netns | None) -> _landlock.Mounts | None:
    """The mount namespace a process of these rules makes, in the run's user namespace."""
    return rules[1].mounts if netns is not None else None


def _remove_orphans(base: str) -> None:
    """Remove the TMPDIRs a janitor that is gone left behind (one SIGKILLed cannot clean up):
    ours (same owner), named for a pid that is not running."""
    from .proc import alive

    me = os.geteuid()
    try:
        entries = list(os.scandir(base))
    except OSError:
        return
    for entry in entries:
        parts = entry.name.split("-")
        if len(parts) != 3 or parts[0] != "bingo" or not parts[1].isdigit():
            continue
        try:
            if entry.is_symlink() or not entry.is_dir() or entry.stat().st_uid != me:
                continue
        except OSError:
            continue
        if not alive(int(parts[1])):
            _confine.remove_tree(entry.path)


def key(confine: Any) -> tuple[object, ...]:
    """What makes two spawns' confinements the same."""
    return (tuple(confine.denied), tuple(confine.writable), tuple(confine.protected), confine.netns)


def missing_commondirs(confine: Any) -> list[str]:
    """`<root>/.git/commondir` for each writable root whose `.git` is a directory without one.

    git reads `$GIT_DIR/commondir` in every repository and takes its config and hooks from
    the directory it names; a repository's own `.git` never has one (a linked worktree's
    `.git` is a file). A missing file cannot be bound read-only, and `.git` must stay open to
    new entries for git to work inside (ADR-0030), so one a confined process made is removed
    when it ends, before the person's own git, outside the sandbox, can read it."""
    if confine is None:
        return []
    missing: list[str] = []
    for root in confine.writable:
        git = os.path.join(root, ".git")
        try:
            if not stat.S_ISDIR(os.lstat(git).st_mode):
                continue
            os.lstat(os.path.join(git, "commondir"))
        except FileNotFoundError:
            missing.append(os.path.join(git, "commondir"))
        except OSError:
            continue
    return missing


def sweep_commondirs(paths: list[str]) -> None:
    """Remove each of `paths` that is a file now (`missing_commondirs`, once its process ended)."""
    for path in paths:
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                continue  # git reads a file there; a directory names no other repository
            os.unlink(path)
        except OSError:
            pass
