"""The session a run writes to, created on its first frame.

Owns which stored session a run is (one place per run: `id`), the store it is opened on
(lazily: a slash command that never talks to a model opens no file and leaves no empty
session behind), the turn what is written belongs to, and the bound on the notice frames one
turn keeps. It does not decide which session to continue (`store.continue_session`, the
factory) nor run turns (the kernel).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.errors import SessionError
from ..kernel.frames import CompactionFrame, Frame, NoticeFrame, history
from ..wire import Notice

if TYPE_CHECKING:
    from ..kernel.interfaces import Asker
    from ..kernel.notices import Notices
    from ..store import SessionStore

__all__ = ["NOTICE_FRAMES", "RunSession", "compacted", "take_up"]

NOTICE_FRAMES = 100
"""Notice frames a session keeps of one turn (then one saying so): a turn's real notices fit
many times over, and each plugin's own are limited already (kernel.notices)."""


class RunSession:
    """The session a run writes to: `id` is None until its first frame (or until the run
    continues a stored one). `planned` is the id it is to be created under (an editor's,
    given before its first frame)."""

    __slots__ = ("_noticed", "_noticed_in", "_opening", "_store", "id", "path", "planned", "project", "turn")

    def __init__(self, path: Path, project: str, *, planned: str | None = None) -> None:
        self.path = path
        self.project = project
        self.planned = planned
        self.id: str | None = None
        self.turn = 0
        self._store: SessionStore | None = None
        self._opening: _Opening | None = None
        self._noticed_in: tuple[str, int] | None = None
        self._noticed = 0
        """Notice frames written for the (session, turn) `_noticed_in`."""

    def prepare(self) -> None:
        """For a run about to write its first frame (`-p` with a prompt): begin opening the
        store on a thread, beside the rest of start-up and the first request's making;
        SQLite does its work without the GIL (ADR-0043). `store` waits for it."""
        if self._store is None and self._opening is None:
            self._opening = _Opening(self._open)

    def _open(self) -> SessionStore:
        from ..store import SessionStore

        planned = self.planned
        return SessionStore(self.path, id_factory=(lambda: planned) if planned is not None else None)

    @property
    def store(self) -> SessionStore:
        if self._store is None:
            opening, self._opening = self._opening, None
            # SessionError: the thread's, raised here as if it had opened here.
            self._store = opening.result() if opening is not None else self._open()
        return self._store

    def close(self) -> None:
        opening, self._opening = self._opening, None
        if opening is not None and self._store is None:
            # Joined, so that a store still opening is closed below, never left open.
            with contextlib.suppress(SessionError):
                self._store = opening.result()
        if self._store is not None:
            self._store.close()
            self._store = None

    def ensure(self) -> str:
        if self.id is None:
            self.id = self.store.create(self.project)
        return self.id

    def append(self, frame: Frame) -> None:
        self.store.append(self.ensure(), frame)

    def begin_turn(self, turn: int) -> None:
        self.turn = turn

    def frames(self) -> list[Frame]:
        """The stored session's frames (none before it has any)."""
        return self.store.frames(self.id) if self.id is not None else []

    def notice(self, notice: Notice) -> None:
        if self.id is None:
            return
        if self._noticed_in != (self.id, self.turn):
            self._noticed_in, self._noticed = (self.id, self.turn), 0
        self._noticed += 1
        if self._noticed > NOTICE_FRAMES + 1:
            return
        if self._noticed > NOTICE_FRAMES:
            message = f"turn {self.turn} raised more than {NOTICE_FRAMES} notices; the session keeps no more of them"
            notice = Notice(source="bingo", message=message, level="warning")
        self.store.append(self.id, NoticeFrame(notice=notice, turn=self.turn))


class _Opening:
    """One store being opened on a thread of its own; `result` waits for it."""

    __slots__ = ("_error", "_store", "_thread")

    def __init__(self, open_store: Callable[[], SessionStore]) -> None:
        self._store: SessionStore | None = None
        self._error: SessionError | None = None

        def run() -> None:
            try:
                self._store = open_store()
            except SessionError as exc:
                self._error = exc

        # A daemon: nothing waits for it but `result`; the store it opens is closed by its run.
        self._thread = threading.Thread(target=run, name="bingo-store", daemon=True)
        self._thread.start()

    def result(self) -> SessionStore:
        """The store, once opened.

        Raises:
            SessionError: it could not be opened.
        """
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._store is not None
        return self._store


def compacted(frames: list[Frame]) -> tuple[int, int]:
    """For a session whose history starts at a compaction: how many messages it replaced,
    and how many of the history's first messages it wrote itself (a summary and its answer,
    no one's words: the messages it kept are the ones the history held before it); (0, 0)
    for a session never compacted."""
    at = next((i for i in range(len(frames) - 1, -1, -1) if isinstance(frames[i], CompactionFrame)), None)
    if at is None:
        return 0, 0
    frame = frames[at]
    assert isinstance(frame, CompactionFrame)
    before = history(frames[:at])
    made = frame.compaction.messages
    own = next((n for n, message in enumerate(made) if message in before), len(made))
    return max(len(before) - (len(made) - own), 0), own


async def take_up(
    session: RunSession, *, latest: bool, resume: str | None, ask: Asker | None, notices: Notices
) -> None:
    """Continue the project's latest session (`latest`, `--continue`) or `resume` one
    (`--resume ID`; "" to choose from the project's sessions on the terminal), claimed for
    this run (one writer per session), another project's only as ADR-0029 says (`ask`, where
    there is a terminal to ask on); nothing when neither is asked for."""
    if resume == "":
        from ..surfaces.terminal import choose_session

        resume = await choose_session(session.store.sessions(session.project))
        if resume is None:
            notices.say("bingo", "no session chosen: this is a new one")
    if latest or resume:
        from ..store import continue_session

        session.id = await continue_session(
            session.store,
            session.project,
            latest=latest,
            resume=resume,
            ask=ask.ask if ask is not None else None,
            say=lambda line: notices.say("bingo", line, "warning"),
        )
