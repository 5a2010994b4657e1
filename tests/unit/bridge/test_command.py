"""The bridged command, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bingo.bridge.command import BridgedCommand
from bingo.kernel.errors import PluginError
from bingo.kernel.interfaces import CommandContext
from bingo.wire import (
    CommandArgs,
    CommandCompleteParams,
    CommandCompleteResult,
    CommandRunParams,
    CommandRunResult,
    CommandSpec,
    Completion,
    TextOutcome,
)
from bingo.wire.rpc import METHOD_NOT_FOUND
from tests.support.twin import Twin, memory_twin

_FREE = CommandSpec(name="wordcount", args=CommandArgs(kind="free"))


def _run(scenario: Callable[[Twin], Awaitable[None]], *, deadlines: dict[str, float] | None = None) -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("p", deadlines=deadlines) as twin:
            await scenario(twin)

    asyncio.run(main())


def test_run_crosses_the_raw_args_and_answers_the_outcome() -> None:
    async def scenario(twin: Twin) -> None:
        async def run(params: CommandRunParams) -> CommandRunResult:
            return CommandRunResult(outcome=TextOutcome(text=f"{params.name}|{params.args}|{params.cwd}"))

        twin.plugin.on_request("command/run", CommandRunParams, run)
        outcome = await BridgedCommand(twin.link, _FREE).run("a  b", CommandContext(cwd="/w", session="s"))
        assert outcome == TextOutcome(text="wordcount|a  b|/w")

    _run(scenario)


def test_completion_answers_what_the_plugin_offers() -> None:
    async def scenario(twin: Twin) -> None:
        async def complete(params: CommandCompleteParams) -> CommandCompleteResult:
            return CommandCompleteResult(completions=[Completion(value=params.partial + "otes.txt")])

        twin.plugin.on_request("command/complete", CommandCompleteParams, complete)
        assert await BridgedCommand(twin.link, _FREE).complete("n", "/w") == [Completion(value="notes.txt")]

    _run(scenario)


def test_a_plugin_without_completion_offers_none_and_is_not_asked_again() -> None:
    asked: list[str] = []

    async def scenario(twin: Twin) -> None:
        async def run(params: CommandRunParams) -> CommandRunResult:
            asked.append("run")
            return CommandRunResult(outcome=TextOutcome(text="ok"))

        twin.plugin.on_request("command/run", CommandRunParams, run)
        command = BridgedCommand(twin.link, _FREE)
        assert await command.complete("n", "/w") == []
        assert await command.complete("no", "/w") == []
        # the connection counts what it was sent: only one completion request crossed
        await command.run("", CommandContext(cwd="/w", session="s"))

    _run(scenario)
    assert asked == ["run"]


def test_completion_is_never_an_error() -> None:
    async def scenario(twin: Twin) -> None:
        async def complete(params: CommandCompleteParams) -> CommandCompleteResult:
            if params.partial == "boom":
                raise PluginError("broken", code=-32603)
            await asyncio.Event().wait()
            raise AssertionError

        twin.plugin.on_request("command/complete", CommandCompleteParams, complete)
        command = BridgedCommand(twin.link, _FREE)
        assert await command.complete("boom", "/w") == []
        assert await command.complete("late", "/w") == []

    _run(scenario, deadlines={"command/complete": 0.01})


def test_a_command_without_free_args_is_never_asked_for_completion() -> None:
    async def scenario(twin: Twin) -> None:
        command = BridgedCommand(twin.link, CommandSpec(name="hi"))
        assert await command.complete("x", "/w") == []

    _run(scenario)


def test_method_not_found_is_the_code_that_means_no_completion() -> None:
    assert METHOD_NOT_FOUND == -32601
