"""Which of the directories a look already knows had anything in them changed, from GNU `find`.

A checkpoint when nothing changed is one `lstat` per file. Python makes them one at a time
(the GIL is handed over at every call, so threads are slower, ADR-0044); git makes them from
several threads. GNU `find` makes them in C, and two of them split the directories between
the machine's cores. Each is asked only what changed: `-newerct` prints an entry whose ctime
is after `after_ns` (the last look's start, less a margin), and prints of it only the starting
point it was found under (`%H`), which is the directory to look at again. So an unchanged
project prints nothing and nothing is formatted, piped or parsed.

That is sound because the kernel sets an inode's ctime to the present at every write, chmod,
chown, link, unlink or rename of it, and at every name added to, removed from or renamed in a
directory; no call sets it to anything else. Where that holds is narrower than where `find`
runs, and `changed`'s caller keeps to it: a file system of this machine (`local_devices`: a
network one stamps with its server's clock, which may be behind), with fine timestamps (a
whole-second one stamps a write after the look with a time before it), the wall clock not put
back since the last look. Without GNU find (macOS, busybox), or on any surprise, nothing is
said and the look confirms by its own `lstat`s.
"""

from __future__ import annotations

import functools
import os
import selectors
import subprocess
from collections.abc import Callable

from ..kernel.programs import which

__all__ = ["LOCAL_TYPES", "PARTS", "changed", "gnu_find", "local_devices", "worth"]

PARTS = 2
"""`find` processes at most (the cores git's threads would use here; more only adds spawns)."""
_MIN_NAMES = 2000
"""Below this many names in all, Python's own `lstat`s are as quick as starting `find`."""
_MAX_ARGS = 128 << 10
"""Bytes of directory paths one `find` is given at most (far below any system's limit)."""
LOCAL_TYPES = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "ramfs", "overlay", "zfs", "f2fs", "bcachefs", "jfs", "nilfs2"}
)
"""File systems whose timestamps come from this machine's clock (not FUSE's daemon, not a
network server's, not a virtual machine's host)."""
_MOUNTINFO = "/proc/self/mountinfo"


@functools.cache
def gnu_find() -> str | None:
    """The path of GNU `find`, or None (another `find` has no `-newerct` nor `-printf`)."""
    found = which("find")
    if found is None:
        return None
    try:
        done = subprocess.run(
            [found, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=5.0, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return found if done.returncode == 0 and b"GNU findutils" in done.stdout else None


def worth(names: int) -> bool:
    """Whether `find` is worth asking about directories holding `names` names in all (GNU
    `find` is there, and they are enough to pay for starting it)."""
    return names >= _MIN_NAMES and gnu_find() is not None


def local_devices(mountinfo: str = _MOUNTINFO) -> frozenset[int]:
    """The device numbers (`st_dev`) of the mounted file systems of a type in `LOCAL_TYPES`;
    none when the mount table cannot be read. Read at every look: a mount may come or go."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return frozenset()
    found: set[int] = set()
    for line in lines:
        # "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
        fields, _, rest = line.partition(" - ")
        parts = fields.split()
        kind = rest.split(" ", 1)[0]
        if len(parts) < 3 or kind not in LOCAL_TYPES:
            continue
        major, _, minor = parts[2].partition(":")
        try:
            found.add(os.makedev(int(major), int(minor)))
        except (ValueError, OverflowError):
            continue
    return frozenset(found)


def changed(
    directories: list[str], names: int, after_ns: int, stop: Callable[[], bool] = lambda: False
) -> set[int] | None:
    """The indexes of `directories` (absolute paths; `names` in them all) that are, or hold,
    something whose ctime is after `after_ns`. None when `find` is not GNU's, there is too
    little to gain, or anything is not as expected (a directory gone, an error, `stop()`):
    then the caller looks as before."""
    find = gnu_find()
    if find is None or not worth(names) or not directories or not all(os.path.isabs(d) for d in directories):
        return None
    encoded = [os.fsencode(d) for d in directories]
    index = {path: n for n, path in enumerate(encoded)}
    if len(index) != len(encoded):
        return None
    groups = _split(encoded, PARTS)
    if any(sum(len(d) + 1 for d in group) > _MAX_ARGS for group in groups):
        return None
    seconds, nanoseconds = divmod(after_ns, 1_000_000_000)
    outputs = _run(find, groups, f"@{seconds}.{nanoseconds:09d}".encode(), stop)
    if outputs is None:
        return None
    found: set[int] = set()
    for output in outputs:
        if output and not output.endswith(b"\0"):
            return None
        for start in output[:-1].split(b"\0") if output else ():
            n = index.get(start)
            if n is None:
                return None
            found.add(n)
    return found


def _split(directories: list[bytes], parts: int) -> list[list[bytes]]:
    """`directories` in `parts` runs in order, of about as many directories each."""
    count = min(parts, len(directories))
    size, extra = divmod(len(directories), count)
    groups: list[list[bytes]] = []
    start = 0
    for n in range(count):
        end = start + size + (1 if n < extra else 0)
        groups.append(directories[start:end])
        start = end
    return groups


def _run(find: str, groups: list[list[bytes]], after: bytes, stop: Callable[[], bool]) -> list[bytes] | None:
    """Run one `find` per group side by side, reading their outputs as they come (a pipe
    left unread would hold its `find` back); None on any failure."""
    # -P: no link followed, a starting point that became a link included (it is then printed:
    # its ctime is its making's). -maxdepth 1: each directory and what is directly in it.
    expression = [b"-maxdepth", b"1", b"-newerct", after, b"-printf", rb"%H\0"]
    env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for group in groups:
            procs.append(
                subprocess.Popen(
                    [find.encode(), b"-P", *group, *expression],
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
