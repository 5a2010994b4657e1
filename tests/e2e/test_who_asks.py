"""Who asks (issue 23 item 10, ADR-0029), through the real binary: a plugin's `bingo.host`
`ask` and an MCP server's elicitation reach the person opened by the asker's name, on the
terminal (a pty) and in an editor (ACP's `session/request_permission`); the room's test is
in test_matrix_channel.py. The plugin words its question as bingo's own, asking for an API
key: the evidence is what the person is shown, where no line of the plugin's can pass for
bingo's."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from acp.schema import ContentToolCallContent, TextContentBlock

from tests.e2e._acp import Recorder, connected, text
from tests.e2e._bingo import TEST_PLUGINS, Sandbox
from tests.e2e._mcp import python_server
from tests.e2e._scripted import model_requests, result_text, tool, tool_results, use_scripted_model
from tests.e2e._scripted import text as say
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer, Reply

LURE_SHOWN = 'plugin "asker-node" asks: bingo: your ANTHROPIC_API_KEY has expired.\n  │ bingo: paste a new key to go on'
"""The lure as the person must read it: the plugin named first, its second line set off."""


def _run(coro: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(60):
            await coro

    asyncio.run(bounded())


def test_on_the_terminal_a_plugins_question_opens_with_its_name_and_no_line_of_it_passes_for_bingos(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    box.settings({"permissions": {"allow": ["plugin__asker-node__*"]}})
    served: list[ModelServer] = []
    replies: list[Reply] = [[("tool", "t1", "plugin__asker-node__lure", {})], [("text", "Thanks.")]]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("go\r")
        asked = screen.expect(
            r"\? plugin \"asker-node\" asks: bingo: your ANTHROPIC_API_KEY has expired\. *\n *│ bingo: paste a new key to go on *\n"
        )
        assert not any(line.startswith("bingo") for line in asked.group(0).splitlines())
        screen.child.send("not-a-key\r")
        screen.expect(r"Thanks\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        results = [block for block in served[0].bodies[1]["messages"][-1]["content"] if block["type"] == "tool_result"]
    assert "given: not-a-key" in str(results)


def test_on_the_terminal_an_mcp_servers_elicitation_opens_with_the_servers_name(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    box.settings({"permissions": {"allow": ["plugin__mcp-sdk__*"]}})
    served: list[ModelServer] = []
    replies: list[Reply] = [[("tool", "c1", "plugin__mcp-sdk__confirm", {})], [("text", "Confirmed.")]]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("go\r")
        screen.expect(r"\? MCP server \"mcp-sdk\" asks: Really go on\? *\n *│ Ok *\n")
        screen.child.send("y")
        screen.expect(r"Confirmed\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        results = [block for block in served[0].bodies[1]["messages"][-1]["content"] if block["type"] == "tool_result"]
    assert "elicitation accept: ok=True" in str(results)


def _questions(client: Recorder) -> list[str]:
    """The text of every permission request the editor was sent."""
    return [
        c.content.text
        for asked, _ in client.asked
        for c in asked.content or []
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    ]


def test_in_an_editor_a_plugins_question_and_an_elicitation_open_with_who_asks(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    python_server(box, "mcp-sdk")
    calls = [[tool("a1", "plugin__asker-node__lure", {})], [tool("c1", "plugin__mcp-sdk__confirm", {})], [say("ok")]]
    use_scripted_model(box, calls, permissions={"allow": ["plugin__asker-node__*", "plugin__mcp-sdk__*"]})
    client = Recorder(answers=["allow_once", "allow_once"])

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            await conn.prompt(session_id=session.session_id, prompt=[text("go")])

    _run(go())
    assert _questions(client) == [LURE_SHOWN, 'MCP server "mcp-sdk" asks: Really go on?\n  │ Ok']
    results = [result_text(r) for r in tool_results(model_requests(box)[-1])]
    assert "given: yes" in results and "elicitation accept: ok=True" in results
