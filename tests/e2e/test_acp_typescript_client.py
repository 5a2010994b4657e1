"""`bingo --acp` driven by the TypeScript `@agentclientprotocol/sdk` client (from npm, a client
nobody here wrote) through a whole session with the scripted model: a prompt streamed, a tool
call whose permission is answered each way, a cancel mid-tool, a session loaded by a second
bingo, a slash command with its View, and the editor's own files.

The SDK is installed once per machine into `<repo>/.cache/npm-acp` (gitignored), pinned, by
`npm install` under a file lock; without npm these tests are skipped with the reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import BINGO, EXAMPLES, TEST_PLUGINS, Sandbox
from tests.e2e._scripted import model_requests, result_text, tool, tool_results, use_scripted_model
from tests.e2e._scripted import text as say
from tests.support import installs

NPM_DIR = installs.NPM_ACP
CLIENT = Path(__file__).with_name("acp_client.mjs")


@pytest.fixture(scope="session")
def sdk() -> Path:
    """The SDK's entry file, installed first if it is not yet."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm is not installed: the tests with the TypeScript ACP client need node and npm")
    why = installs.npm(NPM_DIR, installs.ACP_SDK)
    assert why is None, why
    [name] = installs.ACP_SDK
    package = installs.npm_package(NPM_DIR, name) / "package.json"
    entry = json.loads(package.read_text(encoding="utf-8"))["exports"]["."]["import"]
    return package.parent / entry


def drive(
    box: Sandbox,
    sdk: Path,
    steps: list[dict[str, Any]],
    *,
    answers: list[str] | None = None,
    fs: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run the TypeScript client through `steps` against `bingo --acp` in the sandbox."""
    scenario = box.root / "scenario.json"
    scenario.write_text(
        json.dumps({"bingo": BINGO, "cwd": str(box.project), "fs": fs, "answers": answers or [], "steps": steps}),
        encoding="utf-8",
    )
    node = shutil.which("node")
    assert node is not None
    env = {**box.env, "PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [node, str(CLIENT), str(sdk), str(scenario)],
        cwd=box.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert seen["errors"] == [], seen["errors"]
    return seen


def agent_text(seen: dict[str, Any]) -> str:
    return "".join(
        u["update"]["content"]["text"]
        for u in seen["updates"]
        if "update" in u and u["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def calls(seen: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    return [u["update"] for u in seen["updates"] if "update" in u and u["update"].get("toolCallId") == call_id]


def test_a_prompt_is_streamed_and_a_slash_command_shows_its_view(tmp_path: Path, sdk: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("one two three\nfour\n")
    use_scripted_model(box, [[say("Hello from the model.")]])
    seen = drive(
        box,
        sdk,
        [{"do": "new"}, {"do": "prompt", "text": "say hello"}, {"do": "prompt", "text": "/wordcount notes.txt"}],
    )
    assert seen["init"]["agentCapabilities"]["loadSession"] is True
    assert seen["stops"] == ["end_turn", "end_turn"]
    shown = agent_text(seen)
    assert shown.startswith("Hello from the model.")
    assert (
        "**notes.txt**\n\n| what | count |\n| --- | ---: |\n| words | 4 |\n| lines | 2 |" in shown
    )  # the View's markdown fold
    commands = [u["update"] for u in seen["updates"] if u["update"]["sessionUpdate"] == "available_commands_update"]
    assert "wordcount" in [c["name"] for c in commands[-1]["availableCommands"]]


def test_permissions_answered_each_way(tmp_path: Path, sdk: Path) -> None:
    box = Sandbox(tmp_path)
    once, never, always = ({"command": f"echo {word} >> log.txt"} for word in ("once", "never", "always"))
    use_scripted_model(
        box,
        [
            [tool("c1", "bash", once)],
            [tool("c2", "bash", never)],
            [tool("c3", "bash", always)],
            [tool("c4", "bash", always)],
            [say("done")],
        ],
        sandbox={"mode": "off"},
    )  # without a sandbox, bash is asked about
    seen = drive(
        box,
        sdk,
        [{"do": "new"}, {"do": "prompt", "text": "log"}],
        answers=["allow_once", "reject_once", "allow_always"],
    )
    assert (box.project / "log.txt").read_text() == "once\nalways\nalways\n"
    assert len(seen["asked"]) == 3  # c4 matched the rule "allow always" saved
    rule = next(o["name"] for o in seen["asked"][2]["options"] if o["kind"] == "allow_always").removeprefix(
        "Always allow "
    )
    saved = json.loads((box.project / ".bingo" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == [rule]
    asked = [a["toolCall"]["toolCallId"] for a in seen["asked"]]
    assert [u["status"] for u in calls(seen, asked[1]) if "status" in u] == ["pending", "failed"]
    assert [u["status"] for u in calls(seen, asked[0]) if "status" in u] == ["pending", "in_progress", "completed"]
    results = [result_text(r) for request in model_requests(box) for r in tool_results(request)]
    assert any("declined" in r for r in results)


def test_cancel_mid_tool_ends_the_turn_cancelled(tmp_path: Path, sdk: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")
    use_scripted_model(
        box, [[tool("c1", "plugin__slow__wait", {})], [say("never")]], permissions={"allow": ["plugin__slow__wait"]}
    )
    seen = drive(box, sdk, [{"do": "new"}, {"do": "cancel_after_progress", "text": "wait"}])
    assert seen["stops"] == ["cancelled"]
    assert "slow: got tool/cancel" in (box.logs / "plugin-slow.log").read_text()
    assert len(model_requests(box)) == 1


def test_a_session_loaded_by_a_second_bingo_is_replayed_and_goes_on(tmp_path: Path, sdk: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("First answer.")]])
    first = drive(box, sdk, [{"do": "new"}, {"do": "prompt", "text": "first question"}])
    session = first["sessions"][0]
    use_scripted_model(box, [[say("Second answer.")]])
    second = drive(box, sdk, [{"do": "load", "session": session}, {"do": "prompt", "text": "second question"}])
    # This SDK may hand a response over before the notifications that preceded it on the
    # wire, so the replay is judged by the order of the updates themselves.
    updates = [u["update"] for u in second["updates"] if "update" in u]
    assert [u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"] == ["first question"]
    said = "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert 0 <= said.index("First answer.") < said.index("Second answer.")
    assert second["stops"] == ["end_turn"]
    assert "Second answer." in agent_text(second)
    roles = [m["role"] for m in model_requests(box)[-1]["request"]["messages"]]
    assert roles == ["user", "assistant", "user"]


def test_read_and_write_use_the_editors_files(tmp_path: Path, sdk: Path) -> None:
    box = Sandbox(tmp_path)
    path = str(box.project / "todo.md")
    use_scripted_model(
        box,
        [
            [tool("r1", "read", {"path": "todo.md"})],
            [tool("w1", "write", {"path": "todo.md", "content": "- [x] unsaved\n"})],
            [say("ok")],
        ],
        permissions={"allow": ["write"]},
    )
    seen = drive(box, sdk, [{"do": "new"}, {"do": "prompt", "text": "tick it"}], fs={path: "- [ ] unsaved\n"})
    assert seen["files"] == {path: "- [x] unsaved\n"}
    assert not (box.project / "todo.md").exists()
    finished = [u for u in calls(seen, "w1") if u.get("status") == "completed"]
    (diff,) = finished[0]["content"]
    assert diff["type"] == "diff" and diff["path"] == path and "[x]" in diff["newText"] and "[ ]" in diff["oldText"]


def test_an_mcp_server_passed_in_session_new_runs_under_the_gate(tmp_path: Path, sdk: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[tool("m1", "plugin__adder__add", {"a": 2, "b": 3})], [say("five")]])
    server = {
        "name": "adder",
        "command": sys.executable,
        "args": [str(TEST_PLUGINS / "mcp-sdk" / "server.py")],
        "env": [],
    }
    seen = drive(
        box, sdk, [{"do": "new", "mcpServers": [server]}, {"do": "prompt", "text": "add"}], answers=["allow_once"]
    )
    assert seen["init"]["agentCapabilities"]["mcpCapabilities"]["http"] is True
    assert len(seen["asked"]) == 1  # an MCP server's tool is untrusted: the gate asked
    (result,) = tool_results(model_requests(box)[1])
    assert result_text(result) == "2 + 3 = 5"
