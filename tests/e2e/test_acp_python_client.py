"""`bingo --acp` driven by the Python `agent-client-protocol` package's client (a client
nobody here wrote), with the scripted model: a prompt streamed, a tool call whose permission
is answered each way, a cancel mid-tool, a session loaded by a second bingo, a slash command
with its View, the editor's own files, and a stdout that carries the protocol only."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import acp
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    McpServerStdio,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
)

from bingo.kernel.frames import AssistantFrame, PromptFrame
from bingo.store import SessionStore
from bingo.wire import Message, TextBlock
from tests.e2e._acp import WAIT, Recorder, connected, project_path, text
from tests.e2e._bingo import BINGO, EXAMPLES, TEST_PLUGINS, Sandbox
from tests.e2e._scripted import model_requests, result_text, tool, tool_results, use_scripted_model
from tests.e2e._scripted import text as say


def run(coro: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(60):
            await coro

    asyncio.run(bounded())


def test_a_prompt_streams_the_models_text_and_offers_the_commands(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("Hello from the model.")]], colour="blue")  # an unknown key: a notice
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("say hello")])
            assert answer.stop_reason == "end_turn"

    run(go())
    assert "Hello from the model." in client.agent_text()
    assert {"help", "tools", "sessions", "compact"} <= set(client.commands())
    assert "exit" not in client.commands()  # the editor ends a session, not a command
    assert "colour" in client.notice_text()  # bingo's notice reached the editor, apart from the model's text
    assert "colour" not in client.agent_text()
    (request,) = model_requests(box)
    assert request["request"]["messages"][-1]["content"][0]["text"] == "say hello"


def test_a_tool_call_asks_and_allow_once_runs_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box, [[tool("c1", "bash", {"command": "echo hi > out.txt"})], [say("done")]], sandbox={"mode": "off"}
    )  # the world without a sandbox, where bash is asked about
    client = Recorder(answers=["allow_once"])

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("write it")])
            assert answer.stop_reason == "end_turn"

    run(go())
    (asked, options) = client.asked[0]
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    started = [u for u in client.calls() if isinstance(u, ToolCallStart)]
    assert started[0].tool_call_id == asked.tool_call_id and started[0].kind == "execute"
    assert started[0].title == "bash echo hi > out.txt"
    assert client.statuses(asked.tool_call_id) == ["pending", "in_progress", "completed"]
    assert (box.project / "out.txt").read_text() == "hi\n"
    assert "done" in client.agent_text()


def test_reject_does_not_run_the_call_and_the_model_is_told(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box, [[tool("c1", "bash", {"command": "echo hi > out.txt"})], [say("ok")]], sandbox={"mode": "off"}
    )  # the world without a sandbox, where bash is asked about
    client = Recorder(answers=["reject_once"])

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("write it")])

    run(go())
    assert not (box.project / "out.txt").exists()
    (asked, _) = client.asked[0]
    assert client.statuses(asked.tool_call_id) == ["pending", "failed"]
    (result,) = tool_results(model_requests(box)[1])
    assert result.get("isError") and "declined" in result_text(result)


def test_a_cancelled_permission_request_is_a_no(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box, [[tool("c1", "bash", {"command": "echo hi > out.txt"})], [say("ok")]], sandbox={"mode": "off"}
    )  # the world without a sandbox, where bash is asked about
    client = Recorder(answers=["cancelled"])

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("write it")])

    run(go())
    assert not (box.project / "out.txt").exists()
    (result,) = tool_results(model_requests(box)[1])
    assert "declined" in result_text(result)


def test_allow_always_saves_the_terminals_narrow_rule_and_asks_no_more(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    call = {"command": "echo hi >> log.txt"}
    use_scripted_model(
        box, [[tool("c1", "bash", call)], [tool("c2", "bash", call)], [say("twice")]], sandbox={"mode": "off"}
    )  # the world without a sandbox, where bash is asked about
    client = Recorder(answers=["allow_always"])

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("log twice")])

    run(go())
    assert len(client.asked) == 1  # the second call matched the rule
    (_, options) = client.asked[0]
    always = next(o.name for o in options if o.kind == "allow_always").removeprefix("Always allow ")
    saved = json.loads((box.project / ".bingo" / "settings.local.json").read_text())
    assert saved["permissions"]["allow"] == [always]
    assert always.startswith("bash(echo")
    assert (box.project / "log.txt").read_text() == "hi\nhi\n"
    assert f"allowed {always} from now on" in client.notice_text()


def test_a_file_the_editor_declines_is_read_and_written_on_the_disk(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("from the disk\n")
    use_scripted_model(
        box,
        [
            [tool("r1", "read", {"path": str(outside)})],
            [tool("e1", "edit", {"path": str(outside), "oldString": "disk", "newString": "DISK"})],
            [say("ok")],
        ],
        permissions={"allow": ["edit"]},
    )
    client = Recorder(files={}, declined=frozenset({str(outside)}))

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("shout")])

    run(go())
    assert outside.read_text() == "from the DISK\n"
    assert client.files == {}


def test_a_plugins_question_and_notice_reach_the_editor(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    use_scripted_model(
        box,
        [[tool("a1", "plugin__asker-node__confirm", {})], [tool("a2", "plugin__asker-node__notify", {})], [say("ok")]],
        permissions={"allow": ["plugin__asker-node__*"]},
    )
    client = Recorder(answers=["allow_once"])

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("ask me")])

    run(go())
    (asked, options) = client.asked[0]
    assert asked.tool_call_id == "a1"  # asked on the call that asks
    assert [o.name for o in options] == ["yes", "no"]
    question = [
        c.content.text
        for c in asked.content or []
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    ]
    assert question == ['plugin "asker-node" asks: proceed?']  # who asks comes first (ADR-0029)
    results = [result_text(r) for r in tool_results(model_requests(box)[-1])]
    assert "the person answered: yes" in results
    assert "asker-node: hello from asker" in client.notice_text()


def test_cancel_mid_tool_sends_tool_cancel_awaits_the_answer_and_ends_cancelled(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")
    use_scripted_model(
        box, [[tool("c1", "plugin__slow__wait", {})], [say("never")]], permissions={"allow": ["plugin__slow__wait"]}
    )
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            prompt = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text("wait")]))
            async with asyncio.timeout(WAIT):
                while not any(isinstance(u, ToolCallProgress) and u.content for u in client.calls()):
                    await asyncio.sleep(0.02)
            await conn.cancel(session_id=session.session_id)
            answer = await prompt
            assert answer.stop_reason == "cancelled"

    run(go())
    lines = [
        c.content.text
        for u in client.calls()
        if isinstance(u, ToolCallProgress) and u.status is None
        for c in u.content or []
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    ]
    assert lines == ["waiting"]
    assert client.statuses("c1")[-1] == "completed"  # the plugin answered its cancel, and was waited for
    assert "slow: got tool/cancel" in (box.logs / "plugin-slow.log").read_text()
    assert len(model_requests(box)) == 1  # the turn ended there


def test_cancel_while_the_model_streams_stops_it_and_ends_cancelled(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[say("Thinking about it"), {"hang": True}], [say("next answer")]])
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            prompt = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text("think")]))
            async with asyncio.timeout(WAIT):
                while "Thinking" not in client.agent_text():
                    await asyncio.sleep(0.02)
            await conn.cancel(session_id=session.session_id)
            assert (await prompt).stop_reason == "cancelled"
            again = await conn.prompt(session_id=session.session_id, prompt=[text("go on")])
            assert again.stop_reason == "end_turn"  # the session takes the next prompt

    run(go())
    assert "next answer" in client.agent_text()


def test_closing_a_session_cancels_its_prompt_and_it_can_be_loaded_again(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")
    use_scripted_model(
        box, [[tool("c1", "plugin__slow__wait", {})], [say("never")]], permissions={"allow": ["plugin__slow__wait"]}
    )
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            init = await conn.initialize(protocol_version=1)
            assert init.agent_capabilities is not None and init.agent_capabilities.session_capabilities is not None
            assert init.agent_capabilities.session_capabilities.close is not None
            session = await conn.new_session(cwd=str(box.project))
            prompt = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text("wait")]))
            async with asyncio.timeout(WAIT):
                while not client.statuses("c1"):
                    await asyncio.sleep(0.02)
            await conn.close_session(session_id=session.session_id)
            assert prompt.done() and prompt.result().stop_reason == "cancelled"  # answered before the close was
            try:
                await conn.prompt(session_id=session.session_id, prompt=[text("more")])
                raise AssertionError("a closed session took a prompt")
            except acp.RequestError as exc:
                assert exc.code == -32602
            await conn.load_session(cwd=str(box.project), session_id=session.session_id)

    run(go())
    assert "slow: got tool/cancel" in (box.logs / "plugin-slow.log").read_text()


def test_a_session_is_loaded_by_a_second_bingo_and_replayed(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("one two three\n")
    use_scripted_model(box, [[tool("c1", "read", {"path": "notes.txt"})], [say("It says one two three.")]])
    first = Recorder()
    ids: list[str] = []

    async def talk() -> None:
        async with connected(box, first) as conn:
            session = await conn.new_session(cwd=str(box.project))
            ids.append(session.session_id)
            await conn.prompt(session_id=session.session_id, prompt=[text("what do the notes say?")])

    run(talk())
    use_scripted_model(box, [[say("Again.")]])  # the second bingo's model
    again = Recorder()

    async def load() -> None:
        async with connected(box, again) as conn:
            await conn.load_session(cwd=str(box.project), session_id=ids[0])
            replayed = len(again.updates)
            assert replayed > 0  # before the answer
            answer = await conn.prompt(session_id=ids[0], prompt=[text("and now?")])
            assert answer.stop_reason == "end_turn"

    run(load())
    assert again.user_text().startswith("what do the notes say?")
    assert "It says one two three." in again.agent_text()
    assert again.statuses("c1") == ["pending", "completed"]
    assert "Again." in again.agent_text()
    last = model_requests(box)[-1]["request"]["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]  # the history came back
    listed = subprocess.run(
        [BINGO, "-p", "/sessions"], cwd=box.project, env=box.env, capture_output=True, text=True, timeout=60
    )
    assert ids[0] in listed.stdout  # the id the editor holds is bingo's own


def test_a_session_longer_than_a_reader_may_leave_unread_is_replayed_whole(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    long = "0123456789abcdef" * 100_000  # 1.6 MB an answer, 4.8 MB in all: past UNREAD_MAX (4 MiB)
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:  # a session as three long turns wrote it
        session_id = store.create(str(box.project))
        for n in range(3):
            store.append(session_id, PromptFrame(text=f"answer {n}", turn=n + 1))
            store.append(
                session_id,
                AssistantFrame(message=Message(role="assistant", content=[TextBlock(text=long)]), turn=n + 1),
            )
    again = Recorder()

    async def load() -> None:
        async with connected(box, again) as conn:
            await conn.load_session(cwd=str(box.project), session_id=session_id)

    run(load())
    assert again.agent_text() == long * 3
    assert again.user_text() == "answer 0answer 1answer 2"


def test_a_slash_command_shows_its_view_as_markdown(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("one two three\nfour\n")
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("/wordcount notes.txt")])
            assert answer.stop_reason == "end_turn"
            missing = await conn.prompt(session_id=session.session_id, prompt=[text("/nosuch")])
            assert missing.stop_reason == "end_turn"

    run(go())
    shown = client.agent_text()
    assert (
        "**notes.txt**\n\n| what | count |\n| --- | ---: |\n| words | 4 |\n| lines | 2 |" in shown
    )  # the View's markdown fold
    assert "there is no command /nosuch" in client.notice_text()  # bingo's own line, not message text
    assert "wordcount" in client.commands()


def test_read_and_edit_go_through_the_editors_files_and_the_edit_is_a_diff(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    on_disk = box.project / "app.py"
    on_disk.write_text("x = 1\n")
    unsaved = "x = 1\ny = 2\n"
    use_scripted_model(
        box,
        [
            [tool("r1", "read", {"path": "app.py"})],
            [tool("e1", "edit", {"path": "app.py", "oldString": "y = 2", "newString": "y = 3"})],
            [say("edited")],
        ],
        permissions={"allow": ["edit"]},
    )
    client = Recorder(files={str(on_disk): unsaved})

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("change y")])

    run(go())
    assert client.files == {str(on_disk): "x = 1\ny = 3\n"}
    assert on_disk.read_text() == "x = 1\n"  # the editor saves when the person says so
    (read,) = tool_results(model_requests(box)[1])
    assert "y = 2" in result_text(read)  # the model read the unsaved buffer
    finished = [u for u in client.calls() if u.tool_call_id == "e1" and u.status == "completed"]
    (diff,) = finished[0].content or []
    assert isinstance(diff, FileEditToolCallContent) and diff.path == str(on_disk)
    assert "y = 2" in (diff.old_text or "") and "y = 3" in diff.new_text
    started = next(u for u in client.calls() if isinstance(u, ToolCallStart) and u.tool_call_id == "r1")
    assert started.kind == "read" and started.locations and started.locations[0].path == project_path(box, "app.py")


def test_an_mcp_server_passed_in_session_new_is_a_plugin_under_the_gate(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[tool("m1", "plugin__mcp-sdk__add", {"a": 2, "b": 3})], [say("five")]])
    client = Recorder(answers=["allow_once"])
    server = McpServerStdio(
        name="MCP SDK", command=sys.executable, args=[str(TEST_PLUGINS / "mcp-sdk" / "server.py")], env=[]
    )

    async def go() -> None:
        async with connected(box, client) as conn:
            init = await conn.initialize(protocol_version=1)
            assert init.agent_capabilities is not None and init.agent_capabilities.mcp_capabilities is not None
            assert init.agent_capabilities.mcp_capabilities.http is True
            session = await conn.new_session(cwd=str(box.project), mcp_servers=[server])
            await conn.prompt(session_id=session.session_id, prompt=[text("add them")])
            again = await conn.new_session(cwd=str(box.project), mcp_servers=[server])  # started once
            assert again.session_id != session.session_id

    run(go())
    (asked, _) = client.asked[0]  # bridged, so untrusted: the gate asked
    assert asked.tool_call_id.startswith("permission-")
    (result,) = tool_results(model_requests(box)[1])
    assert result_text(result) == "2 + 3 = 5"
    assert "not started" not in client.agent_text()


def test_a_call_a_rule_denies_is_a_failed_call_and_a_turn_with_no_model_says_why(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box, [[tool("d1", "bash", {"command": "rm -rf x"})], [say("ok")]], permissions={"deny": ["bash(rm *)"]}
    )
    client = Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("clean up")])

    run(go())
    assert client.asked == []
    (denied,) = [u for u in client.calls() if u.tool_call_id == "d1"]
    assert isinstance(denied, ToolCallStart) and denied.status == "failed"
    assert "denied by the rule 'bash(rm *)'" in "".join(
        c.content.text
        for c in denied.content or []
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    )

    bare = Sandbox(tmp_path / "bare")
    nobody = Recorder()

    async def no_model() -> None:
        async with connected(bare, nobody) as conn:
            session = await conn.new_session(cwd=str(bare.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[text("hello?")])
            assert answer.stop_reason == "end_turn"

    run(no_model())
    assert "bingo: no model provider is configured" in nobody.notice_text()


def test_stdout_carries_the_protocol_and_nothing_else(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(box.project), "mcpServers": []}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "/help"}]},
        },
        {"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}},
        {"jsonrpc": "2.0", "id": 5, "method": "no/such", "params": {}},
    ]
    process = subprocess.Popen(
        [BINGO, "--acp"],
        cwd=box.project,
        env=box.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    messages: list[dict[str, object]] = []
    try:
        for line in lines:
            process.stdin.write(json.dumps(line) + "\n")
            process.stdin.flush()
            while True:  # up to this request's answer (updates may come first)
                messages.append(json.loads(process.stdout.readline()))
                if messages[-1].get("id") == line["id"]:
                    break
        process.stdin.close()
        process.wait(timeout=60)
        rest, stderr = process.stdout.read(), process.stderr.read() if process.stderr else ""
    finally:
        process.kill()
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
    messages += [json.loads(line) for line in rest.splitlines()]
    assert process.returncode == 0, stderr
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    answers: dict[object, Any] = {m["id"]: m for m in messages if "id" in m}
    assert answers[1]["result"]["agentCapabilities"]["loadSession"] is True
    assert answers[1]["result"]["agentCapabilities"]["promptCapabilities"]["image"] is True
    assert answers[2]["result"]["sessionId"]
    assert answers[3]["error"]["code"] == -32602 and "nope" in answers[3]["error"]["message"]
    assert answers[4]["error"]["code"] == -32602
    assert answers[5]["error"]["code"] == -32601
    assert "Traceback" not in stderr


def test_acp_takes_no_prompt(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    done = box.run("--acp", "hello")
    assert done.returncode == 2
    assert done.stderr.startswith("bingo: --acp takes no prompt")
