"""One look at a project's files: what a checkpoint records of each, read as little as can be.

Owns the walk (no link followed, no ignored directory entered, `.git` never, the project's
own `.bingo/` never: bingo writes its "always" answers and trust there, which a rewind must
not undo), what each path is (`Entry`: a regular file's bytes by digest and its mode, a
link's target, or why it was not recorded), and the stat cache that makes a checkpoint
incremental: a file whose size, mtime, ctime and inode are what the last look saw is not
read again. It does not keep bytes (`put` does, given by the store) nor restore anything.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import msgspec

from ._ignore import Ignores, read_spec

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["Entry", "KeepFailed", "Scan", "StatCache", "Stopped", "scan"]

_RACY_NS = 50_000_000
"""A file modified this close (ns) before a look began may be modified again within the
same timestamp tick without its mtime moving: its digest is not cached (git's racy-clean)."""
OWN = ".bingo"
"""The project's own layer, never recorded (INTERFACE §9 protects it from every turn)."""


class Entry(msgspec.Struct, frozen=True, array_like=True):
    """What a checkpoint knows of one path: a `file` (its `ref` the sha256 of its bytes), a
    `link` (its `ref` the link's target, as written), or one not recorded: `big` (over
    `checkpoints.maxFileBytes`) or `unreadable`. `mode` is the permission bits."""

    kind: Literal["file", "link", "big", "unreadable"]
    mode: int
    ref: str
    size: int


class _Cached(msgspec.Struct, frozen=True, array_like=True):
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    digest: str


class StatCache:
    """Each file's digest as last read, under the stat it had then (`rows`, kept between
    processes), and, for this process only, each directory's ignore decisions under its
    stat and rules (`dirs`) and each rule file's parsed rules under its stat (`specs`)."""

    __slots__ = ("_serial", "dirs", "rows", "specs")

    def __init__(self, rows: dict[str, _Cached] | None = None) -> None:
        self.rows: dict[str, _Cached] = rows or {}
        self.dirs: dict[str, tuple[tuple[int, int, tuple[int, ...]], dict[str, bool]]] = {}
        self.specs: dict[str, tuple[tuple[int, int, int, int], int, GitIgnoreSpec | None]] = {}
        self._serial = 0

    def rules(self, directory: str, path: str, above: Ignores) -> Ignores:
        """The rules in force in `directory` (relative), given the rule file at `path` (a
        `.gitignore`, or `.git/info/exclude` for the root) and those `above`: parsed again
        only when the file's stat moved."""
        try:
            info = os.stat(path)
        except OSError:
            return above
        key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        known = self.specs.get(path)
        if known is None or known[0] != key:
            self._serial += 1
            known = (key, self._serial, read_spec(path))
            self.specs[path] = known
        return above.below(directory, known[2], known[1])

    def encode(self) -> bytes:
        return msgspec.msgpack.encode(self.rows)

    @classmethod
    def decode(cls, data: bytes) -> StatCache:
        try:
            return cls(msgspec.msgpack.decode(data, type=dict[str, _Cached]))
        except msgspec.DecodeError:
            return cls()


@dataclass(slots=True)
class Scan:
    """A look at the project: every recorded path's entry (relative, "/"-separated), the
    paths not recorded and why (ignored directories named once, with a trailing "/"), and
    the files that could not be read."""

    entries: dict[str, Entry] = field(default_factory=lambda: {})
    ignored: list[str] = field(default_factory=lambda: [])
    unreadable: list[str] = field(default_factory=lambda: [])
    big: list[str] = field(default_factory=lambda: [])
    read: int = 0
    """Files whose bytes were read this time (the rest came from the stat cache)."""


class Stopped(Exception):
    """The look was told to stop (it took too long)."""


class KeepFailed(Exception):
    """A file's copy could not be kept: `path` (relative) and the `error`."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(path)
        self.path = path
        self.error = error


def scan(
    root: str,
    cache: StatCache,
    put: Callable[[str, bytes], None],
    *,
    max_file_bytes: int,
    stop: Callable[[], bool] = lambda: False,
    skip: frozenset[str] = frozenset(),
) -> Scan:
    """Look at every file under `root` git would not ignore; the bytes of each regular file
    not in `cache` are handed to `put(digest, data)` (the cache is updated in place). A
    directory whose path is in `skip` (bingo's own home, when the project holds it) is not
    entered.

    Raises:
        Stopped: `stop()` said so, between two directories.
        OSError: the project's own directory cannot be listed.
    """
    started = time.time_ns()
    settled = started - _RACY_NS
    found = Scan()
    rows = cache.rows
    seen: dict[str, _Cached] = {}
    memos: dict[str, tuple[tuple[int, int, tuple[int, ...]], dict[str, bool]]] = {}
    entries = found.entries
    ignores = cache.rules("", os.path.join(root, ".git", "info", "exclude"), Ignores())
    top = os.stat(root)
    stack: list[tuple[str, str, Ignores, int, int]] = [(root, "", ignores, top.st_mtime_ns, top.st_ino)]
    first = True
    while stack:
        if stop():
            # What was read so far is not read again: a project too big for one look's
            # time is recorded over the next turns' looks.
            cache.rows.update(seen)
            raise Stopped
        directory, prefix, ignores, dir_mtime, dir_ino = stack.pop()
        try:
            listing = list(os.scandir(directory))
        except OSError:
            if first:
                raise
            found.unreadable.append(prefix)
            continue
        first = False
        if any(e.name == ".gitignore" for e in listing):
            ignores = cache.rules(prefix, os.path.join(directory, ".gitignore"), ignores)
        # A directory whose entries and rules are as last time decides its names as then:
        # its mtime moves with every name added, removed or renamed in it.
        key = (dir_mtime, dir_ino, ignores.key)
        memo = cache.dirs.get(prefix)
        decided: dict[str, bool] = memo[1] if memo is not None and memo[0] == key else {}
        if dir_mtime < settled:
            memos[prefix] = (key, decided)
        for item in listing:
            name = item.name
            if name == ".git" or (not prefix and name == OWN):
                continue
            rel = prefix + name
            try:
                info = item.stat(follow_symlinks=False)
            except OSError:
                found.unreadable.append(rel)
                continue
            mode = info.st_mode
            if stat.S_ISDIR(mode):
                ignored = decided.get(name)
                if ignored is None:
                    ignored = decided[name] = ignores.ignored(rel, True)
                if ignored:
                    found.ignored.append(rel + "/")
                elif item.path in skip:
                    continue
                else:
                    stack.append((item.path, rel + "/", ignores, info.st_mtime_ns, info.st_ino))
                continue
            ignored = decided.get(name)
            if ignored is None:
                ignored = decided[name] = ignores.ignored(rel, False)
            if ignored:
                found.ignored.append(rel)
                continue
            if stat.S_ISREG(mode):
                size = info.st_size
                row = rows.get(rel)
                if (
                    row is not None
                    and row.mtime_ns == info.st_mtime_ns
                    and row.size == size
                    and row.ctime_ns == info.st_ctime_ns
                    and row.ino == info.st_ino
                ):
                    seen[rel] = row
                    entries[rel] = Entry(kind="file", mode=mode & 0o7777, ref=row.digest, size=size)
                    continue
                _file(found, item.path, rel, info, max_file_bytes, put)
                if info.st_mtime_ns < settled and rel in entries and entries[rel].kind == "file":
                    seen[rel] = _Cached(size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, entries[rel].ref)
            elif stat.S_ISLNK(mode):
                try:
                    target = os.readlink(item.path)
                except OSError:
                    found.unreadable.append(rel)
                    entries[rel] = Entry(kind="unreadable", mode=stat.S_IMODE(mode), ref="", size=0)
                    continue
                entries[rel] = Entry(kind="link", mode=stat.S_IMODE(mode), ref=target, size=len(target))
            # else a FIFO, socket or device: no file a checkpoint can hold
    cache.rows = seen
    cache.dirs = memos
    return found


def _file(
    found: Scan, path: str, rel: str, info: os.stat_result, limit: int, put: Callable[[str, bytes], None]
) -> None:
    """Read the regular file `rel` (at `path`) not known by its stat, into `found`."""
    perms = stat.S_IMODE(info.st_mode)
    size = info.st_size
    if size > limit:
        found.big.append(rel)
        found.entries[rel] = Entry(kind="big", mode=perms, ref="", size=size)
        return
    try:
        digest = _read(path, limit, put)
    except OSError as exc:  # from `put`: the copy could not be kept (the disk is full)
        raise KeepFailed(rel, exc) from exc
    if digest is None:
        found.unreadable.append(rel)
        found.entries[rel] = Entry(kind="unreadable", mode=perms, ref="", size=size)
        return
    found.read += 1
    found.entries[rel] = Entry(kind="file", mode=perms, ref=digest, size=size)


def _read(path: str, limit: int, put: Callable[[str, bytes], None]) -> str | None:
    """The sha256 of the file at `path` (not followed, if it became a link), its bytes
    handed to `put`; None when it cannot be read, or grew past `limit` meanwhile."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with open(fd, "rb", closefd=True) as file:
            data = file.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    digest = hashlib.sha256(data).hexdigest()
    put(digest, data)
    return digest
