"""One look at a project's files: what a checkpoint records of each, read as little as can be.

Owns the walk (no link followed, no ignored directory entered, `.git` never, the project's
own `.bingo/` never: bingo writes its "always" answers and trust there, which a rewind must
not undo), what each path is (`Entry`: a regular file's bytes by digest and its mode, a
link's target, or why it was not recorded), and the stat cache that makes a checkpoint
incremental: a file whose size, mtime, ctime and inode are what the last look saw is not
read again; and a directory the last look of this process saw whole and settled is confirmed
in bulk (`_Dir`: one `lstat` per name, the signatures compared by column). It does not keep
bytes (`put` does, given by the store) nor restore anything. It is over 480 lines because
the walk, its two ways of confirming a directory in bulk and the look name by name share
the one loop's state (the stack, this look's and the last look's directories, what is found).
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import msgspec

from . import _find
from ._ignore import Ignores, read_spec

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["Entry", "KeepFailed", "Scan", "StatCache", "Stopped", "keyed", "scan", "unkeyed"]

_RACY_NS = 50_000_000
"""A file modified this close (ns) before a look began may be modified again within the
same timestamp tick without its mtime moving: its digest is not cached (git's racy-clean)."""
_COARSE_NS = 2_000_000_000
"""The same for a timestamp in whole seconds, as a file system that keeps no finer ones
writes it (ext4 with small inodes, FAT's two seconds, some network file systems): a write in
the same second or two leaves it as it was."""
_SECOND = 1_000_000_000
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


def keyed(name: str) -> str:
    """`name` as msgpack can hold it: itself, or, when it holds bytes that are not UTF-8 (a
    file name's surrogate escapes), a NUL and its bytes in hex (no file name holds a NUL)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "\0" + os.fsencode(name).hex()
    return name


def unkeyed(key: str) -> str:
    """The name `keyed` gave `key` for."""
    return os.fsdecode(bytes.fromhex(key[1:])) if key.startswith("\0") else key


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

    __slots__ = ("_serial", "dirs", "flat", "left_out", "rows", "since", "specs")

    def __init__(self, rows: dict[str, _Cached] | None = None) -> None:
        self.rows: dict[str, _Cached] = rows or {}
        self.dirs: dict[str, _Dir] = {}
        self.specs: dict[str, tuple[tuple[int, int, int, int], int, GitIgnoreSpec | None]] = {}
        self._serial = 0
        self.left_out: dict[str, list[int]] = {}
        """Each rule file's lines RE2 cannot match, left out (`read_spec`), once parsed."""
        self.since: int | None = None
        """When the look that made `dirs` began (`time.time_ns()`)."""
        self.flat: tuple[list[_Dir], dict[str, Entry], list[str], dict[str, _Cached]] | None = None
        """The last look that confirmed every directory in bulk: its directories in order, and
        the entries, ignored names and stat-cache rows they gave (the next such look, taking
        the same directories, takes these as they are instead of putting them together)."""

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
            spec, left = read_spec(path)
            known = (key, self._serial, spec)
            self.specs[path] = known
            if left:
                self.left_out[path] = left
            else:
                self.left_out.pop(path, None)
        return above.below(directory, known[2], known[1])

    def encode(self) -> bytes:
        try:
            return msgspec.msgpack.encode(self.rows)
        except UnicodeEncodeError:  # a path whose bytes are not UTF-8
            return msgspec.msgpack.encode({keyed(path): row for path, row in self.rows.items()})

    @classmethod
    def decode(cls, data: bytes) -> StatCache:
        try:
            rows = msgspec.msgpack.decode(data, type=dict[str, _Cached])
        except msgspec.DecodeError:
            return cls()
        if any(path.startswith("\0") for path in rows):
            rows = {unkeyed(path): row for path, row in rows.items()}
        return cls(rows)


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
    generation: int = 0
    """The store's generation the look was taken in (`CheckpointStore.generation`)."""
    confirmed: int = 0
    """Directories confirmed in bulk, as the last look saw them (no name looked at one by one)."""
    by_find: int = 0
    """Of those, the directories confirmed by GNU `find`'s output (no `lstat` from Python)."""


class Stopped(Exception):
    """The look was told to stop (it took too long)."""


class KeepFailed(Exception):
    """A file's copy could not be kept: `path` (relative) and the `error`."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(path)
        self.path = path
        self.error = error


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class _Dir:
    """What one directory held at a look, so that the next look can confirm it in bulk: the
    directory's `key` (mtime, inode, the rules in force), each name's ignore decision, and,
    when it and every file in it were settled (`names` not None), the names it records (its
    first `files`) and then the directories it enters, with their stat signatures by column
    (`columns`: each file's mtime, ctime, size, inode and type and permissions; `dir_columns`:
    each directory still a directory, the same one, what is in it being its own look's to
    confirm), the entries, stat-cache rows and ignored names they gave, and each directory's
    path and prefix (`subdirs`)."""

    __slots__ = (
        "coarse",
        "columns",
        "decided",
        "devs",
        "dir_columns",
        "dir_stats",
        "entries",
        "files",
        "gitignore",
        "ignored",
        "key",
        "names",
        "rows",
        "stats",
        "subdir_names",
        "subdirs",
    )

    def __init__(self, key: tuple[int, int, tuple[int, ...]], decided: dict[str, bool], gitignore: bool) -> None:
        self.key = key
        self.decided = decided
        self.gitignore = gitignore
        self.names: list[str] | None = []
        self.files = 0
        self.columns: list[list[int]] = []
        self.dir_columns: list[list[int]] = []
        self.entries: dict[str, Entry] = {}
        self.rows: dict[str, _Cached] = {}
        self.ignored: list[str] = []
        self.subdirs: list[tuple[str, str]] = []
        self.subdir_names: list[str] = []
        self.stats: list[os.stat_result] = []
        """While the directory is looked at name by name: its files' stats (then `columns`)."""
        self.dir_stats: list[os.stat_result] = []
        self.devs: frozenset[int] = frozenset()
        """The devices of the directory and of the directories it enters (`_find`'s output
        stands for it only when all are local)."""
        self.coarse = False
        """Whether a ctime in it is a whole second (then `_find`'s output cannot stand for it)."""

    def seal(self, settled: bool, own: os.stat_result) -> None:
        """The look at it (whose own stat is `own`) is over: keep the signatures by column,
        or nothing to confirm when it was not `settled` or something in it cannot be confirmed."""
        if self.names is None or not settled:
            self.names, self.entries, self.rows, self.ignored, self.subdirs = None, {}, {}, [], []
            self.subdir_names = []
            if not settled:
                self.decided = {}
        else:
            self.files = len(self.names)
            self.names += self.subdir_names
            self.columns = [list(map(get, self.stats)) for get in _COLUMNS]
            self.dir_columns = [list(map(get, self.dir_stats)) for get in _DIR_COLUMNS]
            self.devs = frozenset([own.st_dev, *(info.st_dev for info in self.dir_stats)])
            self.coarse = not own.st_ctime_ns % _SECOND or any(
                not ctime % _SECOND for ctime in (*self.columns[1], *(info.st_ctime_ns for info in self.dir_stats))
            )
        self.stats, self.dir_stats = [], []

    def confirm(self, stats: list[os.stat_result]) -> bool:
        """Whether `stats` (of `names`, in order) are what they were."""
        files = self.files
        head = stats[:files]
        tail = stats[files:]
        return all(list(map(get, head)) == column for get, column in zip(_COLUMNS, self.columns, strict=True)) and all(
            list(map(get, tail)) == column for get, column in zip(_DIR_COLUMNS, self.dir_columns, strict=True)
        )


_COLUMNS: tuple[Callable[[os.stat_result], int], ...] = tuple(
    operator.attrgetter(name) for name in ("st_mtime_ns", "st_ctime_ns", "st_size", "st_ino", "st_mode")
)
"""What says a file or link is as it was: its mtime, ctime, size, inode, type and permissions
(compared a column at a time: no tuple made per file)."""
_DIR_COLUMNS: tuple[Callable[[os.stat_result], int], ...] = tuple(
    operator.attrgetter(name) for name in ("st_ino", "st_mode")
)


def scan(
    root: str,
    cache: StatCache,
    put: Callable[[str, bytes], None],
    *,
    max_file_bytes: int,
    stop: Callable[[], bool] = lambda: False,
    skip: frozenset[str] = frozenset(),
    excludes: str | None = None,
) -> Scan:
    """Look at every file under `root` git would not ignore; the bytes of each regular file
    not in `cache` are handed to `put(digest, data)` (the cache is updated in place). A
    directory whose path is in `skip` (bingo's own home, when the project holds it) is not
    entered. `excludes` is git's own excludes file (`core.excludesFile`), whose rules come
    below `.git/info/exclude`'s and every `.gitignore`'s.

    A directory the last look of this process saw whole and settled is confirmed in bulk: by
    GNU `find` (run over every such directory, in parallel) finding nothing in it whose ctime
    is after that look began (`_find`); else by one `lstat` of each name it recorded or
    entered, compared as a list of signatures with what they were. Either way its entries are
    taken as they were, without a Python step per file. Anything else (a name added, removed
    or renamed moves the directory's mtime and ctime; a write, chmod or replacement moves a
    file's signature and ctime) is looked at name by name.

    Raises:
        Stopped: `stop()` said so, between two directories.
        OSError: the project's own directory cannot be listed.
    """
    started = time.time_ns()
    settled = started - _RACY_NS
    found = Scan()
    seen: dict[str, _Cached] = {}
    memos: dict[str, _Dir] = {}
    ignores = cache.rules("", excludes, Ignores()) if excludes is not None else Ignores()
    ignores = cache.rules("", os.path.join(root, ".git", "info", "exclude"), ignores)
    top = os.stat(root)
    stack: list[tuple[str, str, Ignores, os.stat_result | None]] = [(root, "", ignores, top)]
    unchanged = _unchanged(root, cache, started, stop)
    first = True
    taken: list[_Dir] = []
    """Directories confirmed in bulk, in order, whose entries are not yet in `found`."""
    whole = True
    """Whether every directory so far was confirmed in bulk."""
    while stack:
        if stop():
            # What was read so far is not read again: a project too big for one look's
            # time is recorded over the next turns' looks.
            _gather(found, seen, taken)
            cache.rows.update(seen)
            raise Stopped
        directory, prefix, above, own = stack.pop()
        memo = cache.dirs.get(prefix)
        if (
            memo is not None
            and prefix in unchanged
            # Entered from a directory looked at again, it must be the one the memo is of (a
            # tree moved in keeps its old ctimes); from one `find` confirmed, it is.
            and (own is None or (memo.key[0] == own.st_mtime_ns and memo.key[1] == own.st_ino))
        ):
            ignores = cache.rules(prefix, os.path.join(directory, ".gitignore"), above) if memo.gitignore else above
            if ignores.key == memo.key[2]:
                taken.append(memo)
                stack.extend((path, rel, ignores, None) for path, rel in memo.subdirs)
                memos[prefix] = memo
                found.confirmed += 1
                found.by_find += 1
                first = False
                continue
        if own is None:
            # Entered from a directory `find` confirmed: its own stat was not taken.
            try:
                own = os.lstat(directory)
            except OSError:
                own = None
            if own is None or not stat.S_ISDIR(own.st_mode):
                whole = False
                found.unreadable.append(prefix)
                continue
        dir_mtime, dir_ino = own.st_mtime_ns, own.st_ino
        if memo is not None and memo.names is not None and memo.key[0] == dir_mtime and memo.key[1] == dir_ino:
            ignores = cache.rules(prefix, os.path.join(directory, ".gitignore"), above) if memo.gitignore else above
            if ignores.key == memo.key[2]:
                stats = _lstat_all(directory, memo.names)
                if stats is not None and memo.confirm(stats):
                    taken.append(memo)
                    for (path, rel), info in zip(memo.subdirs, stats[memo.files :], strict=True):
                        stack.append((path, rel, ignores, info))
                    memos[prefix] = memo
                    found.confirmed += 1
                    first = False
                    continue
        # What comes next writes into `found` itself: what was confirmed before goes first.
        whole = False
        _gather(found, seen, taken)
        try:
            listing = list(os.scandir(directory))
        except OSError:
            if first:
                raise
            found.unreadable.append(prefix)
            continue
        first = False
        gitignore = any(e.name == ".gitignore" for e in listing)
        ignores = cache.rules(prefix, os.path.join(directory, ".gitignore"), above) if gitignore else above
        # A directory whose entries and rules are as last time decides its names as then:
        # its mtime moves with every name added, removed or renamed in it.
        key = (dir_mtime, dir_ino, ignores.key)
        made = _Dir(key, memo.decided if memo is not None and memo.key == key else {}, gitignore)
        _look_in(found, seen, made, listing, prefix, ignores, stack, cache.rows, settled, max_file_bytes, put, skip)
        made.seal(_settled(dir_mtime, settled), own)
        memos[prefix] = made
    if whole and cache.flat is not None and cache.flat[0] == taken:
        # The very directories the last look took, in the same order: what they give is
        # what it was, so it is not put together again.
        _, found.entries, found.ignored, seen = cache.flat
    else:
        order = list(taken)
        _gather(found, seen, taken)
        cache.flat = (order, found.entries, found.ignored, seen) if whole else None
    cache.rows = seen
    cache.dirs = memos
    cache.since = started
    return found


def _gather(found: Scan, seen: dict[str, _Cached], taken: list[_Dir]) -> None:
    """Put the entries, ignored names and stat-cache rows of the directories `taken` into
    `found` and `seen`, in order, and empty it."""
    for memo in taken:
        found.entries.update(memo.entries)
        found.ignored.extend(memo.ignored)
        seen.update(memo.rows)
    taken.clear()


def _unchanged(root: str, cache: StatCache, started: int, stop: Callable[[], bool]) -> frozenset[str]:
    """The directories the last look of this process saw whole and settled in which GNU
    `find` sees nothing changed since that look began (none without GNU find, for too few
    names, or on any surprise in its output). Only directories where a ctime cannot be older
    than the change that set it are asked about (`_find`): each on a local file system, with
    fine timestamps, and the clock not put back since."""
    since = cache.since
    if since is None or started < since:
        return frozenset()
    settled = [(prefix, memo) for prefix, memo in cache.dirs.items() if memo.names is not None and not memo.coarse]
    if not _find.worth(sum(len(memo.names or ()) for _, memo in settled)):
        return frozenset()  # the mount table is not read for nothing
    local = _find.local_devices()
    known = [(prefix, memo) for prefix, memo in settled if memo.devs <= local]
    if not known:
        return frozenset()
    paths = [os.path.join(root, prefix[:-1]) if prefix else root for prefix, _ in known]
    # A write just after the look began may be stamped with the kernel's clock tick before it.
    changed = _find.changed(paths, sum(len(memo.names or ()) for _, memo in known), since - _RACY_NS, stop)
    if changed is None:
        return frozenset()
    return frozenset(prefix for n, (prefix, _) in enumerate(known) if n not in changed)


def _settled(mtime_ns: int, settled: int) -> bool:
    """Whether a timestamp is far enough before the look (`settled`: its start less
    `_RACY_NS`) that a later write must move it; a whole-second one needs two seconds."""
    if mtime_ns % 1_000_000_000:
        return mtime_ns < settled
    return mtime_ns < settled + _RACY_NS - _COARSE_NS


def _lstat_all(directory: str, names: list[str]) -> list[os.stat_result] | None:
    """The `lstat` of each of `names` in `directory` (resolved from the directory's own
    descriptor: one path step each, not the whole path), or None when one is gone or the
    directory is no longer a directory."""
    try:
        fd = os.open(directory, _DIRECTORY)
    except OSError:
        return None
    try:
        return list(map(functools.partial(os.lstat, dir_fd=fd), names))
    except OSError:
        return None
    finally:
        os.close(fd)


def _look_in(
    found: Scan,
    seen: dict[str, _Cached],
    made: _Dir,
    listing: list[os.DirEntry[str]],
    prefix: str,
    ignores: Ignores,
    stack: list[tuple[str, str, Ignores, os.stat_result | None]],
    rows: dict[str, _Cached],
    settled: int,
    max_file_bytes: int,
    put: Callable[[str, bytes], None],
    skip: frozenset[str],
) -> None:
    """Look at one directory's `listing` name by name, into `found` and `seen`, pushing the
    directories to enter on `stack`; what a later look can confirm in bulk goes in `made`
    (whose `names` becomes None when something in it cannot be: a file modified too recently
    to trust its stat, one over the bound or unreadable)."""
    decided = made.decided
    entries = found.entries
    for item in listing:
        name = item.name
        if name == ".git" or (not prefix and name == OWN):
            continue
        rel = prefix + name
        try:
            info = item.stat(follow_symlinks=False)
        except OSError:
            found.unreadable.append(rel)
            made.names = None
            continue
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            ignored = decided.get(name)
            if ignored is None:
                ignored = decided[name] = ignores.ignored(rel, True)
            if ignored:
                found.ignored.append(rel + "/")
                made.ignored.append(rel + "/")
            elif item.path not in skip:
                stack.append((item.path, rel + "/", ignores, info))
                made.subdirs.append((item.path, rel + "/"))
                made.subdir_names.append(name)
                made.dir_stats.append(info)
            continue
        ignored = decided.get(name)
        if ignored is None:
            ignored = decided[name] = ignores.ignored(rel, False)
        if ignored:
            found.ignored.append(rel)
            made.ignored.append(rel)
            continue
        if stat.S_ISREG(mode):
            size = info.st_size
            row = rows.get(rel)
            if (
                row is None
                or row.mtime_ns != info.st_mtime_ns
                or row.size != size
                or row.ctime_ns != info.st_ctime_ns
                or row.ino != info.st_ino
            ):
                _file(found, item.path, rel, info, max_file_bytes, put)
                entry = entries[rel]
                if not _settled(info.st_mtime_ns, settled) or entry.kind != "file":
                    made.names = None
                    continue
                row = _Cached(size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, entry.ref)
            else:
                entry = entries[rel] = Entry(kind="file", mode=mode & 0o7777, ref=row.digest, size=size)
            seen[rel] = row
            if made.names is not None:
                made.names.append(name)
                made.stats.append(info)
                made.entries[rel] = entry
                made.rows[rel] = row
        elif stat.S_ISLNK(mode):
            try:
                target = os.readlink(item.path)
            except OSError:
                found.unreadable.append(rel)
                entries[rel] = Entry(kind="unreadable", mode=stat.S_IMODE(mode), ref="", size=0)
                made.names = None
                continue
            entry = entries[rel] = Entry(kind="link", mode=stat.S_IMODE(mode), ref=target, size=len(target))
            if made.names is not None:
                made.names.append(name)
                made.stats.append(info)
                made.entries[rel] = entry
        # else a FIFO, socket or device: no file a checkpoint can hold


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
