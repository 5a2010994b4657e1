"""Over ACP a notice is bingo's, never the model's words (issue 25 item 7, ADR-0037), and
`/clear` starts a fresh conversation in the editor's thread, through the real `bingo --acp`:
to a client that takes ACP's `notice` updates (`clientCapabilities.session.notices`) a
notice is one; to one that does not (the Python SDK's), it is a call card of its own marked
`_meta.bingo.notice`; in neither is it agent message text, and the model is never sent it.
The evidence is what the client received and what the scripted model was sent."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from tests.e2e._acp import Recorder, connected, text
from tests.e2e._bingo import BINGO, TEST_PLUGINS, Sandbox
from tests.e2e._scripted import model_requests, tool, use_scripted_model
from tests.e2e._scripted import text as say

NOTIFY = "plugin__asker-node__notify"


def run(coro: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(60):
            await coro

    asyncio.run(bounded())


def _box(tmp_path: Path, replies: list[list[dict[str, Any]]]) -> Sandbox:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    # `colour` is no setting: a notice at start, held for the first session.
    use_scripted_model(box, replies, colour="blue", permissions={"allow": ["plugin__asker-node__*"]})
    return box


def test_a_notice_is_a_card_of_its_own_never_agent_text_nor_the_models(tmp_path: Path) -> None:
    box = _box(tmp_path, [[say("Let me see."), tool("n1", NOTIFY, {})], [say("All done.")]])
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("go")])
            assert answer.stop_reason == "end_turn"

    run(go())
    assert client.agent_text() == "Let me see.\nAll done."  # the model's words, and only them
    notices = client.notices()
    assert "asker-node: hello from asker" in notices
    assert any("colour" in n for n in notices)
    said = json.dumps([r["request"]["messages"] for r in model_requests(box)])
    assert "hello from asker" not in said and "colour" not in said


class _RawClient:
    """A client that takes ACP's `notice` updates, speaking JSON lines to `bingo --acp`
    itself (the SDKs at hand predate notices, and would refuse the update)."""

    def __init__(self, box: Sandbox) -> None:
        self.process = subprocess.Popen(
            [BINGO, "--acp"],
            cwd=box.project,
            env=box.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.seen: list[dict[str, Any]] = []
        self._ids = 0
        self._buffer = b""

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, "bingo did not answer in time"
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                assert chunk, "bingo closed its stdout"
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its result, once every update before it is in `seen`."""
        assert self.process.stdin is not None
        self._ids += 1
        self.process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}).encode() + b"\n"
        )
        self.process.stdin.flush()
        deadline = time.monotonic() + 20
        while True:
            message = self._read(deadline)
            if message.get("id") == self._ids and "method" not in message:
                assert "error" not in message, message
                result: dict[str, Any] = message["result"]
                return result
            self.seen.append(message)

    def updates(self) -> list[dict[str, Any]]:
        return [m["params"]["update"] for m in self.seen if m.get("method") == "session/update"]

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=20)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait(timeout=10)
            assert self.process.stdout is not None
            self.process.stdout.close()


def test_a_client_that_takes_notices_is_sent_acps_notice_update(tmp_path: Path) -> None:
    box = _box(tmp_path, [[say("Let me see."), tool("n1", NOTIFY, {})], [say("All done.")]])
    client = _RawClient(box)
    try:
        client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {"session": {"notices": {}}}})
        session = client.call("session/new", {"cwd": str(box.project), "mcpServers": []})["sessionId"]
        answer = client.call("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]})
        assert answer == {"stopReason": "end_turn"}
    finally:
        assert client.close() == 0
    updates = client.updates()
    notices = [u for u in updates if u["sessionUpdate"] == "notice"]
    assert {"sessionUpdate": "notice", "severity": "info", "title": "asker-node: hello from asker"} in notices
    assert any(n["severity"] == "warning" and "colour" in n["title"] for n in notices)
    chunks = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert chunks == "Let me see.\nAll done."
    assert not [
        u for u in updates if u["sessionUpdate"] == "tool_call" and "_meta" in u
    ]  # no card where a notice is taken
    said = json.dumps([r["request"]["messages"] for r in model_requests(box)])
    assert "hello from asker" not in said and "colour" not in said


def test_clear_starts_a_fresh_conversation_in_the_editors_thread(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("One.")], [say("Two.")], [say("Three.")]])
    client = Recorder()
    ids: list[str] = []

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            ids.append(session.session_id)
            await conn.prompt(session_id=session.session_id, prompt=[text("first")])
            await conn.prompt(session_id=session.session_id, prompt=[text("/clear")])
            await conn.prompt(session_id=session.session_id, prompt=[text("second")])

    run(go())
    assert "clear" in client.commands()
    assert "a fresh conversation starts with your next prompt" in client.agent_text()
    requests = model_requests(box)
    assert [[b.get("text") for m in r["request"]["messages"] for b in m["content"]] for r in requests] == [
        ["first"],
        ["second"],
    ]
    again = Recorder()

    async def load() -> None:
        async with connected(box, again) as conn:
            await conn.load_session(cwd=str(box.project), session_id=ids[0])
            await conn.prompt(session_id=ids[0], prompt=[text("third")])

    run(load())
    assert "first" in again.user_text()  # the thread keeps what came before /clear
    assert any("/clear" in n for n in again.notices())  # and shows where it cleared
    assert [b.get("text") for m in model_requests(box)[-1]["request"]["messages"] for b in m["content"]] == [
        "second",
        "Two.",
        "third",
    ]
