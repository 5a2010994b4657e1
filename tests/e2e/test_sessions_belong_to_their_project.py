"""A session belongs to its project (issue 23 item 15, ADR-0029), through the real binary:
another project's session is continued only when named by its whole id (with one line
saying so); named by a prefix, `-p` refuses in one line and a terminal asks, naming both
projects; an editor's `session/load` takes whole ids only. The evidence is the other
project's stored session: nothing is added to it unless the person named it whole or said
yes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import acp
import pytest

from bingo.kernel.frames import PromptFrame
from bingo.store import SessionStore
from tests.e2e._acp import Recorder, connected
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer


def _env(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def _other_projects_session(box: Sandbox, server: ModelServer) -> tuple[Path, str]:
    """A project beside the sandbox's, and the session `bingo -p` left there."""
    other = box.root / "other"
    (other / ".git").mkdir(parents=True)
    made = box.run("-p", "the secret word is kumquat", env=_env(server), cwd=other)
    assert made.returncode == 0, made.stderr
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        session = store.latest(str(other))
    assert session is not None
    return other, session


def _prompts(box: Sandbox, session: str) -> list[str]:
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        return [frame.text for frame in store.frames(session) if isinstance(frame, PromptFrame)]


def test_under_p_a_prefix_of_another_projects_session_is_refused_and_its_whole_id_continues_it_saying_so(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "Noted.")], [("text", "Kumquat.")]]) as server:
        other, session = _other_projects_session(box, server)
        refused = box.run("-p", "--resume", session[:-2], "which word?", env=_env(server))
        assert refused.returncode == 1
        assert refused.stderr.splitlines() == [
            f"bingo: session {session} belongs to another project, {other}: continue it there, or give its whole id to continue it here: bingo --resume {session}"
        ]
        assert no_traceback(refused)
        assert _prompts(box, session) == ["the secret word is kumquat"]  # nothing added
        assert len(server.bodies) == 1  # nor was the model asked
        whole = box.run("-p", "--resume", session, "which word?", env=_env(server))
        bodies = server.bodies
    assert whole.returncode == 0, whole.stderr
    assert "Kumquat." in whole.stdout
    assert (
        f"bingo: session {session} belongs to another project, {other}; it continues here, in {box.project}"
        in whole.stderr.splitlines()
    )
    assert "kumquat" in repr(bodies[1]["messages"])
    assert _prompts(box, session) == ["the secret word is kumquat", "which word?"]


def test_on_a_terminal_a_prefix_of_another_projects_session_asks_naming_both_projects(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "Noted.")]]) as server:
        other, session = _other_projects_session(box, server)
    with terminal(box, None, "--resume", session[:-2]) as screen:
        screen.expect(r"\[y\] yes +\[n\] no \(Esc\)")
        unwrapped = re.sub(r"\s+", " ", screen.text())  # the question is wrapped at a blank: wider than the 120 columns
        assert (
            f"session {session} belongs to another project, {other}: continue it here, in {box.project}?" in unwrapped
        )
        screen.child.send("n")
        screen.expect(r"whole id to continue it here")
        assert screen.exits() == 1
        assert (
            f"bingo: session {session} belongs to another project, {other}: continue it there, or give its whole id"
            in re.sub(r"\s+", " ", screen.text())
        )
    assert _prompts(box, session) == ["the secret word is kumquat"]
    with terminal(box, None, "--resume", session[:-2]) as screen:
        screen.expect(r"continue\s+it\s+here,\s+in\s.*\?(.|\n)*\[y\] yes +\[n\] no \(Esc\)")
        screen.child.send("y")
        screen.expect(r"it continues here")
        screen.expect(r"> the secret word is kumquat *\nNoted\. *\n─+\n")  # its conversation so far
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_an_editor_loads_a_session_by_its_whole_id_only(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "Noted.")]]) as server:
        other, session = _other_projects_session(box, server)
    client = Recorder()

    async def load() -> None:
        async with connected(box, client) as conn:
            with pytest.raises(acp.RequestError) as partial:
                await conn.load_session(cwd=str(box.project), session_id=session[:-2])
            assert f"no session {session[:-2]}: a session is loaded by its whole id" in str(partial.value)
            await conn.load_session(cwd=str(box.project), session_id=session)
            await asyncio.wait_for(client.notice_said(said), 10)

    said = f"bingo: session {session} belongs to another project, {other}; it continues here, in {box.project}"
    asyncio.run(asyncio.wait_for(load(), 60))
    assert client.user_text() == "the secret word is kumquat"  # the whole id loads it
    assert said in client.notice_text()
    assert said not in client.agent_text()  # bingo's line, never the model's words (ADR-0037)
