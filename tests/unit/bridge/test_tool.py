"""The bridged tool, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import msgspec
import pytest

from bingo.bridge._link import StaticLink
from bingo.bridge.tool import BridgedTool
from bingo.kernel.errors import DeadlinePassed
from bingo.kernel.interfaces import ToolCall
from bingo.wire import (
    InitializeResult,
    TextPart,
    ToolCallParams,
    ToolCallResult,
    ToolCancelParams,
    ToolOutput,
    ToolProgressParams,
    ToolSpec,
    ToolTraits,
)
from bingo.wire.rpc import DEADLINE
from tests.support.twin import Twin, memory_twin

_SPEC = ToolSpec(name="count", description="counts", input_schema={"type": "object"})


def _text(output: ToolOutput) -> str:
    part = output.parts[0]
    assert isinstance(part, TextPart)
    return part.text


def _run(scenario: Callable[[Twin], Awaitable[None]], *, deadlines: dict[str, float] | None = None) -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("p", deadlines=deadlines) as twin:
            await scenario(twin)

    asyncio.run(main())


def test_a_bridged_tool_is_renamed_and_wears_default_traits_whatever_it_claims() -> None:
    declared = msgspec.json.decode(
        b'{"protocol":5,"name":"wc","tools":[{"name":"count","traits":{"trusted":true,"readOnly":true}}]}',
        type=InitializeResult,
    )
    tool = BridgedTool(StaticLink("wc", None), declared.tools[0])
    assert tool.spec.name == "plugin__wc__count"
    assert tool.traits == ToolTraits()
    assert tool.source == "wc"


def test_a_call_sends_the_plugins_own_name_and_progress_reaches_the_call() -> None:
    lines: list[str] = []

    async def scenario(twin: Twin) -> None:
        async def call(params: ToolCallParams) -> ToolCallResult:
            twin.plugin.notify("tool/progress", ToolProgressParams(call_id=params.call_id, tail="reading"))
            twin.plugin.notify("tool/progress", ToolProgressParams(call_id="other", tail="not ours"))
            return ToolCallResult(output=ToolOutput(parts=[TextPart(text=f"{params.name} {params.input}")]))

        twin.plugin.on_request("tool/call", ToolCallParams, call)
        tool = BridgedTool(twin.link, _SPEC)
        output = await tool.call(ToolCall("c1", {"path": "x"}, "/w", "s", 1, progress=lines.append))
        assert _text(output) == "count {'path': 'x'}"
        assert twin.link.calls.tools == {} and twin.link.calls.ended == {"c1"}

    _run(scenario)
    assert lines == ["reading"]


def test_an_interrupted_call_sends_tool_cancel_and_still_waits_for_the_answer() -> None:
    async def scenario(twin: Twin) -> None:
        started, cancelled = asyncio.Event(), asyncio.Event()

        async def call(params: ToolCallParams) -> ToolCallResult:
            started.set()
            await cancelled.wait()
            return ToolCallResult(output=ToolOutput(parts=[TextPart(text="stopped early")]))

        def cancel(params: ToolCancelParams) -> None:
            assert params.call_id == "c1"
            cancelled.set()

        twin.plugin.on_request("tool/call", ToolCallParams, call)
        twin.plugin.on_notification("tool/cancel", ToolCancelParams, cancel)
        call_record = ToolCall("c1", {}, "/w", "s", 1)
        running = asyncio.create_task(BridgedTool(twin.link, _SPEC).call(call_record))
        await started.wait()
        call_record.interrupted.set()
        assert _text(await running) == "stopped early"

    _run(scenario)


def test_an_abandoned_call_asks_its_link_to_stop_the_plugin() -> None:
    async def scenario(twin: Twin) -> None:
        started = asyncio.Event()

        async def call(params: ToolCallParams) -> ToolCallResult:
            started.set()
            await asyncio.Event().wait()  # ignores its cancel, forever
            raise AssertionError("not reached")

        twin.plugin.on_request("tool/call", ToolCallParams, call)
        call_record = ToolCall("c1", {}, "/w", "s", 1)
        running = asyncio.create_task(BridgedTool(twin.link, _SPEC).call(call_record))
        await started.wait()
        call_record.interrupted.set()
        assert twin.link.abandoned == []
        call_record.abandoned.set()
        running.cancel()  # what the kernel does next (Conversation.abandon)
        with pytest.raises(asyncio.CancelledError):
            await running
        assert twin.link.abandoned == ["it did not answer tool/cancel of count, and the person stopped waiting for it"]

    _run(scenario)


def test_a_late_tool_fails_with_code_deadline_and_one_fault() -> None:
    async def scenario(twin: Twin) -> None:
        async def call(params: ToolCallParams) -> ToolCallResult:
            await asyncio.Event().wait()
            raise AssertionError

        twin.plugin.on_request("tool/call", ToolCallParams, call)
        with pytest.raises(DeadlinePassed) as caught:
            await BridgedTool(twin.link, _SPEC).call(ToolCall("c1", {}, "/w", "s", 1))
        assert caught.value.code == DEADLINE
        assert twin.link.faults == [
            f"tool {_SPEC.name}: plugin p did not answer tool/call within 0.01 s: deadlines.tool/call in settings sets how long to wait"
        ]

    _run(scenario, deadlines={"tool/call": 0.01})


def test_a_plugin_that_is_not_running_answers_an_error_output_at_once() -> None:
    async def main() -> ToolOutput:
        return await BridgedTool(StaticLink("wc", None), _SPEC).call(ToolCall("c1", {}, "/w", "s", 1))

    output = asyncio.run(main())
    assert output.is_error
    assert _text(output) == "plugin wc is not running"


def test_a_call_that_must_wait_for_its_plugin_to_start_says_so_on_its_live_line() -> None:
    lines: list[str] = []

    async def main() -> None:
        await BridgedTool(StaticLink("wc", None), _SPEC).call(ToolCall("c1", {}, "/w", "s", 1, progress=lines.append))

    asyncio.run(main())
    assert lines == ["starting wc"]


def test_an_interrupt_that_came_before_the_call_began_sends_tool_cancel_after_the_request() -> None:
    async def scenario(twin: Twin) -> None:
        order: list[str] = []
        cancelled = asyncio.Event()

        async def call(params: ToolCallParams) -> ToolCallResult:
            order.append("tool/call")
            await cancelled.wait()
            return ToolCallResult(output=ToolOutput(parts=[TextPart(text="stopped at once")]))

        def cancel(params: ToolCancelParams) -> None:
            order.append("tool/cancel")
            cancelled.set()

        twin.plugin.on_request("tool/call", ToolCallParams, call)
        twin.plugin.on_notification("tool/cancel", ToolCancelParams, cancel)
        call_record = ToolCall("c1", {}, "/w", "s", 1)
        call_record.interrupted.set()
        assert _text(await BridgedTool(twin.link, _SPEC).call(call_record)) == "stopped at once"
        assert order == ["tool/call", "tool/cancel"]

    _run(scenario)


def test_an_interrupt_after_the_call_ended_sends_nothing() -> None:
    async def scenario(twin: Twin) -> None:
        cancels: list[str] = []

        async def call(params: ToolCallParams) -> ToolCallResult:
            return ToolCallResult(output=ToolOutput(parts=[TextPart(text="done")]))

        twin.plugin.on_request("tool/call", ToolCallParams, call)
        twin.plugin.on_notification("tool/cancel", ToolCancelParams, lambda params: cancels.append(params.call_id))
        call_record = ToolCall("c1", {}, "/w", "s", 1)
        assert _text(await BridgedTool(twin.link, _SPEC).call(call_record)) == "done"
        call_record.interrupted.set()
        assert call_record.interrupted.is_set()
        await call_record.interrupted.wait()  # returns at once: the flag is up
        # A second call on the same connection is answered, and no cancel went before it.
        assert _text(await BridgedTool(twin.link, _SPEC).call(ToolCall("c2", {}, "/w", "s", 1))) == "done"
        assert cancels == []

    _run(scenario)
