"""The bridged compactor, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bingo.bridge._link import StaticLink
from bingo.bridge.compactor import BridgedCompactor
from bingo.kernel.errors import CompactionError, PluginError
from bingo.wire import (
    Compaction,
    CompactionContext,
    CompactorSpec,
    CompactParams,
    CompactResult,
    Message,
    TextBlock,
)
from tests.support.twin import Twin, memory_twin

_HISTORY = CompactionContext(
    messages=[
        Message(role="user", content=[TextBlock(text="a")]),
        Message(role="assistant", content=[TextBlock(text="b")]),
    ]
)


def _run(scenario: Callable[[Twin], Awaitable[None]], *, deadlines: dict[str, float] | None = None) -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("p", deadlines=deadlines) as twin:
            await scenario(twin)

    asyncio.run(main())


def test_a_compactor_is_known_by_its_bridged_name_and_answers_the_new_history() -> None:
    async def scenario(twin: Twin) -> None:
        async def compact(params: CompactParams) -> CompactResult:
            assert (params.id, params.reason) == ("short", "manual")
            return CompactResult(compaction=Compaction(messages=params.context.messages[-1:]))

        twin.plugin.on_request("compactor/compact", CompactParams, compact)
        compactor = BridgedCompactor(twin.link, CompactorSpec(name="short"))
        assert compactor.spec.name == "plugin__p__short"
        result = await compactor.compact(_HISTORY, "manual")
        assert result.messages == _HISTORY.messages[-1:]

    _run(scenario)


def test_every_compactor_failure_is_a_compaction_error() -> None:
    async def scenario(twin: Twin) -> None:
        async def compact(params: CompactParams) -> CompactResult:
            raise PluginError("cannot", code=-32603)

        twin.plugin.on_request("compactor/compact", CompactParams, compact)
        with pytest.raises(CompactionError):
            await BridgedCompactor(twin.link, CompactorSpec(name="short")).compact(_HISTORY, "overflow")

    _run(scenario)

    async def dead() -> None:
        await BridgedCompactor(StaticLink("p", None), CompactorSpec(name="short")).compact(_HISTORY, "overflow")

    with pytest.raises(CompactionError):
        asyncio.run(dead())
