"""The `agent` tool over a stand-in factory: at most `agents.maxConcurrent` children at once,
and the parent's interrupt reaching a running child."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from bingo.kernel.interfaces import ToolCall
from bingo.kernel.settings import Settings
from bingo.kernel.turn import TurnResult
from bingo.run import AgentTool, RunFactory
from bingo.run._run import _CURRENT  # pyright: ignore[reportPrivateUsage]
from bingo.wire import TextPart


class _Children:
    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.gate = asyncio.Event()
        self.interrupted: list[str] = []


class _Child:
    def __init__(self, seen: _Children, call_id: str) -> None:
        self.seen, self.name, self.call_id = seen, "general", call_id
        self.result: TurnResult | None = None
        self.stop = asyncio.Event()

    async def run(self, prompt: str) -> TurnResult:
        self.seen.running += 1
        self.seen.most = max(self.seen.most, self.seen.running)
        try:
            gate, stop = asyncio.ensure_future(self.seen.gate.wait()), asyncio.ensure_future(self.stop.wait())
            await asyncio.wait({gate, stop}, return_when=asyncio.FIRST_COMPLETED)
            gate.cancel()
            stop.cancel()
        finally:
            self.seen.running -= 1
        self.result = TurnResult("interrupted", "stopped") if self.stop.is_set() else TurnResult("done")
        return self.result

    def answer(self) -> str:
        return f"answer of {self.call_id}"

    def interrupt(self) -> list[str]:
        self.seen.interrupted.append(self.call_id)
        self.stop.set()
        return []

    def abandon(self) -> list[str]:
        return []


class _Factory:
    def __init__(self, most: int) -> None:
        self.settings = Settings(agents_max_concurrent=most)
        self.seen = _Children()

    def agents(self) -> dict[str, Any]:
        return {}

    async def child(self, parent: object, *, agent: object, description: str, call_id: str, cwd: str) -> _Child:
        return _Child(self.seen, call_id)

    async def let_go(self, child: _Child) -> str:
        return ""


def _call(call_id: str) -> ToolCall:
    return ToolCall(call_id=call_id, input={"description": "d", "prompt": "p"}, cwd="/", session="s", turn=1)


async def _settle(predicate: Any) -> None:
    for _ in range(200):
        if predicate():
            return
        await asyncio.sleep(0)
    raise AssertionError("never settled")


def test_no_more_children_run_at_once_than_max_concurrent() -> None:
    asyncio.run(asyncio.wait_for(_at_most_two(), 5))


def test_the_parents_interrupt_reaches_the_running_child() -> None:
    asyncio.run(asyncio.wait_for(_interrupted(), 5))


async def _at_most_two() -> None:
    factory = _Factory(most=2)
    tool = AgentTool(cast(RunFactory, factory))
    _CURRENT.set(cast(Any, object()))
    calls = [asyncio.ensure_future(tool.call(_call(f"c{n}"))) for n in range(5)]
    await _settle(lambda: factory.seen.running == 2)
    for _ in range(50):
        await asyncio.sleep(0)  # the others had every chance to start: they wait for a place
    assert factory.seen.running == 2
    factory.seen.gate.set()
    outputs = await asyncio.gather(*calls)
    assert factory.seen.most == 2
    assert [cast(TextPart, out.parts[0]).text for out in outputs] == [f"answer of c{n}" for n in range(5)]


async def _interrupted() -> None:
    factory = _Factory(most=4)
    tool = AgentTool(cast(RunFactory, factory))
    _CURRENT.set(cast(Any, object()))
    call = _call("c1")
    running = asyncio.ensure_future(tool.call(call))
    await _settle(lambda: factory.seen.running == 1)
    call.interrupted.set()  # what the turn loop does to a `block` tool's call on an interrupt
    output = await running
    assert factory.seen.interrupted == ["c1"]
    assert output.is_error and "did not finish" in cast(TextPart, output.parts[0]).text
