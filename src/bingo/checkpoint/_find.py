"""What each directory a look already knows holds, in bytes, from GNU `find` run in parallel.

A checkpoint when nothing changed is one `lstat` per file. Python makes them one at a time
(the GIL is handed over at every call, so threads are slower, ADR-0044); git makes them from
several threads. GNU `find` makes them in C, and two of them split the directories between the
machine's cores: each directory's part of their output (`listing`) is compared, as bytes, with
what it was at the last look (`_scan` keeps it once it has checked it against its own `lstat`s:
`agrees`). Equal bytes are the same names with the same type, permissions, inode, size, mtime
and ctime, so nothing in the directory is looked at again. Without GNU find (macOS, busybox),
or on any surprise in its output, nothing is said and `_scan` looks as before.
"""

from __future__ import annotations

import functools
import os
import selectors
import shutil
import stat
import subprocess
from collections.abc import Callable

__all__ = ["PARTS", "agrees", "gnu_find", "listing"]

PARTS = 2
"""`find` processes at most (the cores git's threads would use here; more only adds spawns)."""
_MIN_NAMES = 2000
"""Below this many names in all, Python's own `lstat`s are as quick as starting `find`."""
_MAX_ARGS = 128 << 10
"""Bytes of directory paths one `find` is given at most (far below any system's limit)."""
_DIRECTORY = rb"%d/%i %m %f\0"
"""A directory: its depth (0 for each directory asked about, 1 for those in it), inode,
permissions and name; not its mtime, which moves with every name added below it."""
_OTHER = rb"%y %m %i %s %T@ %C@ %f\0"
"""Anything else: type, permissions, inode, size, mtime, ctime (seconds, 10 decimals), name."""
_TYPES = {b"f": stat.S_IFREG, b"l": stat.S_IFLNK, b"d": stat.S_IFDIR}


@functools.cache
def gnu_find() -> str | None:
    """The path of GNU `find`, or None (another `find` has no `-printf`)."""
    found = shutil.which("find")
    if found is None:
        return None
    try:
        done = subprocess.run(
            [found, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=5.0, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found if done.returncode == 0 and b"GNU findutils" in done.stdout else None


def listing(directories: list[str], names: int, stop: Callable[[], bool] = lambda: False) -> list[bytes] | None:
    """Each of `directories`' (absolute paths; `names` in them all) part of `find`'s output,
    in order: its own line, then one per name in it. None when `find` is not GNU's, there is
    too little to gain, or anything is not as expected (a directory gone or now a link, an
    error, `stop()`): then the caller looks as before."""
    find = gnu_find()
    if find is None or names < _MIN_NAMES or not directories or not all(os.path.isabs(d) for d in directories):
        return None
    groups = _split(directories, PARTS)
    if any(sum(len(d) + 1 for d in group) > _MAX_ARGS for group in groups):
        return None
    outputs = _run(find, groups, stop)
    if outputs is None:
        return None
    parts: list[bytes] = []
    for output, group in zip(outputs, groups, strict=True):
        if not output.startswith(b"0/") or not output.endswith(b"\0"):
            return None
        pieces = output[2:-1].split(b"\x000/")
        if len(pieces) != len(group):
            return None  # a directory asked about is gone, or is no longer a directory
        parts.extend(pieces)
    return parts


def _split(directories: list[str], parts: int) -> list[list[str]]:
    """`directories` in `parts` runs in order, of about as many directories each."""
    count = min(parts, len(directories))
    size, extra = divmod(len(directories), count)
    groups: list[list[str]] = []
    start = 0
    for n in range(count):
        end = start + size + (1 if n < extra else 0)
        groups.append(directories[start:end])
        start = end
    return groups


def _run(find: str, groups: list[list[str]], stop: Callable[[], bool]) -> list[bytes] | None:
    """Run one `find` per group side by side, reading their outputs as they come (a pipe
    left unread would hold its `find` back); None on any failure."""
    expression = [b"-maxdepth", b"1", b"(", b"-type", b"d", b"-printf", _DIRECTORY, b")", b"-o", b"-printf", _OTHER]
    env = {**os.environ, "LC_ALL": "C"}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for group in groups:
            procs.append(
                subprocess.Popen(
                    [find.encode(), *(os.fsencode(d) for d in group), *expression],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
            )
        chunks: list[list[bytes]] = [[] for _ in procs]
        with selectors.DefaultSelector() as selector:
            for n, proc in enumerate(procs):
                assert proc.stdout is not None
                selector.register(proc.stdout, selectors.EVENT_READ, n)
            open_ = len(procs)
            while open_:
                if stop():
                    return None
                for key, _ in selector.select(timeout=0.1):
                    data = os.read(key.fd, 1 << 20)
                    if data:
                        index: int = key.data
                        chunks[index].append(data)
                    else:
                        selector.unregister(key.fileobj)
                        open_ -= 1
        if any(proc.wait() != 0 for proc in procs):
            return None
        return [b"".join(chunk) for chunk in chunks]
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def _ns(text: bytes) -> int:
    """`find`'s `%T@` (seconds, a point, 10 decimals) in nanoseconds."""
    seconds, _, fraction = text.partition(b".")
    return int(seconds) * 1_000_000_000 + (-1 if seconds.startswith(b"-") else 1) * int(fraction[:9].ljust(9, b"0"))


def agrees(
    part: bytes,
    ino: int,
    names: frozenset[str],
    files: dict[str, tuple[int, int, int, int, int]],
    dirs: dict[str, tuple[int, int]],
) -> bool:
    """Whether a directory's part of `find`'s output (`listing`) says what a look saw there:
    the directory itself (`ino`), exactly the `names` its listing held, each of `files`
    (name → mtime, ctime, size, inode, type and permissions) and `dirs` (name → inode, type
    and permissions) with those. Only then may the part stand for the look next time."""
    lines = part.split(b"\0")
    try:
        head, _, _ = lines[0].partition(b" ")
        if int(head) != ino:
            return False
        seen: set[str] = set()
        for line in lines[1:]:
            if line.startswith(b"1/"):
                fields = line[2:].split(b" ", 2)
                name = os.fsdecode(fields[2])
                known_dir = dirs.get(name)
                if known_dir is not None and known_dir != (int(fields[0]), stat.S_IFDIR | int(fields[1], 8)):
                    return False
                if name in files:
                    return False  # a directory where the look saw a file
            else:
                fields = line.split(b" ", 6)
                name = os.fsdecode(fields[6])
                known = files.get(name)
                if known is not None:
                    kind = _TYPES.get(fields[0])
                    if kind is None or known != (
                        _ns(fields[4]),
                        _ns(fields[5]),
                        int(fields[3]),
                        int(fields[2]),
                        kind | int(fields[1], 8),
                    ):
                        return False
                elif name in dirs:
                    return False
            seen.add(name)
    except (ValueError, IndexError):
        return False
    # Exactly the names the look's listing held, each once (what is in `files` and `dirs`
    # is among them, or the look would not have them).
    return len(lines) - 1 == len(names) == len(seen) and seen.issuperset(names)
