"""Where checkpoints are kept: `~/.bingo/data/checkpoints/`.

Owns the content-addressed objects (`objects/ab/cdef…`, one file per distinct content,
named by its sha256: a file that is the same in every checkpoint is kept once), the index of
checkpoints in one SQLite file (`checkpoints.db`: each checkpoint's session, project, when,
the frame its prompt begins at, its label and its manifest's digest; each object's size; each
project's stat cache) and the bound (`prune`: the oldest sessions' checkpoints go first, then
the objects nothing refers to; never while another look holds the store, `shared`, and each
prune counted, `generation`, so that another process forgets the digests it remembers). An object is written to a temporary name and renamed, so it
is whole or absent; it is not fsynced (a checkpoint is a convenience, and `get` checks every
object's digest before it is restored from). It does not look at the project (`_scan`) nor
restore (`_restore`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import msgspec

from ..kernel.errors import SessionError
from ._scan import Entry, keyed, unkeyed

__all__ = ["Busy", "CheckpointStore", "Point"]

_BUSY_TIMEOUT = 5.0
"""Seconds a statement waits for another bingo process holding the write lock."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    session  TEXT NOT NULL,
    project  TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    turn     INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    label    TEXT NOT NULL,
    time     REAL NOT NULL,
    manifest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS checkpoints_by_session ON checkpoints (session, id);
CREATE TABLE IF NOT EXISTS objects (
    digest   TEXT PRIMARY KEY,
    size     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS caches (
    project  TEXT PRIMARY KEY,
    data     BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS generation (
    one      INTEGER PRIMARY KEY CHECK (one = 1),
    count    INTEGER NOT NULL
);
INSERT OR IGNORE INTO generation (one, count) VALUES (1, 0);
"""

_POLL = 0.02
"""Seconds between two tries of the store while another bingo prunes it."""


class Busy(Exception):
    """Another bingo held the checkpoint store (pruning it) for longer than could be waited."""


_root_decoder = msgspec.msgpack.Decoder(dict[str, str])
_dir_decoder = msgspec.msgpack.Decoder(dict[str, Entry])
_DIRECTORIES_KEPT = 4096
"""Directory objects read kept decoded in memory (a list of points shares most of them)."""


_Value = TypeVar("_Value", Entry, str)


def _encode(listing: dict[str, Entry] | dict[str, str]) -> bytes:
    """A directory's entries, or the directories' objects, as msgpack: names (and links'
    targets) whose bytes are not UTF-8 as `keyed` gives them."""
    try:
        return msgspec.msgpack.encode(listing)
    except UnicodeEncodeError:
        return msgspec.msgpack.encode(
            {
                keyed(name): value
                if isinstance(value, str) or value.kind != "link"
                else msgspec.structs.replace(value, ref=keyed(value.ref))
                for name, value in listing.items()
            }
        )


def _unkeyed(listing: dict[str, _Value]) -> dict[str, _Value]:
    """What `_encode` was given."""
    if not any(name.startswith("\0") for name in listing) and not any(
        isinstance(value, Entry) and value.kind == "link" and value.ref.startswith("\0") for value in listing.values()
    ):
        return listing
    return {
        unkeyed(name): value
        if not isinstance(value, Entry) or value.kind != "link"
        else msgspec.structs.replace(value, ref=unkeyed(value.ref))
        for name, value in listing.items()
    }


@dataclass(frozen=True, slots=True)
class Point:
    """One checkpoint: before prompt `label` of `session` (`kind` "prompt"), or before a
    rewind (`kind` "rewind"); `seq` is how many frames the session held then."""

    id: int
    session: str
    seq: int
    turn: int
    kind: str
    label: str
    time: float
    manifest: str


class CheckpointStore:
    """The checkpoints under `root` (created if absent). May be shared between threads: a
    lock serialises the database; other processes open their own.

    Raises:
        SessionError: the directory or its database cannot be opened.
    """

    __slots__ = ("_conn", "_dirs", "_lock", "_pending", "_read", "objects", "root")

    def __init__(self, root: Path) -> None:
        self.root = root
        self.objects = root / "objects"
        self._lock = threading.Lock()
        self._dirs: dict[str, tuple[dict[str, Entry], str]] = {}
        """Each directory's entries as last kept, and their object's digest."""
        self._read: dict[str, dict[str, Entry]] = {}
        """Directory objects read, by digest."""
        self._pending: list[tuple[str, int]] = []
        """Objects written and not yet counted in the index (`flush`)."""
        try:
            self.objects.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                root / "checkpoints.db", timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise SessionError(
                f"cannot open the checkpoints in {root}: {exc}", "check the disk and the directory's permissions"
            ) from exc
        self._conn = conn

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.flush()
        with self._lock:
            self._conn.close()

    @contextmanager
    def _db(self) -> Generator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise OSError(f"the checkpoint index: {exc}") from exc

    # --- objects -------------------------------------------------------------------------

    def _path(self, digest: str) -> Path:
        return self.objects / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self._path(digest).exists()

    def put(self, digest: str, data: bytes) -> None:
        """Keep `data` (whose sha256 is `digest`) once.

        Raises:
            OSError: it cannot be written (the disk is full): nothing half-written is left.
        """
        path = self._path(digest)
        if path.exists():
            return
        path.parent.mkdir(exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open(temp, "wb") as file:
                file.write(data)
            os.replace(temp, path)
        except OSError:
            temp.unlink(missing_ok=True)
            raise
        with self._lock:
            self._pending.append((digest, len(data)))

    def flush(self) -> None:
        """Count the objects written since the last flush (one transaction for them all: a
        first look at a big project writes thousands)."""
        with self._db() as conn:
            pending, self._pending = self._pending, []
            if pending:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.executemany("INSERT OR IGNORE INTO objects (digest, size) VALUES (?, ?)", pending)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    self._pending = pending + self._pending
                    raise

    def get(self, digest: str) -> bytes:
        """The bytes kept under `digest`.

        Raises:
            OSError: there are none, or they are not what was kept.
        """
        data = self._path(digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise OSError(f"the checkpoint's copy {digest[:12]} is damaged")
        return data

    def put_manifest(self, entries: dict[str, Entry]) -> str:
        """Keep a checkpoint's list of files: one object per directory (its names' entries),
        and one naming each directory's object, its digest the answer. A directory whose
        entries did not change is the object it was, so a turn that changed ten files adds
        a few small objects, not a whole new list."""
        groups: dict[str, dict[str, Entry]] = {}
        for path, entry in entries.items():
            cut = path.rfind("/")
            groups.setdefault(path[: cut + 1], {})[path[cut + 1 :]] = entry
        root: dict[str, str] = {}
        for directory in sorted(groups):
            group = groups[directory]
            known = self._dirs.get(directory)
            if known is not None and known[0] == group:
                root[directory] = known[1]
                continue
            data = _encode(dict(sorted(group.items())))
            digest = hashlib.sha256(data).hexdigest()
            self.put(digest, data)
            self._dirs[directory] = (group, digest)
            root[directory] = digest
        data = zlib.compress(_encode(root), 1)
        digest = hashlib.sha256(data).hexdigest()
        self.put(digest, data)
        return digest

    def _listing(self, digest: str) -> dict[str, str]:
        try:
            listing = _root_decoder.decode(zlib.decompress(self.get(digest)))
        except (zlib.error, msgspec.DecodeError) as exc:
            raise OSError(f"the checkpoint's list of files {digest[:12]} is damaged") from exc
        return _unkeyed(listing)

    def _directory(self, digest: str) -> dict[str, Entry]:
        found = self._read.get(digest)
        if found is None:
            try:
                found = _unkeyed(_dir_decoder.decode(self.get(digest)))
            except msgspec.DecodeError as exc:
                raise OSError(f"the checkpoint's list of files {digest[:12]} is damaged") from exc
            if len(self._read) >= _DIRECTORIES_KEPT:
                self._read.clear()
            self._read[digest] = found
        return found

    def manifest(self, digest: str) -> dict[str, Entry]:
        """A checkpoint's list of files, every path relative to the project.

        Raises:
            OSError: it, or one of its directories' objects, is gone or damaged.
        """
        entries: dict[str, Entry] = {}
        for directory, listed in self._listing(digest).items():
            for name, entry in self._directory(listed).items():
                entries[directory + name] = entry
        return entries

    # --- checkpoints ---------------------------------------------------------------------

    def add(self, *, session: str, project: str, seq: int, turn: int, kind: str, label: str, manifest: str) -> Point:
        self.flush()
        now = time.time()
        with self._db() as conn:
            cursor = conn.execute(
                "INSERT INTO checkpoints (session, project, seq, turn, kind, label, time, manifest)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session, project, seq, turn, kind, label, now, manifest),
            )
        return Point(int(cursor.lastrowid or 0), session, seq, turn, kind, label, now, manifest)

    def points(self, session: str) -> list[Point]:
        """`session`'s checkpoints, the newest first."""
        with self._db() as conn:
            rows = conn.execute(
                "SELECT id, session, seq, turn, kind, label, time, manifest FROM checkpoints"
                " WHERE session = ? ORDER BY id DESC",
                (session,),
            ).fetchall()
        return [
            Point(int(r[0]), str(r[1]), int(r[2]), int(r[3]), str(r[4]), str(r[5]), float(r[6]), str(r[7]))
            for r in rows
        ]

    def latest(self, project: str) -> str | None:
        """The manifest of `project`'s newest checkpoint, if it has one."""
        with self._db() as conn:
            row = conn.execute(
                "SELECT manifest FROM checkpoints WHERE project = ? ORDER BY id DESC LIMIT 1", (project,)
            ).fetchone()
        return None if row is None else str(row[0])

    def cache(self, project: str) -> bytes | None:
        with self._db() as conn:
            row = conn.execute("SELECT data FROM caches WHERE project = ?", (project,)).fetchone()
        return None if row is None else bytes(row[0])

    def keep_cache(self, project: str, data: bytes) -> None:
        with self._db() as conn:
            conn.execute("INSERT OR REPLACE INTO caches (project, data) VALUES (?, ?)", (project, data))

    # --- other processes -----------------------------------------------------------------

    @contextmanager
    def shared(self, stop: Callable[[], bool]) -> Generator[None]:
        """Hold the store for a look and its record (shared with every other bingo's): no
        prune removes an object meanwhile. While a prune holds it, waits until `stop()`.

        Raises:
            Busy: `stop()` said so first.
            OSError: the lock file cannot be opened."""
        fd = os.open(self.root / "store.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if stop():
                        raise Busy from None
                    time.sleep(_POLL)
            yield
        finally:
            os.close(fd)

    def generation(self) -> int:
        """How many times objects were removed from this store, by any process: a digest
        this process remembers from before a change of it may name a removed object."""
        with self._db() as conn:
            return int(conn.execute("SELECT count FROM generation").fetchone()[0])

    def forget(self) -> None:
        """Drop what this process remembers of objects (another process removed some)."""
        self._dirs.clear()
        self._read.clear()

    # --- the bound -----------------------------------------------------------------------

    def size(self) -> int:
        """Bytes of every object kept."""
        self.flush()
        with self._db() as conn:
            return int(conn.execute("SELECT COALESCE(SUM(size), 0) FROM objects").fetchone()[0])

    def prune(self, max_bytes: int, keep: str) -> list[str] | None:
        """Drop the oldest sessions' checkpoints (never `keep`'s newest) until what is kept
        fits in `max_bytes`; the sessions whose checkpoints went (all or some). None, having
        done nothing, while another look holds the store (`shared`): its copies may be
        named by no checkpoint yet, so the next record tries again.

        Raises:
            OSError: the lock file cannot be opened."""
        fd = os.open(self.root / "store.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return None
            return self._prune(max_bytes, keep)
        finally:
            os.close(fd)

    def _prune(self, max_bytes: int, keep: str) -> list[str]:
        dropped: list[str] = []
        while self.size() > max_bytes:
            with self._db() as conn:
                row = conn.execute(
                    "SELECT session FROM checkpoints WHERE session != ? GROUP BY session ORDER BY MAX(id) LIMIT 1",
                    (keep,),
                ).fetchone()
                if row is not None:
                    conn.execute("DELETE FROM checkpoints WHERE session = ?", (str(row[0]),))
                    dropped.append(str(row[0]))
                else:
                    oldest = conn.execute(
                        "SELECT id FROM checkpoints WHERE session = ? ORDER BY id LIMIT 1 OFFSET 0", (keep,)
                    ).fetchone()
                    count = conn.execute("SELECT COUNT(*) FROM checkpoints WHERE session = ?", (keep,)).fetchone()
                    if oldest is None or int(count[0]) <= 1:
                        break
                    conn.execute("DELETE FROM checkpoints WHERE id = ?", (int(oldest[0]),))
                    if keep not in dropped:
                        dropped.append(keep)
            if not self._collect():
                continue
        return dropped

    def _collect(self) -> int:
        """Remove the objects no checkpoint refers to (nor the stat caches); how many."""
        with self._db() as conn:
            manifests = [str(r[0]) for r in conn.execute("SELECT DISTINCT manifest FROM checkpoints").fetchall()]
            known = [str(r[0]) for r in conn.execute("SELECT digest FROM objects").fetchall()]
        live: set[str] = set(manifests)
        for digest in manifests:
            try:
                listing = self._listing(digest)
                live.update(listing.values())
                for listed in listing.values():
                    live.update(e.ref for e in self._directory(listed).values() if e.kind == "file")
            except OSError:
                continue
        gone = [d for d in known if d not in live]
        for digest in gone:
            self._path(digest).unlink(missing_ok=True)
        with self._db() as conn:
            conn.executemany("DELETE FROM objects WHERE digest = ?", [(d,) for d in gone])
            if gone:
                conn.execute("UPDATE generation SET count = count + 1")
            # A cached digest may name an object just removed: every cache is read afresh.
            conn.execute("DELETE FROM caches")
        self._dirs.clear()  # a directory object named there may be gone
        return len(gone)
