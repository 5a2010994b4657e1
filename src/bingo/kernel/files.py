"""Opening a file bingo reads on someone's behalf: the one way a tool, the system prompt or
any instruction file reader gets a file's bytes (ADR-0026).

Owns what such a file may be: a regular file, opened without blocking (a FIFO named like a
file must not hang a start or a turn), never a device, a socket, a FIFO or a directory, and
never a file of /proc or /sys (the kernel's view of running processes: `/proc/self/environ`
is bingo's whole environment, keys included, whatever `os.environ` says now); `open_regular`.
And what a file of a layer may be besides (`read_layer_file`): one whose real path, links
followed, is inside its layer (the project for the project's, `~/.bingo` for the person's),
so a link a repository ships cannot bring the prompt a file from elsewhere. Also `inside`,
the one test of "this real path is under that root" that the writes share (`kernel.atomic`).

It does not decide what a reader does with the bytes (cut, decode, number them), and it
does not write: `kernel.atomic` does.
"""

from __future__ import annotations

import functools
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LayerFile", "LeftOut", "NotRegular", "inside", "open_regular", "read_layer_file", "read_regular"]

_PSEUDO = ("/proc", "/sys")
"""Where the kernel shows itself as files: never read for anyone."""


class NotRegular(OSError):
    """The path names something other than a regular file bingo may read; `what` says what,
    in words that finish "it is …" ("a FIFO", "a character device", "a file of /proc")."""

    def __init__(self, path: Path | str, what: str) -> None:
        super().__init__(f"{path} is {what}, not a regular file")
        self.path = str(path)
        self.what = what


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


@functools.cache
def _pseudo_devices() -> frozenset[int]:
    """The device numbers of /proc and /sys on this machine (a file of either, under any
    name a bind mount gives it, has one of them)."""
    found: set[int] = set()
    for root in _PSEUDO:
        try:
            found.add(os.stat(root).st_dev)
        except OSError:
            continue
    return frozenset(found)


def _on_pseudo(info: os.stat_result, real: str) -> bool:
    return info.st_dev in _pseudo_devices() or any(real == root or real.startswith(root + "/") for root in _PSEUDO)


def open_regular(path: Path | str, *, follow: bool = True) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at `path`, and its stat. Opened without
    blocking (O_NONBLOCK: a FIFO opens at once and is then refused) and close-on-exec; with
    `follow` False a link at `path` itself is refused (O_NOFOLLOW). The caller closes it.

    Raises:
        FileNotFoundError: there is nothing at `path`.
        NotRegular: it is a directory, FIFO, socket or device, or a file of /proc or /sys.
        OSError: it cannot be opened (permission denied, a link where none is followed: ELOOP).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= os.O_NOFOLLOW
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(path, _kind(info.st_mode))
        if _on_pseudo(info, os.path.realpath(path)):
            raise NotRegular(path, "a file of /proc or /sys (the kernel's view of running processes and devices)")
        # Regular files never block; reads past here behave as without O_NONBLOCK.
        return fd, info
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` + 1 of them (so a caller sees
    one that is longer), opened as `open_regular` does: a FIFO, a device or a file of /proc
    in its place never blocks nor feeds a read, however a repository or an archive put it
    there.

    Raises:
        FileNotFoundError: there is nothing at `path`.
        NotRegular: it is not a regular file.
        OSError: it cannot be opened or read.
    """
    fd, _ = open_regular(path)
    with open(fd, "rb") as file:
        return file.read(limit + 1)


def inside(path: Path | str, root: Path | str) -> bool:
    """Whether `path`, every link followed, is `root` (links followed too) or under it."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class LayerFile:
    """A file of a layer as read: at most the limit asked for of its bytes, and its whole size."""

    path: Path
    data: bytes
    size: int


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A file of a layer that is there but not read, and why (a line that finishes "it …")."""

    path: Path
    why: str

    def line(self, what: str) -> str:
        """One notice line: `what` (e.g. "the system prompt") leaves this file out, and why."""
        return f"{self.path} is left out of {what}: {self.why}"


def read_layer_file(path: Path, *, layer: Path, limit: int, layer_name: str) -> LayerFile | LeftOut | None:
    """At most `limit` bytes of the instruction file at `path` (AGENTS.md, and every file a
    layer gives bingo to put before the model: CLAUDE.md, skills, commands, agents), read
    only if it is a regular file whose real path is inside `layer` (`layer_name` says which,
    in words: "the project", "your ~/.bingo"). None when there is nothing at `path`; a
    `LeftOut` saying why when there is something bingo does not read."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return LeftOut(path, f"it cannot be looked at ({exc.strerror or exc})")
    real = os.path.realpath(path)
    if not inside(real, layer):
        return LeftOut(path, f"it is a link to {real}, outside {layer_name}; only files inside it are read")
    try:
        # The real path, so no link is left to follow; O_NOFOLLOW all the same, should one be
        # put there between the two calls.
        fd, info = open_regular(real, follow=False)
    except FileNotFoundError:
        return None
    except NotRegular as exc:
        return LeftOut(path, f"it is {exc.what}, not a regular file")
    except OSError as exc:
        return LeftOut(path, f"it cannot be read ({exc.strerror or exc})")
    try:
        chunks: list[bytes] = []
        got = 0
        while got < limit:
            chunk = os.read(fd, limit - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        return LeftOut(path, f"it cannot be read ({exc.strerror or exc})")
    finally:
        os.close(fd)
    return LayerFile(path=path, data=b"".join(chunks), size=max(info.st_size, got))
