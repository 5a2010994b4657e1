"""One writer per session: a lock per session that a dead holder cannot keep (ADR-0029).

Owns the session locks: `<dir>/<session>.lock` (dir: `session-locks/` beside the store),
each held with `flock(LOCK_EX | LOCK_NB)` on a descriptor opened close-on-exec, so the lock
is the process's alone (no plugin it starts inherits it) and the kernel drops it when the
process ends, however it ends: SIGKILL leaves no stale lock. The holder's pid is written in
the file, for the refusal to name. A release unlinks the file while still holding it, so a
directory of locks does not grow with every session ever written; a claimer that opened the
file before the unlink, and locks it after, sees that its file is no longer the one at the
path and tries again.

It does not decide when a run claims a session (the store's callers do) and does not check
appends against claims: the store stays a file two processes may append to.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
from pathlib import Path

from ..kernel.errors import SessionError

__all__ = ["Claims"]

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A session id that is a file name as it is (bingo's own ids are); any other is hashed."""
_PID_WIDTH = 10
"""Characters the holder's pid is written in (right-aligned): wider than any Linux pid."""
_PID_BYTES = 32
"""The most of a lock file read for its holder's pid."""


class Claims:
    """The sessions this process holds, each by its own lock file in `directory`. Safe to
    share between threads."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def _path(self, session: str) -> Path:
        name = (
            session
            if _SAFE.fullmatch(session)
            else hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()
        )
        return self._directory / f"{name}.lock"

    def holds(self, session: str) -> bool:
        with self._lock:
            return session in self._held

    def claim(self, session: str) -> None:
        """Hold `session` until `release` (or `release_all`, or this process's end); a no-op
        when held already.

        Raises:
            SessionError: another holder has it (another bingo run, or another session of
                this one), or the lock file cannot be made.
        """
        with self._lock:
            if session in self._held:
                return
            path = self._path(session)
            while True:
                fd = self._open(path, session)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = _holder(fd)
                    os.close(fd)
                    by = (
                        "another bingo run"
                        if holder is None
                        else f"another bingo run (pid {holder})"
                        if holder != os.getpid()
                        else "another session of this run"
                    )
                    raise SessionError(
                        f"session {session} is in use by {by}",
                        "one run writes a session at a time: wait for that one to end, or start a new session",
                    ) from None
                except OSError as exc:
                    os.close(fd)
                    raise _unlockable(session, path, exc) from exc
                if _same_file(fd, path):
                    break
                os.close(fd)  # released (and unlinked) between the open and the lock: again
            # Fixed width, so a pid overwrites any earlier one whole, with no truncate.
            os.pwrite(fd, f"{os.getpid():>{_PID_WIDTH}}\n".encode(), 0)
            self._held[session] = fd

    def _open(self, path: Path, session: str) -> int:
        try:
            self._directory.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            raise _unlockable(session, path, exc) from exc

    def release(self, session: str) -> None:
        """Let `session` go (a no-op when not held)."""
        with self._lock:
            fd = self._held.pop(session, None)
            if fd is not None:
                self._let_go(session, fd)

    def release_all(self) -> None:
        with self._lock:
            held, self._held = self._held, {}
            for session, fd in held.items():
                self._let_go(session, fd)

    def _let_go(self, session: str, fd: int) -> None:
        path = self._path(session)
        try:
            if _same_file(fd, path):
                path.unlink()  # while still held: whoever opened it before sees it is gone
        except OSError:
            pass  # a lock file left behind holds nothing once closed
        finally:
            os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        at_path = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (at_path.st_dev, at_path.st_ino) == (held.st_dev, held.st_ino)


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, _PID_BYTES, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _unlockable(session: str, path: Path, exc: OSError) -> SessionError:
    return SessionError(
        f"cannot lock session {session} ({path}: {exc.strerror or exc})",
        "check that bingo's data directory can be written",
    )
