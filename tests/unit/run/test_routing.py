"""Where the run factory shows a notice of the process: on the surface of the run whose task
raised it; one raised outside every run's task (a plugin's, from the bridge's own task) on
the surfaces of the runs running something; else on the process's own surface. And what a
run keeps of them in its session."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bingo.kernel.frames import NoticeFrame
from bingo.store import SessionStore
from bingo.surfaces._seam import Headless
from bingo.wire import Notice
from tests.unit.run._harness import WAIT, open_factory


class _Seen(Headless):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def notice(self, notice: Notice) -> None:
        self.seen.append(notice.message)


def test_a_notice_goes_to_its_runs_surface_else_to_the_running_ones_else_to_the_process(tmp_path: Path) -> None:
    log, first, second = _Seen(), _Seen(), _Seen()

    async def go() -> None:
        async with open_factory(tmp_path, log) as (factory, notices):
            a = factory.open(first, "editor")
            b = factory.open(second, "editor")

            async def in_a() -> None:
                a.own_task()
                notices.say("bingo", "raised in a's task")

            await asyncio.create_task(in_a())
            notices.say("bingo", "raised between prompts")
            b.submitting = True
            notices.say("plugin", "raised while b runs something")
            b.submitting = False
            a.close()
            b.close()

    asyncio.run(asyncio.wait_for(go(), WAIT))
    assert first.seen == ["raised in a's task"]
    assert second.seen == ["raised while b runs something"]
    assert log.seen == ["raised between prompts"]


def test_the_process_only_run_keeps_every_notice_in_its_session_and_a_room_only_its_own(tmp_path: Path) -> None:
    async def go() -> tuple[list[str], list[str]]:
        async with open_factory(tmp_path, _Seen()) as (factory, notices):
            alone = factory.open(_Seen(), "print")
            alone.session.ensure()
            notices.say("plugin", "a plugin's, from elsewhere")
            alone_id = alone.session.id
            alone.close()

            room = factory.open(_Seen(), "room")  # opened in this task: the room's from now on
            room.session.ensure()
            notices.say("bingo", "the room's own")

            def elsewhere() -> None:
                notices.say("plugin", "not the room's")

            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, elsewhere)  # a thread: no run's context
            room_id = room.session.id
            room.close()
        assert alone_id is not None and room_id is not None
        with SessionStore(tmp_path / "sessions.db") as store:
            kept = [
                [f.notice.message for f in store.frames(session) if isinstance(f, NoticeFrame)]
                for session in (alone_id, room_id)
            ]
        return kept[0], kept[1]

    alone, room = asyncio.run(asyncio.wait_for(go(), WAIT))
    assert alone == ["a plugin's, from elsewhere"]
    assert room == ["the room's own"]
