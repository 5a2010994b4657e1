"""One writer per session (issue 23 item 11, ADR-0029), through the real binary: while one
run continues a session, a second run that would continue it too (`-c` or `--resume` under
`-p`, `-c` on a terminal, an editor's `session/load`) is refused in one line, exit 1, and
writes nothing; the stored history stays one the model APIs take. The lock dies with its
holder: after SIGKILL of the first run, `-c` works at once. The Matrix room's case is in
test_matrix_channel.py."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import acp
import pytest

from bingo.kernel.frames import PromptFrame
from bingo.store import SessionStore
from tests.e2e._acp import Recorder, connected
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._synapse import wait_for
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer

BUSY = r"bingo: session (\S+) is in use by another bingo run \(pid (\d+)\): one run writes a session at a time: wait for that one to end, or start a new session"


def _env(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def _prompts(box: Sandbox, session: str) -> list[str]:
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        return [frame.text for frame in store.frames(session) if isinstance(frame, PromptFrame)]


def _answered_in_order(messages: list[dict[str, Any]]) -> bool:
    """Every tool_use is answered by a tool_result in the very next message, and no result
    answers a call that was not just made: the shape the model APIs require."""
    for before, after in zip([{"role": "", "content": []}, *messages], messages, strict=False):
        asked = (
            {b["id"] for b in before["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
            if isinstance(before["content"], list)
            else set()
        )
        answered = (
            {b["tool_use_id"] for b in after["content"] if isinstance(b, dict) and b.get("type") == "tool_result"}
            if isinstance(after["content"], list)
            else set()
        )
        if asked != answered:
            return False
    return True


@contextmanager
def _first_run_mid_turn(box: Sandbox, server: ModelServer) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A first `bingo -p -c` held mid-turn by the model (its prompt stored); it and the
    session's id. SIGKILLed on the way out if still running."""
    first = box.popen("-p", "-c", "two", env=_env(server))
    try:
        assert server.paused.wait(20), "the first run never reached the model"
        with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
            session = store.latest(str(box.project))
        assert session is not None
        wait_for(lambda: _prompts(box, session)[-1:] == ["two"], what="the first run's prompt to be stored")
        yield first, session
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate(timeout=10)


def test_a_second_run_continuing_a_session_being_written_is_refused_in_one_line_and_sigkill_frees_it(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    replies = [
        [("text", "One.")],
        [("text", "Thinking"), ("pause",)],
        [("tool", "t1", "read", {"path": "notes.txt"})],
        [("text", "Four.")],
    ]
    (box.project / "notes.txt").write_text("kumquat\n", encoding="utf-8")
    with ModelServer(replies) as server:
        assert box.run("-p", "one", env=_env(server)).returncode == 0
        with _first_run_mid_turn(box, server) as (first, session):
            for again in (
                ["-p", "-c", "three"],
                ["-p", "--resume", session, "three"],
                ["-p", "--resume", session[:-2], "three"],
            ):
                refused = box.run(*again, env=_env(server))
                assert refused.returncode == 1, refused.stderr
                [line] = refused.stderr.splitlines()
                found = re.fullmatch(BUSY, line)
                assert found is not None, line
                assert found.groups() == (session, str(first.pid))
                assert no_traceback(refused)
            assert _prompts(box, session) == ["one", "two"]  # the refused runs wrote nothing
            assert len(server.bodies) == 2  # and asked the model nothing
            os.kill(first.pid, signal.SIGKILL)  # no stale lock after kill -9
            first.communicate(timeout=10)
        server.release()
        after = box.run("-p", "-c", "four", env=_env(server))
        bodies = server.bodies
    assert after.returncode == 0, after.stderr
    assert "Four." in after.stdout
    assert _prompts(box, session) == ["one", "two", "four"]
    messages = bodies[-1]["messages"]
    assert "three" not in repr(messages) and _answered_in_order(messages)
    assert list((box.bingo_home / "data" / "session-locks").iterdir()) == []  # each run that ended let its session go


def test_on_a_terminal_continuing_a_session_being_written_says_so_in_one_line_and_exits_1(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "One.")], [("text", "Thinking"), ("pause",)]]) as server:
        assert box.run("-p", "one", env=_env(server)).returncode == 0
        with _first_run_mid_turn(box, server) as (first, session):
            with terminal(box, None, "-c") as screen:
                screen.expect(BUSY)
                assert screen.exits() == 1
            assert first.poll() is None  # the first run goes on
            assert _prompts(box, session) == ["one", "two"]
        server.release()


def test_an_editor_loading_a_session_another_run_writes_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "One.")], [("text", "Thinking"), ("pause",)]]) as server:
        assert box.run("-p", "one", env=_env(server)).returncode == 0
        with _first_run_mid_turn(box, server) as (_first, session):
            client = Recorder()

            async def load() -> None:
                async with connected(box, client) as conn:
                    with pytest.raises(acp.RequestError) as refused:
                        await conn.load_session(cwd=str(box.project), session_id=session)
                    assert re.search(BUSY.removeprefix("bingo: "), str(refused.value)), refused.value

            asyncio.run(asyncio.wait_for(load(), 60))
            assert client.user_text() == ""  # nothing of the session was replayed
            assert _prompts(box, session) == ["one", "two"]
        server.release()
