"""The bridged context contributor, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bingo.bridge._link import StaticLink
from bingo.bridge.contributor import BridgedContributor
from bingo.wire import ContextPiece, ContextQuery, ContributeParams, ContributeResult, ContributorSpec
from tests.support.twin import Twin, memory_twin

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


def test_a_contributor_sets_no_timer_of_its_own_since_the_turn_bounds_it() -> None:
    # The connection's deadline for context/contribute passes long before the answer can
    # come back; the answer still counts: the turn's timer is the one (enforced once).
    async def scenario(twin: Twin) -> None:
        async def contribute(params: ContributeParams) -> ContributeResult:
            return ContributeResult(pieces=[ContextPiece(text="late but kept")])

        twin.plugin.on_request("context/contribute", ContributeParams, contribute)
        pieces = await BridgedContributor(twin.link, _SPEC).contribute(_QUERY)
        assert pieces == [ContextPiece(text="late but kept")]

    _run(scenario, deadlines={"context/contribute": 1e-9})


def test_a_contributor_whose_plugin_is_not_running_answers_nothing() -> None:
    async def main() -> list[ContextPiece]:
        return await BridgedContributor(StaticLink("p", None), _SPEC).contribute(_QUERY)

    assert asyncio.run(main()) == []
