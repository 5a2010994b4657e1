"""The same `rm -rf` guard, a `PreToolUse` command hook that exits 2, blocks the model's `bash`
call on a terminal, over ACP and in a Matrix room as it does under `-p` (tests/e2e/test_bring_hooks.py): every
surface's conversation passes the one choke point (a Matrix room's too, against the session's
Synapse). Evidence from the attacked side: the file
the command would have removed is still there. A markdown command is offered on both, with its
hint."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from tests.e2e._acp import Recorder, connected, text
from tests.e2e._bingo import Sandbox
from tests.e2e._scripted import model_requests, result_text, tool, tool_results, use_scripted_model
from tests.e2e._scripted import text as say
from tests.e2e.test_matrix_channel import Bot, Room, _script, _start, bots, homeserver, room
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer

__all__ = ["bots", "homeserver", "room"]  # the Matrix tests' fixtures, shared

_GUARD = """\
import json, sys
command = json.load(sys.stdin).get("tool_input", {}).get("command", "")
if "rm -rf" in command:
    print("Blocked: rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
"""


def _world(tmp_path: Path) -> tuple[Sandbox, Path, dict[str, Any]]:
    box = Sandbox(tmp_path)
    guard = box.home / "hooks" / "guard.py"
    guard.parent.mkdir(parents=True)
    guard.write_text(_GUARD, encoding="utf-8")
    victim = box.project / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n", encoding="utf-8")
    commands = box.bingo_home / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: <path>\n---\nReview $ARGUMENTS\n", encoding="utf-8"
    )
    hooks = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"{sys.executable} {guard}"}]}]
    }
    return box, victim, hooks


def test_the_guard_blocks_the_call_on_a_terminal(tmp_path: Path) -> None:
    box, victim, hooks = _world(tmp_path)
    box.settings({"hooks": hooks, "permissions": {"allow": ["bash"]}})
    served: list[ModelServer] = []
    with terminal(
        box, [[("tool", "t1", "bash", {"command": f"rm -rf {victim}"})], [("text", "Stopped, then.")]], server=served
    ) as screen:
        screen.child.send("/rev")
        screen.expect("Review a file")  # the markdown command, offered with its hint
        screen.child.send("\x15")  # Ctrl-U: clear the line
        screen.child.send("clean up\r")
        screen.expect("Blocked: rm -rf is not allowed here")
        screen.expect(r"Stopped, then\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        results = [b for b in served[0].bodies[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True]
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"


def test_the_guard_blocks_the_call_over_acp(tmp_path: Path) -> None:
    box, victim, hooks = _world(tmp_path)
    use_scripted_model(
        box,
        [[tool("c1", "bash", {"command": f"rm -rf {victim}"})], [say("Stopped, then.")]],
        hooks=hooks,
        permissions={"allow": ["bash"]},
    )
    client = Recorder()

    async def go() -> None:
        async with asyncio.timeout(60), connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("clean up")])
            assert answer.stop_reason == "end_turn"

    asyncio.run(go())
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    [refused] = tool_results(model_requests(box)[1])
    assert refused["isError"] and "Blocked: rm -rf is not allowed here" in result_text(refused)
    assert "review" in client.commands()


def test_the_guard_blocks_the_call_in_a_matrix_room(tmp_path: Path, room: Room, bots: list[Bot]) -> None:
    box, victim, hooks = _world(tmp_path)
    _script(
        box,
        room,
        [[tool("c1", "bash", {"command": f"rm -rf {victim}"})], [say("Stopped, then.")]],
        hooks=hooks,
        permissions={"allow": ["bash"]},
    )
    bot = _start(bots, box, room)
    room.person.say(room.id, "clean up")
    room.wait_for_body(lambda b: "Stopped, then." in b, "the model's answer after the refusal")
    assert bot.stop() == 0
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    [refused] = tool_results(model_requests(box)[1])
    assert refused["isError"] and "Blocked: rm -rf is not allowed here" in result_text(refused)
