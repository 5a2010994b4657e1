"""The bridged context contributor, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bingo.bridge._twin import Twin, memory_twin
from bingo.bridge._link import StaticLink
from bingo.bridge.contributor import BridgedContributor
from bingo.kernel.errors import PluginError
from bingo.wire import ContextPiece, ContextQuery, ContributeParams, ContributeResult, ContributorSpec
from bingo.wire.rpc import DEADLINE

_QUERY = ContextQuery(session="s", turn=2, cwd="/w", prompt="hello")
_SPEC = ContributorSpec(name="notes")


def _run(scenario: Callable[[Twin], Awaitable[None]], *, deadlines: dict[str, float] | None = None) -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("p", deadlines=deadlines) as twin:
            await scenario(twin)

    asyncio.run(main())


def test_the_query_crosses_as_its_projection_and_the_pieces_come_back() -> None:
    async def scenario(twin: Twin) -> None:
        async def contribute(params: ContributeParams) -> ContributeResult:
            return ContributeResult(pieces=[ContextPiece(text=f"{params.id}: {params.query.prompt}")])

        twin.plugin.on_request("context/contribute", ContributeParams, contribute)
        pieces = await BridgedContributor(twin.link, _SPEC).contribute(_QUERY)
        assert pieces == [ContextPiece(text="notes: hello")]

    _run(scenario)


def test_a_late_contributor_raises_plugin_error_for_the_kernel_to_drop() -> None:
    async def scenario(twin: Twin) -> None:
        async def contribute(params: ContributeParams) -> ContributeResult:
            await asyncio.Event().wait()
            raise AssertionError

        twin.plugin.on_request("context/contribute", ContributeParams, contribute)
        with pytest.raises(PluginError) as caught:
            await BridgedContributor(twin.link, _SPEC).contribute(_QUERY)
        assert caught.value.code == DEADLINE

    _run(scenario, deadlines={"context/contribute": 0.01})


def test_a_contributor_whose_plugin_is_not_running_answers_nothing() -> None:
    async def main() -> list[ContextPiece]:
        return await BridgedContributor(StaticLink("p", None), _SPEC).contribute(_QUERY)

    assert asyncio.run(main()) == []
