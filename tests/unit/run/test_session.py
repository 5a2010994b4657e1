"""A run's session store opened on a thread beside start-up (`RunSession.prepare`, ADR-0043):
the same store, the same failure in the same words, and nothing left open."""

from __future__ import annotations

from pathlib import Path

import pytest

from bingo.kernel.errors import SessionError
from bingo.kernel.frames import PromptFrame
from bingo.run import RunSession


def test_a_store_opened_ahead_is_the_one_the_run_writes_to(tmp_path: Path) -> None:
    session = RunSession(tmp_path / "sessions.db", "/p")
    session.prepare()
    session.prepare()  # once
    session.append(PromptFrame(text="hi", turn=1))
    assert session.id is not None
    assert [frame.text for frame in session.frames() if isinstance(frame, PromptFrame)] == ["hi"]
    session.close()
    again = RunSession(tmp_path / "sessions.db", "/p")
    assert again.store.latest("/p") == session.id
    again.close()


def test_a_store_that_cannot_be_opened_fails_where_it_is_first_used(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory", encoding="utf-8")
    session = RunSession(blocked / "sessions.db", "/p")
    session.prepare()
    with pytest.raises(SessionError) as failed:
        session.ensure()
    assert "cannot open the session store" in failed.value.message
    session.close()  # joined already: nothing to close, nothing raised


def test_a_run_that_closes_before_using_its_store_closes_it(tmp_path: Path) -> None:
    session = RunSession(tmp_path / "sessions.db", "/p")
    session.prepare()
    session.close()
    assert (tmp_path / "sessions.db").exists()
