"""`/clear` on the terminal, through the real binary in a pty (issue 25 item 8, ADR-0037):
the shared built-in starts a fresh conversation, whose first request carries nothing of the
one before, and the one before stays in the store; a plugin's `session.end` and
`session.start` hooks see the one end and the next start, as at a run's close and start."""

from __future__ import annotations

import json
from pathlib import Path

from bingo.store import SessionStore
from tests.e2e._bingo import Sandbox
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer, Reply

# A plugin a person installs to watch sessions: each `hook/observe` it is sent is appended to
# `<dataDir>/seen.jsonl` as [point, session].
WATCHER = r"""
import json, os, sys
data = None
for line in sys.stdin:
    message = json.loads(line)
    method, params = message.get("method"), message.get("params") or {}
    if method == "initialize":
        data = params["env"]["dataDir"]
        os.makedirs(data, exist_ok=True)
        result = {"protocol": 5, "name": "watch", "version": "0", "hooks": [{"name": "sessions", "site": "session", "points": ["start", "end"]}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        sys.stdout.flush()
    elif method == "hook/observe":
        with open(os.path.join(data, "seen.jsonl"), "a", encoding="utf-8") as file:
            file.write(json.dumps([params.get("point"), (params.get("payload") or {}).get("session")]) + "\n")
    elif "id" in message:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}) + "\n")
        sys.stdout.flush()
"""


def _watcher(box: Sandbox) -> Path:
    root = box.bingo_home / "plugins" / "watch"
    root.mkdir(parents=True)
    (root / "main.py").write_text(WATCHER, encoding="utf-8")
    (root / "plugin.json").write_text(
        json.dumps(
            {"name": "watch", "version": "0", "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]}}
        ),
        encoding="utf-8",
    )
    return box.bingo_home / "data" / "plugins" / "watch" / "seen.jsonl"


def test_clear_starts_a_fresh_conversation_and_keeps_the_last_one(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    seen = _watcher(box)
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
        asked = [
            [
                part["text"] if isinstance(part, dict) else part
                for m in body["messages"]
                for part in (m["content"] if isinstance(m["content"], list) else [m["content"]])
            ]
            for body in served[0].bodies
        ]
    assert asked == [["first"], ["second"]]
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        sessions = store.sessions(str(box.project))
        assert len(sessions) == 2  # the cleared one is kept
    titled = {info.title: info for info in sessions}
    first, second = titled["first"], titled["second"]
    observed = [tuple(json.loads(line)) for line in seen.read_text(encoding="utf-8").splitlines()]
    # The watcher's own record: the first session ends at /clear and the next starts there
    # (its id made by its first prompt, as a run's first session's is).
    assert observed == [("start", ""), ("end", first.id), ("start", ""), ("end", second.id)]
