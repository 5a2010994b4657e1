"""The run's session: what it keeps of the notices of one turn is bounded."""

from __future__ import annotations

from pathlib import Path

from bingo.kernel.frames import NoticeFrame
from bingo.run import NOTICE_FRAMES as _NOTICE_FRAMES
from bingo.run import RunSession as _LazySession
from bingo.store import SessionStore
from bingo.wire import Notice


def _notice_frames(path: Path, session: str) -> list[NoticeFrame]:
    with SessionStore(path) as store:
        return [frame for frame in store.frames(session) if isinstance(frame, NoticeFrame)]


def test_a_turn_keeps_its_notices_up_to_the_bound_then_one_frame_saying_so(tmp_path: Path) -> None:
    session = _LazySession(tmp_path / "sessions.db", str(tmp_path))
    try:
        session.turn = 1
        for n in range(_NOTICE_FRAMES + 50):
            session.notice(Notice(source="chatty", message=f"notice {n}"))  # before the first frame: not kept
        session.ensure()
        for n in range(_NOTICE_FRAMES + 50):
            session.notice(Notice(source="chatty", message=f"notice {n}"))
        session.turn = 2
        session.notice(Notice(source="chatty", message="a new turn"))
    finally:
        session.close()
    assert session.id is not None
    frames = _notice_frames(tmp_path / "sessions.db", session.id)
    assert [f.notice.message for f in frames[:_NOTICE_FRAMES]] == [f"notice {n}" for n in range(_NOTICE_FRAMES)]
    assert frames[_NOTICE_FRAMES].notice == Notice(
        source="bingo",
        message=f"turn 1 raised more than {_NOTICE_FRAMES} notices; the session keeps no more of them",
        level="warning",
    )
    assert [(f.turn, f.notice.message) for f in frames[_NOTICE_FRAMES + 1 :]] == [(2, "a new turn")]
