"""The session store: every session's frames, kept durably in one SQLite file.

Owns the file (`~/.bingo/data/sessions.db` by the CLI's choice), its schema, the session
table (id, project, times, title, frame count) and the append-only frame log. A frame is
kept as the kernel's own `encode_frame` bytes; this module never looks inside one except
to read its kind and, for the first prompt, a title.

Durability. The file is in WAL mode with `synchronous=NORMAL` and every append is its own
transaction: once `append` returns, the frame is in the WAL, and a process killed with
SIGKILL (at any instant, mid-append included) loses nothing that was committed and never
leaves a half-written frame. Power loss or an OS crash may lose the last few commits (the
WAL is fsynced at checkpoints, not at every commit) but never corrupts the file.
`synchronous="FULL"` buys power-loss durability per commit at the cost of an fsync per
append; `bench/store.py` measures both.

Concurrency. Two bingo processes in one project may share the file: each opens with a
busy timeout, and an append takes the write lock up front (`BEGIN IMMEDIATE`) so its
sequence number and the session's counters move together. A session has one writer: a run
claims the session it continues (`claim`), and `create` claims the session it makes, with a
lock per session that the process's death drops (`_claim.py`, ADR-0029); a second run is
refused in words. `append` itself does not check the claim: the file stays shareable.

It does not decide which session a run continues (the CLI does, with `latest` and
`find`), nor rebuild a model history from frames (`kernel.frames.history` does).
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Literal

import msgspec

from ..kernel.errors import SessionError
from ..kernel.frames import Frame, PromptFrame, decode_frame, encode_frame
from ._claim import Claims

__all__ = ["SessionInfo", "SessionStore", "new_session_id"]

# Seconds a statement waits for another bingo process holding the write lock.
_BUSY_TIMEOUT = 5.0
# A session's title is its first prompt's first line, cut to this many characters.
_TITLE_LENGTH = 60

_SCHEMA_VERSION = 1
_ID_ATTEMPTS = 5  # a duplicate id (same second, same random suffix) is retried this often
_LIST_HINT = "list this project's sessions with bingo -p /sessions"
_LOCKS = "session-locks"
"""The directory beside the file that holds one lock file per session being written."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id       TEXT PRIMARY KEY,
    project  TEXT NOT NULL,
    created  REAL NOT NULL,
    updated  REAL NOT NULL,
    title    TEXT NOT NULL DEFAULT '',
    frames   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_by_project ON sessions (project, updated);
CREATE TABLE IF NOT EXISTS frames (
    session  TEXT NOT NULL REFERENCES sessions (id),
    seq      INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    time     REAL NOT NULL,
    data     BLOB NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;
"""

_APPEND_COUNT = """
UPDATE sessions
   SET frames = frames + 1,
       updated = ?,
       title = CASE WHEN title = '' THEN ? ELSE title END
 WHERE id = ?
RETURNING frames
"""


class SessionInfo(msgspec.Struct, frozen=True):
    """One session as `/sessions` lists it. Times are UTC."""

    id: str
    project: str
    created: dt.datetime
    updated: dt.datetime
    title: str
    frames: int


def new_session_id() -> str:
    """A short id that sorts by creation time: `20250314-092653-a1f3` (UTC)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{os.urandom(2).hex()}"


class SessionStore:
    """Sessions and their frames in one SQLite file (created, with its directory, if absent).

    May be shared between threads (a lock serialises calls), so the turn loop may hand
    appends to `asyncio.to_thread`; other processes open their own store on the same file.

    Raises:
        SessionError: the file cannot be opened or is not a session store.
    """

    def __init__(
        self,
        path: Path,
        *,
        id_factory: Callable[[], str] | None = None,
        clock: Callable[[], float] | None = None,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
    ) -> None:
        self._path = path
        self._new_id = id_factory or new_session_id
        self._clock = clock or time.time
        self._lock = threading.Lock()
        self._claims = Claims(path.parent / _LOCKS)
        self._conn = self._open(synchronous)

    # --- lifetime --------------------------------------------------------------------

    def _open(self, synchronous: str) -> sqlite3.Connection:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, not {synchronous!r}")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(
                f"cannot open the session store {self._path}: {exc.strerror or exc}",
                "check that its directory can be created and written",
            ) from exc
        conn: sqlite3.Connection | None = None
        try:
            # isolation_level=None: autocommit, so each transaction is exactly the one
            # we open; check_same_thread=False: the lock below serialises every use.
            conn = sqlite3.connect(self._path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT * 1000)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError("it cannot be put in WAL mode")
            conn.execute(f"PRAGMA synchronous = {synchronous}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version > _SCHEMA_VERSION:
                    raise SessionError(
                        f"the session store {self._path} was written by a newer bingo",
                        "upgrade bingo, or move the file aside to start afresh",
                    )
                _create_schema(conn)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise SessionError(
                f"cannot open the session store {self._path}: {exc}",
                "check the file's permissions, or move it aside and bingo starts a new one",
            ) from exc
        except SessionError:
            if conn is not None:
                conn.close()
            raise
        return conn

    def close(self) -> None:
        """Close the file and let every claimed session go. Every append already returned
        is durable; this adds nothing."""
        self._claims.release_all()
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self._path

    # --- sessions --------------------------------------------------------------------

    def create(self, project: str) -> str:
        """Start a new, empty session of `project`, claimed by this store (`claim`) before
        any other run can see it; its id.

        Raises:
            SessionError: the file cannot be written, or the id's lock cannot be taken.
        """
        now = self._clock()
        for _ in range(_ID_ATTEMPTS):
            session = self._new_id()
            self._claims.claim(session)
            with self._mapped("start a session"):
                try:
                    self._conn.execute(
                        "INSERT INTO sessions (id, project, created, updated) VALUES (?, ?, ?, ?)",
                        (session, project, now, now),
                    )
                except sqlite3.IntegrityError:
                    self._claims.release(session)
                    continue
            return session
        raise SessionError(
            f"cannot start a session in {self._path}: every new id was already taken",
            "try again",
        )

    def claim(self, session: str) -> None:
        """Make this store `session`'s one writer until `release` or `close` (or the
        process's end, SIGKILL included); a no-op when it is already.

        Raises:
            SessionError: another run (or another store of this one) writes it.
        """
        self._claims.claim(session)

    def release(self, session: str) -> None:
        """Stop being `session`'s writer (a no-op when this store is not)."""
        self._claims.release(session)

    def latest(self, project: str) -> str | None:
        """The most recently updated session of `project`, if it has any."""
        with self._mapped("read sessions"):
            row = self._conn.execute(
                "SELECT id FROM sessions WHERE project = ? ORDER BY updated DESC, rowid DESC LIMIT 1",
                (project,),
            ).fetchone()
        return None if row is None else str(row[0])

    def find(self, id_or_prefix: str, project: str | None = None) -> str:
        """The session whose id is `id_or_prefix`, or the only one starting with it; with
        `project`, the only one of that project starting with it, when it has any.

        Raises:
            SessionError: no session matches, or more than one does.
        """
        if not id_or_prefix:
            raise SessionError("no session id given", _LIST_HINT)
        found: list[str] = []
        with self._mapped("read sessions"):
            # Ids with this prefix sort contiguously from the prefix itself onward.
            if project is not None:
                rows = self._conn.execute(
                    "SELECT id FROM sessions WHERE id >= ? AND project = ? ORDER BY id LIMIT 2", (id_or_prefix, project)
                ).fetchall()
                found = [str(row[0]) for row in rows if str(row[0]).startswith(id_or_prefix)]
            if not found:
                rows = self._conn.execute(
                    "SELECT id FROM sessions WHERE id >= ? ORDER BY id LIMIT 2", (id_or_prefix,)
                ).fetchall()
                found = [str(row[0]) for row in rows if str(row[0]).startswith(id_or_prefix)]
        if found and found[0] == id_or_prefix:
            return id_or_prefix
        if not found:
            raise SessionError(f"no session {id_or_prefix}", _LIST_HINT)
        if len(found) > 1:
            raise SessionError(
                f"more than one session starts with {id_or_prefix}",
                f"give more of the id; {_LIST_HINT}",
            )
        return found[0]

    def info(self, session: str) -> SessionInfo:
        """What `/sessions` would say of `session` (its project included).

        Raises:
            SessionError: no such session.
        """
        with self._mapped("read sessions"):
            row = self._conn.execute(
                "SELECT id, project, created, updated, title, frames FROM sessions WHERE id = ?", (session,)
            ).fetchone()
        if row is None:
            raise SessionError(f"no session {session}", _LIST_HINT)
        return _info(row)

    def sessions(self, project: str) -> list[SessionInfo]:
        """Every session of `project`, the most recently updated first."""
        with self._mapped("read sessions"):
            rows = self._conn.execute(
                "SELECT id, project, created, updated, title, frames FROM sessions"
                " WHERE project = ? ORDER BY updated DESC, rowid DESC",
                (project,),
            ).fetchall()
        return [_info(row) for row in rows]

    # --- frames ----------------------------------------------------------------------

    def append(self, session: str, frame: Frame) -> None:
        """Add `frame` at the end of `session`. Durable (against process death) on return.

        Raises:
            SessionError: no such session, or the file cannot be written.
        """
        data = encode_frame(frame)
        kind = str(frame.__struct_config__.tag)
        title = _title(frame.text or ("[an image]" if frame.images else "")) if isinstance(frame, PromptFrame) else ""
        now = self._clock()
        with self._mapped(f"save to session {session}"):
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(_APPEND_COUNT, (now, title, session)).fetchone()
                if row is None:
                    raise SessionError(f"no session {session}", _LIST_HINT)
                conn.execute(
                    "INSERT INTO frames (session, seq, kind, time, data) VALUES (?, ?, ?, ?, ?)",
                    (session, int(row[0]) - 1, kind, now, data),
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def frames(self, session: str) -> list[Frame]:
        """Every frame of `session`, in the order appended.

        Raises:
            SessionError: no such session, or a frame that cannot be read (none is skipped).
        """
        with self._mapped(f"read session {session}"):
            conn = self._conn
            # One read transaction: the count and the rows are one snapshot.
            conn.execute("BEGIN")
            try:
                count = conn.execute("SELECT frames FROM sessions WHERE id = ?", (session,)).fetchone()
                rows = conn.execute(
                    "SELECT seq, data FROM frames WHERE session = ? ORDER BY seq", (session,)
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        if count is None:
            raise SessionError(f"no session {session}", _LIST_HINT)
        frames: list[Frame] = []
        for expected, (seq, data) in enumerate(rows):
            if seq != expected or not isinstance(data, bytes):
                raise _damaged(session, expected)
            try:
                frames.append(decode_frame(data))
            except (msgspec.DecodeError, RecursionError) as exc:
                # RecursionError: nested deeper than the stack allows, which no frame bingo
                # wrote is (what it keeps came through a bounded decode first).
                raise _damaged(session, expected) from exc
        if len(frames) != int(count[0]):
            raise _damaged(session, len(frames))
        return frames

    # --- the one place sqlite3's errors are mapped --------------------------------------

    @contextmanager
    def _mapped(self, action: str) -> Generator[None]:
        with self._lock:
            try:
                yield
            except sqlite3.ProgrammingError as exc:
                # Raised for a use after close(): a bug of the caller, told in words.
                raise SessionError(f"cannot {action}: the session store is closed", "this is a bug in bingo") from exc
            except sqlite3.Error as exc:
                raise SessionError(
                    f"cannot {action} in {self._path}: {exc}",
                    "check the disk and the file's permissions, then try again",
                ) from exc


def _create_schema(conn: sqlite3.Connection) -> None:
    # executescript would COMMIT the open transaction first, so run statement by statement.
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _title(text: str) -> str:
    lines = text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if len(first) <= _TITLE_LENGTH else first[: _TITLE_LENGTH - 1] + "…"


def _info(row: tuple[object, ...]) -> SessionInfo:
    return SessionInfo(
        id=str(row[0]),
        project=str(row[1]),
        created=_utc(float(str(row[2]))),
        updated=_utc(float(str(row[3]))),
        title=str(row[4]),
        frames=int(str(row[5])),
    )


def _utc(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.UTC)


def _damaged(session: str, seq: int) -> SessionError:
    return SessionError(
        f"session {session} is damaged at frame {seq}",
        "it cannot be continued; start a new session",
    )
