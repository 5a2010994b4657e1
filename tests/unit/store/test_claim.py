"""One writer per session (ADR-0029): the store's claims, and which session a run continues."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bingo.kernel.errors import SessionError
from bingo.store import SessionStore, continue_session, load_session
from bingo.store._claim import Claims

PROJECT = "/home/someone/project"
OTHER = "/home/someone/other"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "sessions.db"


def test_a_session_a_store_created_is_its_own_and_another_store_is_refused_naming_this_process(db: Path) -> None:
    with SessionStore(db) as one, SessionStore(db) as two:
        session = one.create(PROJECT)
        one.claim(session)  # again: a no-op
        with pytest.raises(SessionError) as refused:
            two.claim(session)
        assert refused.value.message == f"session {session} is in use by another session of this run"
        one.release(session)
        two.claim(session)
        with pytest.raises(SessionError):
            one.claim(session)


def test_closing_a_store_lets_its_sessions_go_and_leaves_no_lock_file(db: Path) -> None:
    with SessionStore(db) as one:
        first, second = one.create(PROJECT), one.create(PROJECT)
    assert list((db.parent / "session-locks").iterdir()) == []
    with SessionStore(db) as two:
        two.claim(first)
        two.claim(second)


def test_a_lock_file_whose_holder_let_it_go_after_it_was_opened_is_not_taken_as_held(tmp_path: Path) -> None:
    # The holder unlinks the file while it still holds it; a claimer that opened the old file
    # and locks it after must see that the file at the path is another, and claim that one.
    first, second = Claims(tmp_path), Claims(tmp_path)
    first.claim("s")
    stale = os.open(tmp_path / "s.lock", os.O_RDONLY)
    try:
        first.release("s")
        assert not (tmp_path / "s.lock").exists()
        second.claim("s")
        assert (tmp_path / "s.lock").exists()  # a new file, held
        with pytest.raises(SessionError):
            Claims(tmp_path).claim("s")
    finally:
        os.close(stale)


def test_an_id_that_is_no_file_name_is_locked_under_its_hash(tmp_path: Path) -> None:
    claims = Claims(tmp_path / "locks")
    claims.claim("../../escape")
    [held] = list((tmp_path / "locks").iterdir())
    assert len(held.stem) == 64 and not (tmp_path / "escape.lock").exists()


def test_another_projects_session_named_by_its_whole_id_continues_with_one_line_saying_so(db: Path) -> None:
    with SessionStore(db) as store:
        theirs = store.create(OTHER)
        store.release(theirs)
    said: list[str] = []
    with SessionStore(db) as store:
        found = asyncio.run(continue_session(store, PROJECT, latest=False, resume=theirs, ask=None, say=said.append))
        assert found == theirs
    assert said == [f"session {theirs} belongs to another project, {OTHER}; it continues here, in {PROJECT}"]


def test_another_projects_session_named_by_a_prefix_is_refused_with_nobody_to_ask_and_asked_otherwise(db: Path) -> None:
    with SessionStore(db, id_factory=lambda: "20261204-010203-a1f3") as store:
        theirs = store.create(OTHER)
        store.release(theirs)
    asked: list[str] = []

    async def no(question: str, choices: list[str] | None) -> str:
        asked.append(question)
        return "no"

    async def yes(question: str, choices: list[str] | None) -> str:
        return "yes"

    with SessionStore(db) as store:
        with pytest.raises(SessionError) as refused:
            asyncio.run(
                continue_session(store, PROJECT, latest=False, resume="20261204-0102", ask=None, say=lambda _: None)
            )
        assert (
            refused.value.line()
            == f"session {theirs} belongs to another project, {OTHER}: continue it there, or give its whole id to continue it here: bingo --resume {theirs}"
        )
        with pytest.raises(SessionError):
            asyncio.run(
                continue_session(store, PROJECT, latest=False, resume="20261204-0102", ask=no, say=lambda _: None)
            )
        assert asked == [f"session {theirs} belongs to another project, {OTHER}: continue it here, in {PROJECT}?"]
        assert (
            asyncio.run(
                continue_session(store, PROJECT, latest=False, resume="20261204-0102", ask=yes, say=lambda _: None)
            )
            == theirs
        )


def test_a_prefix_finds_this_projects_session_before_another_projects(db: Path) -> None:
    ids = iter(["20261204-010203-aaaa", "20261204-010203-bbbb"])
    with SessionStore(db, id_factory=lambda: next(ids)) as store:
        store.create(OTHER)
        mine = store.create(PROJECT)
    with SessionStore(db) as store:
        assert (
            asyncio.run(
                continue_session(store, PROJECT, latest=False, resume="20261204-0102", ask=None, say=lambda _: None)
            )
            == mine
        )


def test_loading_needs_the_whole_id_and_a_room_never_crosses_projects(db: Path) -> None:
    with SessionStore(db, id_factory=lambda: "20261204-010203-a1f3") as store:
        theirs = store.create(OTHER)
        store.release(theirs)
        with pytest.raises(SessionError) as partial:
            load_session(store, theirs[:-1], OTHER, None)
        assert partial.value.message == f"no session {theirs[:-1]}"
        with pytest.raises(SessionError) as crossing:
            load_session(store, theirs, PROJECT, None)
        assert crossing.value.message == f"session {theirs} belongs to another project, {OTHER}"
        said: list[str] = []
        assert load_session(store, theirs, PROJECT, said.append) == theirs
        assert len(said) == 1
