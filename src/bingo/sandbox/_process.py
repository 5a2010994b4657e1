"""Starting a process bingo talks to over pipes: a plugin, an MCP server, a command hook.

Owns the one way such a process is started: in a process group of its own, through the
run's janitor (ADR-0013) where there is one, confined by a `Policy` when given (only
through the janitor: `spawn`, ADR-0030), else directly in a session of its own; with
asyncio streams over bingo's ends of its three pipes, and how it ended. What is done with
it afterwards (a plugin's stderr log and bounded shutdown: `bridge/process.py`; a hook's
bounded output and timeout: `bring/hooks.py`) is its caller's.
"""

from __future__ import annotations

import asyncio
import os
from asyncio.streams import FlowControlMixin
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..endpoint import MAX_LINE
from ..kernel.programs import which
from ._policy import Policy
from .janitor import USE_JANITOR, JanitorClient, kill_warden

__all__ = ["Started", "resolve", "start"]


@dataclass(slots=True, frozen=True)
class Started:
    """A process `start` started: its process group, asyncio streams over its pipes, and
    how it ends."""

    pid: int
    """The process group's id: its warden's pid through the janitor, else the process's own."""
    stdin: asyncio.StreamWriter
    stdout: asyncio.StreamReader
    stderr: asyncio.StreamReader
    wait: Callable[[], Awaitable[int | None]]
    """Wait for it to end: its exit status (None: the janitor was lost). Cancelling the
    wait leaves the process be."""
    returncode: Callable[[], int | None]
    """Its exit status once it ended, else None."""
    warden: bool
    """Started through the janitor (its pid is its warden's)."""


def resolve(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> str:
    """The path of `argv`'s command, checked here so that a missing command (or working
    directory) is an OSError at spawn and not an exit status later.

    Raises:
        OSError: the command cannot be found or is not executable, or `cwd` is missing.
    """
    if not cwd.is_dir():
        raise FileNotFoundError(2, "No such file or directory", str(cwd))
    command = argv[0]
    if os.sep in command:
        found: str | None = str(cwd / command) if os.access(cwd / command, os.X_OK) else None
        if found is None and (cwd / command).is_file():
            raise PermissionError(13, "Permission denied", command)
    else:
        found = which(command, env)
    if found is None:
        raise FileNotFoundError(2, "No such file or directory", command)
    return found


class _PipeWriter(FlowControlMixin):
    """The protocol under the stdin StreamWriter: flow control (drain), nothing read."""


async def _streams(
    stdin_w: int, stdout_r: int, stderr_r: int, limit: int
) -> tuple[asyncio.StreamWriter, asyncio.StreamReader, asyncio.StreamReader]:
    """asyncio streams over bingo's ends of the three pipes (each closed by its transport,
    or here when a transport could not be made)."""
    loop = asyncio.get_running_loop()
    pipes = [os.fdopen(fd, "wb" if fd == stdin_w else "rb", buffering=0) for fd in (stdin_w, stdout_r, stderr_r)]
    taken = 0
    try:
        transport, protocol = await loop.connect_write_pipe(_PipeWriter, pipes[0])
        taken = 1
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        stdout = asyncio.StreamReader(limit=limit, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdout, loop=loop), pipes[1])
        taken = 2
        stderr = asyncio.StreamReader(loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stderr, loop=loop), pipes[2])
        taken = 3
    except BaseException:
        for pipe in pipes[taken:]:
            pipe.close()
        raise
    return stdin, stdout, stderr


async def start(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path,
    grace: float,
    janitor: bool = USE_JANITOR,
    policy: Policy | None = None,
    warden: bool = True,
    limit: int = MAX_LINE,
) -> Started:
    """Start `argv` in `cwd` with `env`, in a process group of its own: through the run's
    janitor (`janitor`), confined by `policy` when one is given, with a warden (`warden`)
    that gives it `grace` seconds between SIGTERM and SIGKILL; else directly in a session of
    its own. `limit` bounds a line read from its stdout.

    Raises:
        OSError: the command cannot be run, or not confined as asked.
    """
    path = resolve(argv, env, cwd)
    if not janitor:
        if policy is not None:
            raise OSError(95, "a confined process is started only through the janitor (Linux)")
        proc = await asyncio.create_subprocess_exec(
            path,
            *argv[1:],
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            limit=limit,
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        return Started(proc.pid, proc.stdin, proc.stdout, proc.stderr, proc.wait, lambda: proc.returncode, False)
    if policy is None:
        spawned = await JanitorClient.running().spawn(path, [path, *argv[1:]], env, cwd, grace=grace, warden=warden)
    else:
        from ._run import spawn

        spawned = await spawn(path, [path, *argv[1:]], env, cwd, grace=grace, policy=policy, warden=warden)
    try:
        stdin, stdout, stderr = await _streams(spawned.stdin, spawned.stdout, spawned.stderr, limit)
    except BaseException:
        kill_warden(spawned.pid)
        raise
    ended = spawned.ended

    def returncode() -> int | None:
        return ended.result() if ended.done() else None

    return Started(spawned.pid, stdin, stdout, stderr, lambda: asyncio.shield(ended), returncode, True)
