"""What Linux's /proc says about other processes: whether one lives, its parent, its children,
a process group's members, the processes whose command line matches.

Owns every read of /proc/PID/stat and /proc/PID/cmdline in bingo and its tests. It does not
signal or wait for anything: its callers decide what a finding means (the janitor sweeps the
children it finds; a plugin's shutdown waits for its group to empty; the tests look for
leftovers).

It lives in the janitor's package because the janitor's process needs it too and imports
nothing of bingo's (ADR-0013): it imports only `os` and `sys`, and runs there as
`janitor.proc`. A zombie counts as ended everywhere: it has exited and only waits for a
parent that reaps (PID 1 in a container may reap late).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: the janitor imports nothing it can do without
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["LINUX", "alive", "children", "cmdline", "find", "group_has_living", "parent", "pids"]

LINUX = sys.platform.startswith("linux")
"""Whether /proc is Linux's (elsewhere it is missing, or not this format)."""
_ENDED = (b"Z", b"X")
"""States of a process that has exited: a zombie, or dead (seen for an instant)."""


def _stat(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (the state first, then the
    parent, then the process group), or None when there is no such process. The name is in
    parentheses and may hold anything, so the fields are what follows its last `)`."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
    except OSError:
        return None
    return data.rsplit(b")", 1)[-1].split()


def pids() -> list[int]:
    """Every process /proc lists (none where it cannot be read)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [int(entry) for entry in entries if entry.isdigit()]


def alive(pid: int) -> bool:
    """Whether `pid` is a process that has not ended."""
    fields = _stat(pid)
    return fields is not None and len(fields) > 0 and fields[0] not in _ENDED


def parent(pid: int) -> int | None:
    """The parent of `pid`, or None when there is no such process."""
    fields = _stat(pid)
    return int(fields[1]) if fields is not None and len(fields) > 1 else None


def children(pid: int) -> list[int]:
    """The living processes whose parent is `pid` (orphans re-parented to a subreaper are
    found this way as soon as they arrive)."""
    mine = str(pid).encode()
    found: list[int] = []
    for child in pids():
        fields = _stat(child)
        if fields is not None and len(fields) > 1 and fields[1] == mine and fields[0] not in _ENDED:
            found.append(child)
    return found


def group_has_living(pgid: int) -> bool:
    """Whether process group `pgid` has a member that has not ended. Signalling a group
    succeeds while its members are zombies, so only /proc can tell; where it cannot be read
    (not Linux, or not mounted) the answer is True, and the caller's deadline decides."""
    if not LINUX:
        return True
    listed = pids()
    if not listed:
        return True
    group = str(pgid).encode()
    for pid in listed:
        fields = _stat(pid)
        if fields is not None and len(fields) > 2 and fields[2] == group and fields[0] not in _ENDED:
            return True
    return False


def cmdline(pid: int) -> list[str] | None:
    """The argv of `pid` (empty for a zombie, a kernel thread, or a process in the middle of
    an exec: posix_spawn returns a moment before the new command line is readable), or None
    when there is no such process."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            data = file.read()
    except OSError:
        return None
    return data.decode(errors="replace").split("\0")[:-1] if data else []


def find(matches: Callable[[list[str]], bool]) -> list[int]:
    """The living processes whose argv `matches`."""
    found: list[int] = []
    for pid in pids():
        argv = cmdline(pid)
        if argv and matches(argv) and alive(pid):
            found.append(pid)
    return found
