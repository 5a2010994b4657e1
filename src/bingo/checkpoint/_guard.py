"""Two bingo processes in one project, and a restore cut short.

Owns the project's lock (`checkpoints/locks/<project digest>.lock`, an flock: shared by each
turn while it runs, exclusive for a restore, so a rewind never runs while another process's
turn writes the project and a turn never starts in the middle of a restore; the kernel drops
it when the process dies, SIGKILL included) and the restore's journal beside it (written
before the first file is touched, removed after the last: found by a later process, it says a
restore was cut short). It does not restore anything (`_restore`) nor decide what is said.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from ..kernel.atomic import write_atomic

__all__ = ["Guard", "Journal"]

_POLL = 0.05
"""Seconds between two tries of a taken lock (a restore lasts well under a second)."""


class Journal(msgspec.Struct, frozen=True):
    """A restore under way: to before `target` (its label) of `session`, after the rewind's
    own checkpoint `undo` (its label)."""

    session: str
    target: str
    undo: str


class Guard:
    """The lock and the journal of `project`, under `root`."""

    __slots__ = ("_journal", "_lock")

    def __init__(self, root: Path, project: Path) -> None:
        name = hashlib.sha256(str(project).encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self._lock = root / "locks" / f"{name}.lock"
        self._journal = root / "locks" / f"{name}.restoring"

    def _open(self) -> int:
        self._lock.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self._lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def shared(self, seconds: float) -> Callable[[], None] | None:
        """Hold the lock shared (a turn) until the answer is called; waits up to `seconds`
        for a restore to end; None when it did not.

        Raises:
            OSError: the lock file cannot be opened."""
        return self._take(fcntl.LOCK_SH, seconds)

    def exclusive(self) -> Callable[[], None] | None:
        """Hold the lock alone (a restore) until the answer is called; None at once when a
        turn (of any process) holds it.

        Raises:
            OSError: the lock file cannot be opened."""
        return self._take(fcntl.LOCK_EX, 0.0)

    def _take(self, kind: int, seconds: float) -> Callable[[], None] | None:
        """Raises OSError when the lock file cannot be opened at all."""
        fd = self._open()
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, kind | fcntl.LOCK_NB)
                return lambda: os.close(fd)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return None
                time.sleep(_POLL)
            except OSError:
                os.close(fd)
                return None

    def begin(self, journal: Journal) -> None:
        """A restore starts (call with the lock held alone).

        Raises:
            OSError: the journal cannot be written (then nothing is restored).
        """
        self._journal.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self._journal, msgspec.json.encode(journal))

    def end(self) -> None:
        """The restore finished."""
        with contextlib.suppress(OSError):
            self._journal.unlink()

    def cut_short(self) -> Journal | None:
        """The restore a process began and never finished (it was killed), once: the journal
        is removed as it is read. None when there is none, or a live process restores now."""
        if not self._journal.exists():
            return None
        try:
            release = self.exclusive()
        except OSError:
            return None
        if release is None:
            return None  # a live restore: its journal is its own
        try:
            try:
                journal = msgspec.json.decode(self._journal.read_bytes(), type=Journal)
            except (OSError, msgspec.DecodeError):
                journal = Journal(session="", target="an earlier prompt", undo="/rewind")
            self.end()
            return journal
        finally:
            release()
