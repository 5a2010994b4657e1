"""Processes confined ahead, as bingo holds them (ADR-0030).

Owns bingo's side of a process the janitor forked and confined before its command was known
(the `bash` tool's next command): what the janitor's `("parked", …)` message hands over
(`Parked`, read by `read_parked`; the key of its policy, `policy_key`), at most PARKED_MAX
held (one per policy, `keep`), and sending one its order (`send_order`) once its rules are
seen to still hold (`Parked.fresh`). The janitor's side is `_park.py`; making the pipes and
hearing the exit are the client's (`_client.py`).
"""

from __future__ import annotations

import array
import marshal
import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard, TypeVar

from .._policy import Policy

__all__ = ["PARKED_MAX", "Parked", "keep", "policy_key", "read_parked", "send_order"]

PARKED_MAX = 4
"""Processes confined ahead that bingo keeps at most (one per policy: the `bash` tool's, a
subagent's); the janitor does not replace one let go."""


@dataclass(slots=True)
class Parked:
    """A process confined ahead, as the janitor handed it over: its pid, the socket it waits
    on for its order, its TMPDIR, and the directories its rules were walked from and its
    protected paths (with their mtimes, -1 for one missing): if one changed, its rules are
    out of date and it is let go."""

    pid: int
    sock: int
    tmpdir: str
    walked: list[tuple[str, int]]

    def fresh(self) -> bool:
        """Whether every walked path still has its mtime (`_landlock.fresh`, loaded only in a
        run that confines ahead)."""
        from ._landlock import fresh

        return fresh(self.walked)


_T = TypeVar("_T")


def _is_list(value: object) -> TypeGuard[list[object]]:
    return isinstance(value, list)


def _items(value: object, kind: type[_T]) -> tuple[_T, ...]:
    """The items of `value` (a list, as `marshal` made it) that are `kind`s."""
    if not _is_list(value):
        return ()
    return tuple(item for item in value if isinstance(item, kind))


def read_parked(
    pid: int,
    fd: int,
    tmpdir: str,
    paths: object,
    mtimes: object,
    policy: tuple[object, object, object, int],
) -> tuple[tuple[object, ...], Parked]:
    """The `("parked", …)` message's process (its order socket `fd`), and the key of the
    policy it was confined by (`denied`, `writable`, `protected`, `netns`, as `policy_key`
    makes it)."""
    denied, writable, protected, netns = policy
    key: tuple[object, ...] = (_items(denied, str), _items(writable, str), _items(protected, str), bool(netns))
    walked = list(zip(_items(paths, str), _items(mtimes, int), strict=False))
    return key, Parked(pid, fd, tmpdir, walked)


def send_order(
    sock: socket.socket,
    one: Parked,
    path: str,
    argv: Sequence[str],
    env: dict[str, str],
    cwd: Path,
    port: int,
    theirs: list[int],
) -> bool:
    """Send `one` its order through `sock` (its order socket), with `theirs`, the far ends of
    its pipes, which are closed after; False when it is gone."""
    order = marshal.dumps(
        (path, list(argv), {**env, "TMPDIR": one.tmpdir}, str(cwd), sorted(os.sched_getaffinity(0)), port)
    )
    try:
        sock.sendmsg([order], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", theirs))])
    except OSError:
        return False
    finally:
        for fd in set(theirs):
            os.close(fd)
    return True


def keep(held: dict[tuple[object, ...], Parked], key: tuple[object, ...], one: Parked) -> None:
    """Hold `one` for its policy's `key` (letting go of the one held before for it), and at most
    PARKED_MAX in all: the oldest policy's goes."""
    previous = held.pop(key, None)
    if previous is not None:
        os.close(previous.sock)
    held[key] = one
    while len(held) > PARKED_MAX:
        os.close(held.pop(next(iter(held))).sock)


def policy_key(policy: Policy, netns: bool) -> tuple[object, ...]:
    """What a process parked ahead is parked for (the janitor's `_sandbox.key`)."""
    return (
        tuple(str(p) for p in policy.denied),
        tuple(str(p) for p in policy.writable),
        tuple(str(p) for p in policy.protected),
        netns,
    )
