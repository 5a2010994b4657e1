"""The janitor: a tiny parent that every plugin process runs under, so that nothing the
plugin starts outlives it, or outlives bingo.

Run as a script, never imported: `python -I -S _janitor.py GRACE -- COMMAND ARG...`. It is
the process bingo spawns (the leader of the plugin's process group). It makes itself a
*child subreaper* (PR_SET_CHILD_SUBREAPER), forks, and execs the plugin's command in the
child, which keeps the janitor's stdin, stdout and stderr while the janitor lets go of its
own copies. Then it waits.

Why it exists: PR_SET_PDEATHSIG, which bingo sets on the process it spawns, is not inherited
across fork, and a process group does not hold a child that calls setsid(). A subreaper
does: every orphan below it (a daemonised grandchild, one in a session of its own) is
re-parented to it, so it can find them all as its own children and kill them.

  - the plugin exits: every descendant left is killed and reaped, and the janitor exits
    the way the plugin did (the same code, or the same signal), which is what bingo reports;
  - SIGTERM (bingo's shutdown, or bingo's death: the janitor's parent-death signal is
    SIGTERM): the plugin is sent SIGTERM, given GRACE seconds, then SIGKILLed, and every
    descendant is killed as above. GRACE is kept below bingo's own TERM grace so that the
    janitor finishes before bingo would SIGKILL the group.

It does not speak JSON-RPC and never touches the plugin's pipes. Standard library only,
Linux only (bingo uses it only there).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

__all__: list[str] = []

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_POLL = 0.01
"""Seconds between checks while waiting out the grace, or for orphans to arrive."""
_SWEEP_LIMIT = 2.0
"""Seconds the sweep of descendants may take: SIGKILL is not refused, so this is ample."""


class _Terminate(Exception):
    """SIGTERM (or SIGHUP, SIGINT) arrived while waiting for the plugin."""


def _on_signal(signum: int, frame: object) -> None:
    raise _Terminate


def _children(me: int) -> list[int]:
    """The pids whose parent is `me`, from /proc (orphans re-parented to a subreaper are not
    in /proc/<me>/task/*/children until they are, so /proc/*/stat is read)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, encoding="ascii", errors="replace") as file:
                fields = file.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == str(me) and fields[0] != "Z":
            found.append(int(entry))
    return found


def _reap() -> bool:
    """Reap every exited child; False once there is no child at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _sweep() -> None:
    """Kill every descendant: killing a child orphans its children, which then arrive here."""
    me = os.getpid()
    until = time.monotonic() + _SWEEP_LIMIT
    while time.monotonic() < until:
        for pid in _children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not _reap():
            return
        time.sleep(_POLL)


def _wait_for(pid: int, seconds: float) -> int | None:
    """The plugin's wait status if it ends within `seconds` (reaping others meanwhile)."""
    until = time.monotonic() + seconds
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done == pid:
            return status
        _reap_others(pid)
        if time.monotonic() >= until:
            return None
        time.sleep(_POLL)


def _reap_others(plugin: int) -> None:
    for pid in _children(os.getpid()):
        if pid != plugin:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _exec_plugin(argv: list[str], prctl: object, janitor: int) -> None:
    """In the forked child: die with the janitor, then become the plugin."""
    try:
        if callable(prctl):
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != janitor:
            os._exit(1)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, ("cannot run %s: %s\n" % (argv[0], exc.strerror)).encode())
        os._exit(127)
    finally:
        os._exit(127)


def _finish(status: int) -> None:
    """Exit the way the plugin did."""
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):
            pass  # SIGKILL and SIGSTOP have no handler to reset
        os.kill(os.getpid(), signum)
        os._exit(128 + signum)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def main(args: list[str]) -> None:
    grace = float(args[0])
    argv = args[2:] if len(args) > 2 and args[1] == "--" else args[1:]
    prctl = None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _on_signal)
    janitor = os.getpid()
    plugin = os.fork()
    if plugin == 0:
        _exec_plugin(argv, prctl, janitor)
    # The plugin holds the pipes now: bingo must see EOF when the plugin (and whatever it
    # started) lets go of them, not when the janitor does.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    status: int | None
    try:
        while True:
            done, status = os.waitpid(-1, 0)
            if done == plugin:
                break
    except _Terminate:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        try:
            os.kill(plugin, signal.SIGTERM)
        except ProcessLookupError:
            pass
        status = _wait_for(plugin, grace)
        if status is None:
            try:
                os.kill(plugin, signal.SIGKILL)
            except ProcessLookupError:
                pass
            status = _wait_for(plugin, _SWEEP_LIMIT)
    except ChildProcessError:
        status = 0
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    _sweep()
    _finish(status if status is not None else signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1:])
