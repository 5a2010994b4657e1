"""`/clear` on the terminal, through the real binary in a pty (issue 25 item 8, ADR-0037):
the shared built-in starts a fresh conversation, whose first request carries nothing of the
one before, and the one before stays in the store."""

from __future__ import annotations

from pathlib import Path

from bingo.store import SessionStore
from tests.e2e._bingo import Sandbox
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer, Reply


def test_clear_starts_a_fresh_conversation_and_keeps_the_last_one(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    served: list[ModelServer] = []
    replies: list[Reply] = [[("text", "One.")], [("text", "Two.")]]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("first\r")
        screen.expect(r"One\.")
        screen.prompt()
        screen.child.send("/clear\r")
        screen.expect(r"a fresh conversation starts with your next prompt")
        screen.prompt()
        screen.child.send("second\r")
        screen.expect(r"Two\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        asked = [[part["text"] if isinstance(part, dict) else part for m in body["messages"] for part in (m["content"] if isinstance(m["content"], list) else [m["content"]])] for body in served[0].bodies]
    assert asked == [["first"], ["second"]]
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        assert len(store.sessions(str(box.project))) == 2  # the cleared one is kept
