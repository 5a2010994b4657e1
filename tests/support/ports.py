"""The port a test server listens on, read from the kernel: a server told to bind port 0 (any
free port) is asked nothing, and no port is picked free and bound later, which another test
running in parallel could take in between (ADR-0041).

Linux only, as the suite is: a process's sockets are links `socket:[INODE]` in
/proc/PID/fd, and /proc/net/tcp lists each listening socket (state 0A) with its inode.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

__all__ = ["listening_port"]

_LISTEN = "0A"


def _inodes(pid: int) -> set[str]:
    found: set[str] = set()
    fds = Path(f"/proc/{pid}/fd")
    try:
        names = os.listdir(fds)
    except OSError:
        return found
    for name in names:
        try:
            link = os.readlink(fds / name)
        except OSError:
            continue
        if link.startswith("socket:["):
            found.add(link[len("socket:[") : -1])
    return found


def _listening(inodes: set[str]) -> int | None:
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 9 and fields[3] == _LISTEN and fields[9] in inodes:
                return int(fields[1].rsplit(":", 1)[1], 16)
    return None


def listening_port(process: subprocess.Popen[bytes], *, timeout: float = 20.0) -> int:
    """The TCP port `process` (or a child it started, such as `npx`'s node) listens on,
    once it does; AssertionError if it exits or does not listen within `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        pids = [process.pid, *_children(process.pid)]
        port = _listening(set().union(*(_inodes(pid) for pid in pids)))
        if port is not None:
            return port
        assert process.poll() is None, f"{process.args!r} exited with {process.returncode} before it listened"
        assert time.monotonic() < deadline, f"{process.args!r} did not listen within {timeout:g} s"
        time.sleep(0.05)


def _children(pid: int) -> list[int]:
    """`pid`'s descendants, from /proc/PID/task/*/children."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*/children"):
            try:
                kids = [int(kid) for kid in task.read_text(encoding="ascii").split()]
            except OSError:
                continue
            found.extend(kids)
            todo.extend(kids)
    return found
