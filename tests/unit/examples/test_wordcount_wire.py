"""The wordcount example on the wire alone: its process driven by JSON-RPC lines written to
its stdin, its answers decoded into bingo's own wire types. No host is involved."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import msgspec

from bingo.bridge.discovery import entry_command
from bingo.bridge.manifest import read_manifest
from bingo.wire import (
    CommandCompleteParams,
    CommandCompleteResult,
    CommandRunParams,
    CommandRunResult,
    ErrorOutcome,
    HostEnv,
    InitializeParams,
    InitializeResult,
    Json,
    TableView,
    TextPart,
    ToolCallParams,
    ToolCallResult,
    ToolProgressParams,
    ViewOutcome,
    Wire,
    rpc,
)

PLUGIN = Path(__file__).resolve().parents[3] / "examples" / "plugins" / "wordcount"
TIMEOUT = 5.0  # every read from the plugin is bounded by this

T = TypeVar("T")


class _Pipe:
    """One plugin process, spoken to line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._ids = 0

    async def write(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def send(self, message: Wire) -> None:
        await self.write(msgspec.json.encode(message))

    async def receive(self) -> rpc.Envelope:
        assert self.process.stdout is not None
        async with asyncio.timeout(TIMEOUT):
            line = await self.process.stdout.readline()
        assert line, "the plugin closed its stdout"
        return msgspec.json.decode(line, type=rpc.Envelope)

    async def call(self, method: str, params: Json) -> tuple[list[rpc.Envelope], rpc.Envelope]:
        """Send a request; the notifications that came first, and the answer."""
        self._ids += 1
        await self.send(rpc.Request(id=self._ids, method=method, params=params))
        before: list[rpc.Envelope] = []
        while True:
            message = await self.receive()
            if message.id == self._ids and message.method is msgspec.UNSET:
                return before, message
            before.append(message)


def _result(message: rpc.Envelope, kind: type[T]) -> T:
    assert isinstance(message.result, msgspec.Raw), message
    return msgspec.json.decode(message.result, type=kind)


@asynccontextmanager
async def _wordcount() -> AsyncIterator[_Pipe]:
    argv, env = entry_command(read_manifest(PLUGIN), PLUGIN, os.environ)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
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


def _run(test: Callable[[_Pipe], Awaitable[None]]) -> None:
    async def main() -> None:
        async with _wordcount() as pipe:
            await test(pipe)

    asyncio.run(main())


def _initialize(cwd: Path) -> InitializeParams:
    env = HostEnv(host="test", host_version="0", platform="linux", cwd=str(cwd), data_dir=str(cwd))
    return InitializeParams(protocol=5, plugin_root=str(PLUGIN), config={}, env=env)


def _count(cwd: Path, path: str) -> ToolCallParams:
    return ToolCallParams(call_id="call-1", name="count", input={"path": path}, cwd=str(cwd), session="s", turn=1)


def _table(path: str, words: int, lines: int, characters: int) -> TableView:
    rows: list[list[str | int | float | None]] = [
        ["words", words],
        ["lines", lines],
        ["characters", characters],
    ]
    return TableView(title=path, columns=["what", "count"], rows=rows)


def test_handshake_declares_one_tool_and_one_command(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        _, answer = await pipe.call("initialize", _initialize(tmp_path))
        result = _result(answer, InitializeResult)
        assert (result.protocol, result.name, result.version) == (5, "wordcount", "0.1.0")
        [tool] = result.tools
        assert tool.name == "count"
        assert tool.input_schema["required"] == ["path"]
        [command] = result.commands
        assert command.name == "wordcount"
        assert (command.args.kind, command.args.hint) == ("free", "<path>")
        assert (command.instant, command.family) == (True, "plugin")
        assert result.providers == [] and result.services == []

    _run(test)


def test_count_sends_progress_then_text_and_a_table(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one two three\nfour five\n")

    async def test(pipe: _Pipe) -> None:
        before, answer = await pipe.call("tool/call", _count(tmp_path, "notes.txt"))
        [progress] = before
        assert progress.method == "tool/progress"
        assert isinstance(progress.params, msgspec.Raw)
        assert msgspec.json.decode(progress.params, type=ToolProgressParams) == (
            ToolProgressParams(call_id="call-1", tail="reading notes.txt")
        )
        output = _result(answer, ToolCallResult).output
        assert output.parts == [TextPart(text="notes.txt: 5 words, 2 lines, 24 characters")]
        assert output.display == _table("notes.txt", 5, 2, 24)
        assert not output.is_error

    _run(test)


def test_count_of_a_missing_file_is_an_error_output(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        _, answer = await pipe.call("tool/call", _count(tmp_path, "missing.txt"))
        output = _result(answer, ToolCallResult).output
        assert output.is_error
        [part] = output.parts
        assert isinstance(part, TextPart)
        assert part.text == "cannot read missing.txt: No such file or directory"

    _run(test)


def test_wordcount_command_answers_the_same_table_as_a_view(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x y")

    async def test(pipe: _Pipe) -> None:
        params = CommandRunParams(name="wordcount", args="a.txt", cwd=str(tmp_path), session="s")
        _, answer = await pipe.call("command/run", params)
        outcome = _result(answer, CommandRunResult).outcome
        assert outcome == ViewOutcome(view=_table("a.txt", 2, 1, 3))

    _run(test)


def test_wordcount_command_without_a_path_says_usage(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        params = CommandRunParams(name="wordcount", args="  ", cwd=str(tmp_path), session="s")
        _, answer = await pipe.call("command/run", params)
        outcome = _result(answer, CommandRunResult).outcome
        assert outcome == ErrorOutcome(message="usage: /wordcount <path>")

    _run(test)


def test_completion_lists_matching_files_including_in_a_subdirectory(tmp_path: Path) -> None:
    for name in ("notes.txt", "novel.md", "other.txt", ".notes.swp", "docs/nested.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "nodir").mkdir()

    async def complete(pipe: _Pipe, partial: str) -> list[str]:
        params = CommandCompleteParams(name="wordcount", partial=partial, cwd=str(tmp_path))
        _, answer = await pipe.call("command/complete", params)
        return [c.value for c in _result(answer, CommandCompleteResult).completions]

    async def test(pipe: _Pipe) -> None:
        assert await complete(pipe, "no") == ["nodir/", "notes.txt", "novel.md"]
        assert await complete(pipe, "docs/ne") == ["docs/nested.txt"]
        assert await complete(pipe, "absent/") == []

    _run(test)


def test_an_unknown_method_is_answered_method_not_found(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        _, answer = await pipe.call("context/contribute", {"id": "x"})
        assert isinstance(answer.error, rpc.ErrorObject)
        assert answer.error.code == rpc.METHOD_NOT_FOUND

    _run(test)


def test_unknown_notifications_and_bad_lines_do_not_stop_it(tmp_path: Path) -> None:
    async def test(pipe: _Pipe) -> None:
        await pipe.send(rpc.Notification(method="tool/cancel", params={"callId": "call-1"}))
        await pipe.write(b"this is not json")
        bad = await pipe.receive()
        assert isinstance(bad.error, rpc.ErrorObject)
        assert (bad.id, bad.error.code) == (None, rpc.PARSE_ERROR)
        _, answer = await pipe.call("initialize", _initialize(tmp_path))
        assert _result(answer, InitializeResult).name == "wordcount"

    _run(test)


def test_it_exits_cleanly_when_stdin_closes() -> None:
    async def test(pipe: _Pipe) -> None:
        assert pipe.process.stdin is not None
        pipe.process.stdin.close()
        async with asyncio.timeout(TIMEOUT):
            assert await pipe.process.wait() == 0

    _run(test)
