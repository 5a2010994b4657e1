"""What bingo holds of a process the janitor started, and how it ends one for good.

Owns `Spawned` (the warden's pid, which is also the process group's; bingo's ends of the three
pipes; the future of how it ended), making a spawn's pipes (`pipes`: bingo makes them and
passes the far ends, so the streams are bingo's own from the start) and `kill_warden`, the
SIGKILL of a group and its warden. Asking the janitor is `_client.py`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass

__all__ = ["Spawned", "kill_warden", "pipes"]


@dataclass(slots=True, frozen=True)
class Spawned:
    """A plugin the janitor started: its warden's pid, bingo's ends of its three pipes (each
    the caller's to close), and the future of how it ended (None: the janitor was lost)."""

    pid: int
    """The warden's pid, which is also the plugin's process group."""
    stdin: int
    stdout: int
    stderr: int
    ended: asyncio.Future[int | None]


def pipes(merged: bool) -> tuple[list[int], tuple[int, int, int]]:
    """The far ends (stdin, stdout, stderr) a process is given, and ours (stdin's writer,
    stdout's and stderr's readers; -1 where there is none): merged, stdin is /dev/null and
    stderr is stdout's pipe."""
    if merged:
        stdin_r, stdin_w = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC), -1
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = -1, stdout_w
    else:
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
    return [stdin_r, stdout_w, stderr_w], (stdin_w, stdout_r, stderr_r)


def kill_warden(warden: int) -> None:
    """SIGKILL a plugin's group and its warden (which may not lead a group yet: then the
    plugin dies with it, by its parent-death signal, and the janitor sweeps the rest)."""
    with contextlib.suppress(OSError):
        os.killpg(warden, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(warden, signal.SIGKILL)
