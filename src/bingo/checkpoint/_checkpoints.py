"""A project's checkpoints, as a run takes and restores them.

Owns taking one (`look` at the project, then `record` it under a session: before each
prompt's turn, and before a rewind), what is said of it (one line per way it fell short: not
taken, a file unreadable, a file over the size bound named once per process, older sessions'
checkpoints dropped for the bound), the list of a session's points, and a restore's plan and
its carrying out. Never raises to its caller: a checkpoint that cannot be taken is a line
said, and the turn goes on. It does not decide when (the run does) nor touch the
conversation (the run sets its frames aside).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..kernel.errors import SessionError
from ._guard import Guard, Journal
from ._ignore import excludes_file
from ._restore import Plan, apply, plan
from ._scan import Entry, KeepFailed, Scan, StatCache, Stopped, scan
from ._store import Busy, CheckpointStore, Point

__all__ = ["MAX_BYTES", "MAX_FILE_BYTES", "Checkpoints", "Journal", "Looked", "named"]

MAX_BYTES = 2 << 30
"""`checkpoints.maxBytes`' default: 2 GiB of distinct content across every project."""
MAX_FILE_BYTES = 50 << 20
"""`checkpoints.maxFileBytes`' default: a file bigger than 50 MiB is not recorded."""
_RECORD_WAIT = 10.0
"""Seconds a record waits for another bingo's prune of the store to end."""
_NAMED = 5
"""Paths one line names before it says how many more."""


def _sized(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def named(paths: list[str]) -> str:
    """`a, b, c` or `a, b, … and 7 more`."""
    shown = ", ".join(paths[:_NAMED])
    return shown if len(paths) <= _NAMED else f"{shown} and {len(paths) - _NAMED} more"


@dataclass(slots=True)
class Looked:
    """A look at the project (`scan`), or None with why not (`failed`)."""

    scan: Scan | None
    failed: str | None = None


class Checkpoints:
    """The checkpoints of `project`, kept under `root` (`~/.bingo/data/checkpoints`);
    `say` tells the person one line."""

    __slots__ = (
        "_big",
        "_cache",
        "_left_said",
        "_checked",
        "_excludes",
        "_generation",
        "_owed",
        "_guard",
        "_last",
        "_lock",
        "_refused",
        "_said_refused",
        "_skip",
        "_store",
        "max_bytes",
        "max_file_bytes",
        "project",
        "root",
        "say",
    )

    def __init__(
        self,
        root: Path,
        project: Path,
        say: Callable[[str], None],
        *,
        max_bytes: int = MAX_BYTES,
        max_file_bytes: int = MAX_FILE_BYTES,
        home: Path | None = None,
        skip: tuple[Path, ...] = (),
    ) -> None:
        self.root = root
        self.project = project
        self.say = say
        self.max_bytes = max_bytes
        self.max_file_bytes = max_file_bytes
        self._store: CheckpointStore | None = None
        self._guard = Guard(root, project)
        self._checked = False
        """Whether this process looked for a restore cut short yet."""
        self._skip = frozenset(str(path) for path in skip)
        """Directories never entered (bingo's own home, should the project hold it)."""
        self._refused: str | None = None
        """Why this project is not checkpointed at all: it is the person's `home` (its
        secrets, every project below it) or the file system's root."""
        if project == home or project == Path(project.anchor):
            self._refused = (
                f"{project} is not checkpointed: run bingo in a project (a directory holding .git or .bingo)"
            )
        self._said_refused = False
        self._cache: StatCache | None = None
        self._big: set[str] = set()
        self._left_said: set[tuple[str, tuple[int, ...]]] = set()
        """The rule files' left-out lines said already (`StatCache.left_out`)."""
        self._last: tuple[dict[str, Entry], str] | None = None
        """The last manifest recorded, and its digest: an unchanged project's is not encoded again."""
        self._generation: int | None = None
        self._owed = False
        """Whether a prune was put off because another bingo was looking."""
        """The store's generation this process's remembered digests belong to."""
        self._excludes: tuple[str | None] | None = None
        """git's excludes file for this project (`core.excludesFile`), once asked."""
        self._lock = threading.Lock()
        """One look at a time: two runs of a process share the stat cache."""

    @property
    def store(self) -> CheckpointStore:
        """Raises SessionError when it cannot be opened."""
        if self._store is None:
            self._store = CheckpointStore(self.root)
        return self._store

    def _flush(self) -> None:
        with contextlib.suppress(OSError):
            self.store.flush()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def look(self, stop: Callable[[], bool] = lambda: False) -> Looked:
        """Look at the project, keeping a copy of every file's bytes not kept yet."""
        if self._refused is not None:
            return Looked(None, self._refused)
        if not self._checked:
            self._checked = True
            cut = self._guard.cut_short()
            if cut is not None:
                self.say(
                    f"a rewind to before {cut.target} was cut short (bingo was stopped during it): each file is as"
                    f" it was or as the rewind would have it; /rewind finishes it (choose {cut.target} again)"
                    f" or undoes it (choose {cut.undo})"
                )
        with self._lock:
            try:
                store = self.store
                if self._cache is None:
                    self._cache = StatCache.decode(store.cache(str(self.project)) or b"")
                if self._excludes is None:
                    self._excludes = (excludes_file(str(self.project)),)
                with store.shared(stop):
                    generation = self._current(store)
                    found = scan(
                        str(self.project),
                        self._cache,
                        store.put,
                        max_file_bytes=self.max_file_bytes,
                        stop=stop,
                        skip=self._skip,
                        excludes=self._excludes[0],
                    )
                found.generation = generation
            except SessionError as exc:
                return Looked(None, exc.message)
            except KeepFailed as exc:
                self._flush()
                self._cache = self._last = None
                return Looked(None, f"{exc.path} could not be kept: {exc.error.strerror or exc.error}")
            except Stopped:
                self._flush()
                return Looked(None, "it took too long (what it read is not read again next time)")
            except Busy:
                return Looked(None, "another bingo held the checkpoints (removing old ones) for too long")
            except OSError as exc:
                return Looked(None, f"{self.project} could not be read: {exc.strerror or exc}")
            except ImportError as exc:  # google-re2, which matches .gitignore rules (ADR-0044)
                return Looked(None, f"a module it needs is missing ({exc}); reinstall bingo with its dependencies")
        if found.unreadable:
            self.say(f"could not read {named(found.unreadable)} for the checkpoint; a rewind leaves them as they are")
        for path, lines in self._cache.left_out.items():
            if (path, tuple(lines)) not in self._left_said:
                self._left_said.add((path, tuple(lines)))
                where = os.path.relpath(path, self.project) if path.startswith(str(self.project)) else path
                many = len(lines) > 1
                numbers = ", ".join(map(str, lines[:_NAMED])) + (" …" if len(lines) > _NAMED else "")
                self.say(
                    f"{where}: {'lines' if many else 'line'} {numbers} cannot be matched (a bracket holding [:)"
                    f" and {'are' if many else 'is'} left out of what checkpoints ignore"
                )
        fresh = [path for path in found.big if path not in self._big]
        if fresh:
            self._big.update(fresh)
            self.say(
                f"not recorded in checkpoints: {named(fresh)} (over checkpoints.maxFileBytes,"
                f" {_sized(self.max_file_bytes)}); a rewind leaves them as they are"
            )
        return Looked(found)

    def _current(self, store: CheckpointStore) -> int:
        """The store's generation (with the store held): when another process removed
        objects since this one's last look, forget every digest remembered since (the stat
        cache keeps only rows whose copy is still there, so the rest are read again)."""
        generation = store.generation()
        if self._generation is not None and generation != self._generation:
            store.forget()
            self._last = None
            if self._cache is not None:
                self._cache.rows = {k: row for k, row in self._cache.rows.items() if store.has(row.digest)}
                self._cache.dirs = {}
        self._generation = generation
        return generation

    def record(self, looked: Scan, *, session: str, seq: int, turn: int, kind: str, label: str) -> Point | None:
        """Keep `looked` as a checkpoint of `session` (which held `seq` frames), then keep
        everything within `max_bytes`; the point, or None (said) when it could not be kept."""
        try:
            store = self.store
            deadline = time.monotonic() + _RECORD_WAIT
            with store.shared(lambda: time.monotonic() > deadline):
                if self._current(store) != looked.generation:
                    # Another process pruned between the look and now: what the look
                    # copied is named by no checkpoint yet, and may be gone.
                    gone = [p for p, e in looked.entries.items() if e.kind == "file" and not store.has(e.ref)]
                    if gone:
                        self._cache = None
                        self.say(
                            f"no checkpoint was taken: another bingo removed copies it needed"
                            f" ({named(gone)}) to keep within checkpoints.maxBytes; the next one reads them again"
                        )
                        return None
                last = self._last
                unchanged = last is not None and (last[0] is looked.entries or last[0] == looked.entries)
                manifest = last[1] if last is not None and unchanged else store.put_manifest(looked.entries)
                self._last = (looked.entries, manifest)
                point = store.add(
                    session=session,
                    project=str(self.project),
                    seq=seq,
                    turn=turn,
                    kind=kind,
                    label=label,
                    manifest=manifest,
                )
                if self._cache is not None and not unchanged:
                    store.keep_cache(str(self.project), self._cache.encode())
            pruned = None
            if (self._owed or not unchanged) and store.size() > self.max_bytes:
                pruned = store.prune(self.max_bytes, session)
                self._owed = pruned is None  # another bingo was looking: the next record tries again
            if pruned is not None:
                dropped = [s for s in pruned if s != session]
                self._cache = self._last = None
                self._generation = None
                self.say(
                    f"checkpoints passed checkpoints.maxBytes ({_sized(self.max_bytes)}):"
                    f" the checkpoints of {len(dropped)} older session{'s' if len(dropped) != 1 else ''} were removed"
                    if dropped
                    else f"checkpoints passed checkpoints.maxBytes ({_sized(self.max_bytes)}):"
                    " this session's oldest were removed"
                )
            return point
        except (SessionError, OSError) as exc:
            self.say(f"no checkpoint was taken: {getattr(exc, 'message', None) or exc}; the turn goes on")
            return None
        except Busy:
            self.say("no checkpoint was taken: another bingo held the checkpoints for too long; the turn goes on")
            return None

    def take(self, *, session: str, seq: int, turn: int, label: str, stop: Callable[[], bool] = lambda: False) -> None:
        """Before a prompt's turn: look and record, saying what fell short."""
        if self._refused is not None:
            if not self._said_refused:
                self._said_refused = True
                self.say(self._refused)
            return
        looked = self.look(stop)
        if looked.scan is None:
            self.say(f"no checkpoint was taken before this prompt: {looked.failed}; the turn goes on")
            return
        self.record(looked.scan, session=session, seq=seq, turn=turn, kind="prompt", label=label)

    def points(self, session: str) -> list[Point]:
        """`session`'s checkpoints, the newest first (none when they cannot be read)."""
        try:
            return self.store.points(session)
        except (SessionError, OSError):
            return []

    def plan(self, now: Scan, point: Point) -> Plan:
        """What restoring `point` would do to the project as `now` saw it.

        Raises:
            OSError: its list of files is gone or damaged.
        """
        return plan(now.entries, self.store.manifest(point.manifest))

    def changed(self, now: Scan, point: Point) -> int:
        """How many recorded files differ between `point` and `now` (-1: unknown)."""
        try:
            made = self.plan(now, point)
        except OSError:
            return -1
        return len(made.create) + len(made.change) + len(made.remove)

    def turn(self, seconds: float) -> Callable[[], None] | None:
        """Hold the project for a turn (shared with other turns; waits up to `seconds` for a
        restore to end): the release, or None (said) when a restore held it all that time."""
        if self._refused is not None:
            return None
        try:
            release = self._guard.shared(seconds)
        except OSError:
            return None  # the store's directory cannot be written: the checkpoint says so
        if release is None:
            self.say("another bingo is rewinding this project and did not finish in time; the turn goes on")
        return release

    def hold(self) -> Callable[[], None] | None:
        """Hold the project alone for a restore: the release, or None when a turn runs.

        Raises:
            OSError: the lock file cannot be opened."""
        return self._guard.exclusive()

    def restore(self, made: Plan, journal: Journal | None = None) -> list[tuple[str, str]]:
        """Carry out `made` (with the project held alone), journaled so that a restore cut
        short is said by the next process; each path not put back, and why.

        Raises:
            OSError: the journal cannot be written (nothing was touched).
        """
        self._guard.begin(journal or Journal(session="", target="an earlier prompt", undo="the rewind"))
        failed = apply(self.project, made, self.store.get)
        self._guard.end()
        return failed
