"""The test plugins of `tests/plugins/` on the wire alone: each is started from its own
manifest, handshaken, and asked for one thing, by JSON-RPC lines written to its stdin. This
proves the fixtures the black-box tests lean on do what they say; no host is involved."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import msgspec
import pytest

from bingo.bridge.discovery import entry_command
from bingo.bridge.manifest import read_manifest
from bingo.wire import (
    CommandRunResult,
    ContributeResult,
    HookOutcome,
    HostEnv,
    InitializeParams,
    InitializeResult,
    Json,
    ProviderDeltaParams,
    ProviderStreamResult,
    ServiceCallParams,
    ServiceCallResult,
    TextBlock,
    TextDelta,
    TextOutcome,
    TextPart,
    ToolCallResult,
    ToolOutput,
    ToolUseBlock,
    ToolUseDelta,
    Wire,
    rpc,
)

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
TIMEOUT = 5.0  # every read from a plugin is bounded by this
T = TypeVar("T")

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")


class _Pipe:
    """One plugin process, spoken to line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = 0

    async def send(self, message: Wire) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(msgspec.json.encode(message) + b"\n")
        await self.process.stdin.drain()

    async def readline(self) -> bytes:
        assert self.process.stdout is not None
        async with asyncio.timeout(TIMEOUT):
            line = await self.process.stdout.readline()
        assert line, "the plugin closed its stdout"
        return line

    async def receive(self) -> rpc.Envelope:
        return msgspec.json.decode(await self.readline(), type=rpc.Envelope)

    async def request(self, method: str, params: Json) -> int:
        self._ids += 1
        await self.send(rpc.Request(id=self._ids, method=method, params=params))
        return self._ids

    async def call(self, method: str, params: Json) -> tuple[list[rpc.Envelope], rpc.Envelope]:
        """Send a request; the messages that came before its answer, and the answer."""
        request_id = await self.request(method, params)
        before: list[rpc.Envelope] = []
        while True:
            message = await self.receive()
            if message.id == request_id and message.method is msgspec.UNSET:
                return before, message
            before.append(message)

    async def handshake(self, data_dir: Path, config: dict[str, Json] | None = None) -> InitializeResult:
        env = HostEnv(host="test", host_version="0", platform="linux", cwd=str(data_dir), data_dir=str(data_dir))
        params = InitializeParams(protocol=5, plugin_root="", config=config or {}, env=env)
        _, answer = await self.call("initialize", params)
        return _result(answer, InitializeResult)


def _result(message: rpc.Envelope, kind: type[T]) -> T:
    assert isinstance(message.result, msgspec.Raw), message
    return msgspec.json.decode(message.result, type=kind)


def _params(message: rpc.Envelope, kind: type[T]) -> T:
    assert isinstance(message.params, msgspec.Raw), message
    return msgspec.json.decode(message.params, type=kind)


@asynccontextmanager
async def _started(name: str) -> AsyncIterator[_Pipe]:
    root = PLUGINS / name
    argv, env = entry_command(read_manifest(root), root, os.environ)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        yield _Pipe(process)
    finally:
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                async with asyncio.timeout(TIMEOUT):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()


def _run(name: str, test: Callable[[_Pipe], Awaitable[None]]) -> None:
    async def main() -> None:
        async with _started(name) as pipe:
            await test(pipe)

    asyncio.run(main())


def _tool(name: str, call_id: str, input: Json = None) -> dict[str, Json]:
    return {"callId": call_id, "name": name, "input": input or {}, "cwd": "/", "session": "s", "turn": 1}


def _text(output: ToolOutput) -> str:
    return "".join(p.text for p in output.parts if isinstance(p, TextPart))


def test_every_test_plugin_has_a_manifest_named_as_its_directory() -> None:
    # zoo/ and mistakes/ hold the misbehaving plugins, some of them misnamed on purpose; mcp-oauth is
    # an HTTP MCP server a test starts on a port of its own, so it has no manifest to be found by.
    skipped = ("zoo", "mistakes", "mcp-oauth")
    names = sorted(p.name for p in PLUGINS.iterdir() if p.is_dir() and p.name not in skipped)
    assert {"asker-node", "badproto", "chatty", "crashy", "echo-node", "scripted-model", "slow", "wrongname"} <= set(
        names
    )
    for name in names:
        assert read_manifest(PLUGINS / name).name == name


def test_scripted_model_streams_its_script_and_records_requests(tmp_path: Path) -> None:
    script = {
        "replies": [[{"text": "counting now"}, {"tool": {"id": "t1", "name": "plugin__x__y", "input": {"a": 1}}}]]
    }
    stream = {"id": "scripted", "streamId": "s1", "request": {"model": "scripted-1", "messages": []}}

    async def test(pipe: _Pipe) -> None:
        init = await pipe.handshake(tmp_path, script)
        assert [p.name for p in init.providers] == ["scripted"]
        before, answer = await pipe.call("provider/stream", stream)
        deltas = [_params(m, ProviderDeltaParams).delta for m in before]
        assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "counting now"
        assert deltas[-1] == ToolUseDelta(id="t1", name="plugin__x__y", input={"a": 1})
        response = _result(answer, ProviderStreamResult).response
        assert response.stop_reason == "toolUse"
        assert response.message.content[-1] == ToolUseBlock(id="t1", name="plugin__x__y", input={"a": 1})
        _, answer = await pipe.call("provider/stream", {**stream, "streamId": "s2"})
        finished = _result(answer, ProviderStreamResult).response
        assert finished.stop_reason == "end"
        assert finished.message.content == [TextBlock(text="(script finished)")]
        lines = (tmp_path / "requests.jsonl").read_text().splitlines()
        assert [msgspec.json.decode(line)["method"] for line in lines] == [
            "initialize",
            "provider/stream",
            "provider/stream",
        ]

    _run("scripted-model", test)


def test_scripted_model_hang_ends_on_provider_cancel(tmp_path: Path) -> None:
    stream = {"id": "scripted", "streamId": "s1", "request": {"model": "m", "messages": []}}

    async def test(pipe: _Pipe) -> None:
        await pipe.handshake(tmp_path, {"replies": [[{"text": "hm"}, {"hang": True}]]})
        request_id = await pipe.request("provider/stream", stream)
        while (await pipe.receive()).method != "provider/delta":
            pass
        await pipe.send(rpc.Notification(method="provider/cancel", params={"streamId": "s1"}))
        answer = await pipe.receive()
        while answer.id != request_id:
            answer = await pipe.receive()
        assert _result(answer, ProviderStreamResult).response.stop_reason == "cancelled"

    _run("scripted-model", test)


@needs_node
def test_echo_node_answers_each_kind(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        init = await pipe.handshake(tmp_path)
        assert [t.name for t in init.tools] == ["echo"]
        before, answer = await pipe.call("tool/call", _tool("echo", "c1", {"text": "hi"}))
        assert [m.method for m in before] == ["tool/progress"]
        assert _text(_result(answer, ToolCallResult).output) == "hi"
        _, answer = await pipe.call("command/run", {"name": "shout", "args": "hey", "cwd": "/", "session": "s"})
        assert _result(answer, CommandRunResult).outcome == TextOutcome(text="HEY")
        query = {"session": "s", "turn": 3, "cwd": "/", "prompt": "hello"}
        _, answer = await pipe.call("context/contribute", {"id": "clock", "query": query})
        [piece] = _result(answer, ContributeResult).pieces
        assert piece.text == 'clock: turn 3, prompt "hello"'
        payload = {"tool": "plugin__echo-node__echo", "input": {"text": "forbidden"}, "callId": "x"}
        decide = {"id": "guard", "site": "tool", "point": "before", "payload": payload}
        _, answer = await pipe.call("hook/decide", decide)
        assert _result(answer, HookOutcome).outcome == "deny"
        service = ServiceCallParams(key="echo.svc", method="reverse", params={"text": "abc"})
        _, answer = await pipe.call("service/call", service)
        assert _result(answer, ServiceCallResult).result == {"text": "cba"}

    _run("echo-node", test)


@needs_node
def test_echo_node_answers_a_held_call_when_cancelled(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        await pipe.handshake(tmp_path)
        held = _tool("echo", "c9", {"text": "x", "wait": True})
        request_id = await pipe.request("tool/call", held)
        assert (await pipe.receive()).method == "tool/progress"
        await pipe.send(rpc.Notification(method="tool/cancel", params={"callId": "c9"}))
        answer = await pipe.receive()
        assert answer.id == request_id
        output = _result(answer, ToolCallResult).output
        assert (output.is_error, _text(output)) == (True, "cancelled")

    _run("echo-node", test)


@needs_node
def test_asker_node_asks_the_host_on_its_own_call(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        await pipe.handshake(tmp_path)
        request_id = await pipe.request("tool/call", _tool("confirm", "c1"))
        ask = await pipe.receive()
        assert ask.method == "service/call" and isinstance(ask.id, (int, str))
        params = _params(ask, ServiceCallParams)
        assert (params.key, params.method) == ("bingo.host", "ask")
        assert params.params == {"call": "c1", "question": "proceed?", "choices": ["yes", "no"]}
        await pipe.send(rpc.Response(id=ask.id, result={"result": {"answer": "yes"}}))
        answer = await pipe.receive()
        assert answer.id == request_id
        assert _text(_result(answer, ToolCallResult).output) == "the person answered: yes"
        request_id = await pipe.request("tool/call", _tool("stale", "c2"))
        ask = await pipe.receive()
        assert isinstance(ask.id, (int, str))
        assert _params(ask, ServiceCallParams).params == {"call": "nope", "question": "proceed?"}
        error = rpc.ErrorObject(code=rpc.REFUSED, message="not your call")
        await pipe.send(rpc.ErrorResponse(id=ask.id, error=error))
        answer = await pipe.receive()
        assert _text(_result(answer, ToolCallResult).output) == "refused (-32002): not your call"

    _run("asker-node", test)


def test_slow_waits_for_tool_cancel(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        init = await pipe.handshake(tmp_path)
        assert [h.name for h in init.hooks] == ["sleepy"]
        request_id = await pipe.request("tool/call", _tool("wait", "c1"))
        assert (await pipe.receive()).method == "tool/progress"
        await pipe.send(rpc.Notification(method="tool/cancel", params={"callId": "c1"}))
        answer = await pipe.receive()
        assert answer.id == request_id
        assert _text(_result(answer, ToolCallResult).output) == "cancelled after cancel"
        assert pipe.process.stderr is not None
        async with asyncio.timeout(TIMEOUT):
            assert await pipe.process.stderr.readline() == b"slow: got tool/cancel\n"

    _run("slow", test)


def test_crashy_counts_its_start_and_dies_with_status_3(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        await pipe.handshake(tmp_path)
        _, answer = await pipe.call("tool/call", _tool("ok", "c1"))
        assert _text(_result(answer, ToolCallResult).output) == "still here"
        await pipe.request("tool/call", _tool("boom", "c2"))
        async with asyncio.timeout(TIMEOUT):
            assert await pipe.process.wait() == 3
        assert pipe.process.stderr is not None
        assert await pipe.process.stderr.read() == b"about to die\n"
        assert len((tmp_path / "starts.txt").read_text().splitlines()) == 1

    _run("crashy", test)


@pytest.mark.parametrize(("plugin", "protocol", "name"), [("badproto", 4, "badproto"), ("wrongname", 5, "othername")])
def test_misfits_answer_what_they_should_not(tmp_path: Path, plugin: str, protocol: int, name: str) -> None:
    async def test(pipe: _Pipe) -> None:
        init = await pipe.handshake(tmp_path)
        assert (init.protocol, init.name) == (protocol, name)

    _run(plugin, test)


def test_chatty_says_hello_before_its_handshake_then_works(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        await pipe.request("initialize", {"protocol": 5})
        assert await pipe.readline() == b"hello there\n"
        assert _result(await pipe.receive(), InitializeResult).name == "chatty"
        _, answer = await pipe.call("tool/call", _tool("ping", "c1"))
        assert _text(_result(answer, ToolCallResult).output) == "pong"

    _run("chatty", test)


def test_declares_declares_its_config_and_answers_each_hook_as_told(tmp_path: Path) -> None:
    config: dict[str, Json] = {
        "hooks": [
            {"name": "guard", "site": "tool", "points": ["before"]},
            {"name": "odd", "site": "tools", "points": ["pre"]},
        ],
        "commands": ["help"],
        "answers": {"guard": "deny-bash", "odd": {"outcome": "redirect", "value": {}}},
    }

    async def test(pipe: _Pipe) -> None:
        init = await pipe.handshake(tmp_path, config)
        assert (init.name, [h.site for h in init.hooks], [c.name for c in init.commands]) == (
            "declares",
            ["tool", "tools"],
            ["help"],
        )
        decide = {
            "id": "guard",
            "site": "tool",
            "point": "before",
            "payload": {"tool": "bash", "input": {}, "callId": "c1"},
        }
        _, answer = await pipe.call("hook/decide", decide)
        assert _result(answer, HookOutcome) == HookOutcome(outcome="deny", value="no shell here")
        _, answer = await pipe.call("hook/decide", {**decide, "id": "odd"})
        assert _result(answer, HookOutcome) == HookOutcome(outcome="redirect", value={})
        _, answer = await pipe.call("command/run", {"name": "help", "args": "", "cwd": "/", "session": "s"})
        assert _result(answer, CommandRunResult).outcome == TextOutcome(text="declares's own /help")

    _run("declares", test)
    seen = [line for line in (tmp_path / "decided.jsonl").read_text().splitlines() if line]
    assert len(seen) == 2
