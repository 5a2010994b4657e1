"""The confinement sequence, in the forked child just before `exec` (ADR-0030).

Owns `Plan` (what one child does, all made beforehand in the janitor: the Landlock ruleset,
the run's namespaces to join, its own mounts, the seccomp filter, the limits) and `enter`,
which runs it in the child (single-threaded, no allocation worth naming): join the run's
namespaces (and make a mount namespace of its own: `_landlock.own_mounts`), set
no_new_privs, enforce the ruleset, drop every capability and install the seccomp filter; and
`remove_tree`, which removes a process's TMPDIR once it ended.

The parts it puts together live by what they are: `_syscall.py` (system calls by machine,
libc through `ctypes`, and `examine`, what this kernel offers, for `bingo.sandbox.probe()`),
`_landlock.py` (the walk that turns "read everything but X" into allow-only rules, the
protected paths' mounts, each process's ruleset), `_seccomp.py` (the filter) and `_netns.py`
(the run's user + network namespace and its listeners), all made in the janitor before any
fork.

It imports only the standard library (the janitor's process imports nothing of bingo's,
ADR-0013), and `ctypes` only when first asked to confine or examine: an unconfined run never
pays for it. Linux on x86-64 and arm64 only (the seccomp filter names their system calls).
"""

from __future__ import annotations

import os

from ._landlock import Mounts, own_mounts, restrict_tcp
from ._netns import Netns
from ._syscall import CLONE_NEWNET, CLONE_NEWUSER, LANDLOCK_RESTRICT, MACHINE, MACHINES, lib, prctl, syscall

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Plan", "enter", "remove_tree"]

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_PR_SET_PDEATHSIG = 1
_SECUREBITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80
"""NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and KEEP_CAPS off, each locked."""


class Plan:
    """What `enter` does in one child: all made beforehand, in the janitor."""

    __slots__ = ("abi", "filter", "last_cap", "mounts", "netns", "nofile", "port", "ruleset")

    def __init__(
        self,
        ruleset: int,
        netns: Netns | None,
        program: Any,
        nofile: tuple[int, int],
        last_cap: int,
        abi: int,
        port: int | None,
        mounts: Mounts | None = None,
    ) -> None:
        self.ruleset = ruleset
        self.mounts = mounts
        """The process's own mount namespace (only in the run's user namespace: None
        without one, where the walk keeps the protected paths)."""
        self.abi = abi
        self.port = port
        """The proxy's port, the one TCP connect may reach (-1: none); None: not yet known
        (a process parked ahead gets its layer with its order, `restrict_tcp`)."""
        self.last_cap = last_cap
        """The highest capability this kernel knows (/proc/sys/kernel/cap_last_cap)."""
        self.netns = netns
        self.filter = program
        self.nofile = nofile
        """The limit on open files the janitor started with (it raised its own)."""


def _drop_capabilities(last: int, bounding: bool) -> None:
    """No capability survives into exec: securebits locked so that root (in the namespace,
    or bingo run as root) gains none back at exec, the ambient set cleared, the
    effective/permitted/inheritable sets zeroed, and (`bounding`: outside a namespace of our
    own, where a process may be the machine's root) the bounding set emptied too. Inside
    the run's user namespace the bounding set is left: what it holds could only be regained
    at exec, which no_new_privs and the locked securebits refuse, and emptying it is 41
    system calls on every spawn's path. A step refused for want of CAP_SETPCAP (an
    unprivileged process without a namespace has nothing to drop) is skipped."""
    ctypes = lib()[0]
    try:
        prctl(_PR_SET_SECUREBITS, _SECUREBITS)
    except OSError:
        pass
    if bounding:
        for cap in range(last + 1):
            try:
                prctl(_PR_CAPBSET_DROP, cap)
            except OSError:
                break
    try:
        prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError:
        pass
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()
    syscall(MACHINES[MACHINE]["capset"], ctypes.addressof(header), ctypes.addressof(data))


def enter(plan: Plan, parent: int) -> None:
    """In the forked child, just before exec: join the run's namespaces (and make a mount
    namespace of its own: `own_mounts`), no new privileges, Landlock, no capabilities,
    seccomp; then die with `parent` again (joining a user namespace clears the
    parent-death signal).

    Raises:
        OSError: a step was refused (the child must not exec then).
    """
    table = MACHINES[MACHINE]
    if plan.netns is not None:
        syscall(table["setns"], plan.netns.user, CLONE_NEWUSER)
        syscall(table["setns"], plan.netns.net, CLONE_NEWNET)
        if plan.mounts is not None:
            own_mounts(plan.mounts, plan.ruleset, plan.abi)
    prctl(_PR_SET_NO_NEW_PRIVS, 1)
    syscall(LANDLOCK_RESTRICT, plan.ruleset, 0)
    if plan.port is not None:
        restrict_tcp(plan.abi, plan.port)
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, plan.nofile)
    except (OSError, ValueError):
        pass
    _drop_capabilities(plan.last_cap, bounding=plan.netns is None)
    ctypes = lib()[0]
    prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(plan.filter))
    prctl(_PR_SET_PDEATHSIG, 9)
    if os.getppid() != parent:
        os._exit(1)


def remove_tree(path: str) -> None:
    """Remove a process's TMPDIR and all in it, never following a link it planted."""
    try:
        for top, dirs, files, top_fd in os.fwalk(path, topdown=False, follow_symlinks=False):
            for name in files:
                try:
                    os.unlink(name, dir_fd=top_fd)
                except OSError:
                    pass
            for name in dirs:
                try:
                    os.rmdir(name, dir_fd=top_fd)
                except OSError:
                    try:
                        os.unlink(name, dir_fd=top_fd)  # a link to a directory
                    except OSError:
                        pass
            del top
        os.rmdir(path)
    except OSError:
        pass
