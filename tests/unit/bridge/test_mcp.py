"""The MCP client (`bridge/_mcp.py`) against a real server: the official SDK's `MCPServer`
in `tests/plugins/mcp-sdk`, spawned over pipes. What the black-box tests cannot reach: a
prompt's argument completion, an elicitation a person answers, and the reading of a
command's words as a prompt's arguments."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from bingo.bridge._link import Calls, Peer
from bingo.bridge._mcp import McpClient
from bingo.bridge._mcp_asks import elicit_through
from bingo.bridge.command import BridgedCommand
from bingo.bridge.tool import BridgedTool
from bingo.endpoint import Connection
from bingo.kernel.interfaces import CommandContext, ToolCall
from bingo.wire import (
    CommandSpec,
    ErrorOutcome,
    HostEnv,
    InitializeParams,
    InitializeResult,
    PromptOutcome,
    TextPart,
    ToolOutput,
)

SERVER = Path(__file__).resolve().parents[2] / "plugins" / "mcp-sdk" / "server.py"


def _text(output: ToolOutput) -> str:
    return "".join(part.text for part in output.parts if isinstance(part, TextPart))


class _Link:
    """A Link over one McpClient, sharing its book of calls (as the plugin handle does)."""

    def __init__(self, conn: McpClient, calls: Calls) -> None:
        self._conn, self._calls = conn, calls

    @property
    def name(self) -> str:
        return "s"

    @property
    def calls(self) -> Calls:
        return self._calls

    def current(self) -> Peer | None:
        return self._conn

    async def connection(self) -> Peer:
        return self._conn

    def abandon(self, why: str) -> None:
        raise AssertionError(why)

    def fault(self, key: str, message: str) -> None:
        raise AssertionError(message)


def _run(scenario: Callable[[McpClient, InitializeResult, _Link], Awaitable[None]], *, stateless: bool = False) -> None:
    async def main() -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SERVER),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            calls = Calls()
            conn = McpClient(
                Connection(proc.stdout, proc.stdin, name="plugin s"),
                plugin="s",
                log=lambda _: None,
                progress=calls.progress,
                elicit=elicit_through(calls, "s"),
            )
            async with asyncio.timeout(20), conn:
                params = InitializeParams(
                    protocol=5,
                    plugin_root="/",
                    config={},
                    env=HostEnv(host="bingo", host_version="0", platform="linux", cwd="/", data_dir="/tmp"),
                )
                # The SDK's server speaks both eras; bingo picks the handshake unless it is
                # told no (as a stateless-only server's -32022 tells it): `discover` is that.
                info = (
                    await conn.discover("0") if stateless else await conn.call("initialize", params, InitializeResult)
                )
                link = _Link(conn, calls)
                await scenario(conn, info, link)
        finally:
            proc.stdin.close()
            await proc.wait()

    asyncio.run(main())


def _command(info: InitializeResult, name: str) -> CommandSpec:
    [spec] = [command for command in info.commands if command.name == name]
    return spec


def test_the_handshake_declares_tools_by_their_own_names_and_prompts_as_name_colon_prompt() -> None:
    async def scenario(conn: McpClient, info: InitializeResult, link: _Link) -> None:
        assert info.protocol == 5 and info.name == "s"
        assert {"add", "steps", "wait", "confirm"} <= {tool.name for tool in info.tools}
        greet = _command(info, "s:greet")
        assert greet.args.kind == "free" and greet.args.hint == "<name>"
        assert conn.revision == "2025-11-25"

    _run(scenario)


def test_a_prompts_argument_completes_through_completion_complete() -> None:
    async def scenario(conn: McpClient, info: InitializeResult, link: _Link) -> None:
        command = BridgedCommand(link, _command(info, "s:greet"))
        assert [c.value for c in await command.complete("Al", "/")] == ["Alice", "Albert"]
        assert [c.value for c in await command.complete("B", "/")] == ["Bob"]

    _run(scenario)


def test_a_prompt_runs_as_the_persons_turn_and_a_missing_argument_says_how_to_call_it() -> None:
    async def scenario(conn: McpClient, info: InitializeResult, link: _Link) -> None:
        command = BridgedCommand(link, _command(info, "s:greet"))
        ctx = CommandContext(cwd="/", session="s")
        assert await command.run("name=Zed", ctx) == PromptOutcome(text="Please write a short greeting for Zed.")
        assert await command.run('"Ann Lee"', ctx) == PromptOutcome(text="Please write a short greeting for Ann Lee.")
        assert await command.run("", ctx) == ErrorOutcome(message="missing name: /s:greet <name>")

    _run(scenario)


def test_an_elicitation_is_put_to_the_person_through_the_running_call() -> None:
    asked: list[tuple[str, list[str] | None]] = []

    async def ask(question: str, choices: list[str] | None) -> str:
        asked.append((question, choices))
        return "yes"

    async def scenario(conn: McpClient, info: InitializeResult, link: _Link) -> None:
        [spec] = [tool for tool in info.tools if tool.name == "confirm"]
        tool = BridgedTool(link, spec)
        output = await tool.call(ToolCall(call_id="c1", input={}, cwd="/", session="s", turn=1, ask=ask))
        assert _text(output) == "elicitation accept: ok=True"
        [(question, choices)] = asked
        assert question.startswith('MCP server "s" asks: Really go on?') and choices == ["yes", "no"]

    _run(scenario)


def test_in_the_stateless_revision_every_request_carries_it_and_the_server_answers_them() -> None:
    # The SDK refuses any request of this revision whose `_meta` lacks the revision and the
    # client's capabilities: that the calls are answered is the proof that they carry them.
    async def scenario(conn: McpClient, info: InitializeResult, link: _Link) -> None:
        assert conn.revision == "2026-07-28"
        assert {"add", "confirm"} <= {tool.name for tool in info.tools}
        [spec] = [tool for tool in info.tools if tool.name == "add"]
        added = await BridgedTool(link, spec).call(
            ToolCall(call_id="c1", input={"a": 1, "b": 2}, cwd="/", session="s", turn=1)
        )
        assert _text(added) == "1 + 2 = 3"
        command = BridgedCommand(link, _command(info, "s:greet"))
        assert await command.run("Zed", CommandContext(cwd="/", session="s")) == PromptOutcome(
            text="Please write a short greeting for Zed."
        )
        assert [c.value for c in await command.complete("Al", "/")] == ["Alice", "Albert"]

    _run(scenario, stateless=True)
