"""The bridged hook, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bingo.bridge._link import StaticLink
from bingo.bridge.hook import BridgedHook
from bingo.kernel.errors import PluginError, PluginUnavailable
from bingo.kernel.hooks import Hooks
from bingo.kernel.notices import Notices
from bingo.wire import HookDecideParams, HookObserveParams, HookOutcome, HookSpec, Notice, Wire
from tests.support.twin import Twin, memory_twin

_SPEC = HookSpec(name="guard", site="tool", points=["before", "after"])


def _run(scenario: Callable[[Twin], Awaitable[None]], *, deadlines: dict[str, float] | None = None) -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("p", deadlines=deadlines) as twin:
            await scenario(twin)

    asyncio.run(main())


def test_a_hook_decides_across_the_wire() -> None:
    async def scenario(twin: Twin) -> None:
        async def decide(params: HookDecideParams) -> HookOutcome:
            assert (params.id, params.site, params.point) == ("guard", "tool", "before")
            return HookOutcome(outcome="deny", value=f"no {params.payload['tool']}")

        twin.plugin.on_request("hook/decide", HookDecideParams, decide)
        outcome = await BridgedHook(twin.link, _SPEC).decide("before", {"tool": "rm"})
        assert outcome == HookOutcome(outcome="deny", value="no rm")

    _run(scenario)


def test_a_late_hook_is_held_to_the_kernels_deadline_and_decides_nothing() -> None:
    said: list[Notice] = []

    async def scenario(twin: Twin) -> None:
        async def decide(params: HookDecideParams) -> HookOutcome:
            await asyncio.Event().wait()
            raise AssertionError

        twin.plugin.on_request("hook/decide", HookDecideParams, decide)
        notices = Notices()
        notices.listen(said.append)
        async with Hooks([BridgedHook(twin.link, _SPEC)], notices, 0.01) as hooks:
            verdict = await hooks.decide("tool", "before", {"tool": "rm"})
        assert verdict.action == "continue"

    # The connection's own deadline is far off: the kernel's is the one a hook misses.
    _run(scenario, deadlines={"hook/decide": 60.0})
    assert [n.message for n in said] == [
        "hook guard missed its deadline (0.01 s: deadlines.hook/decide in settings) and decides nothing"
    ]


def test_a_hook_sets_no_timer_of_its_own_since_the_kernel_bounds_it() -> None:
    # The connection's deadline for hook/decide passes long before the answer can come
    # back; the answer still counts: the kernel's timer is the one (enforced once).
    async def scenario(twin: Twin) -> None:
        async def decide(params: HookDecideParams) -> HookOutcome:
            return HookOutcome(outcome="continue")

        twin.plugin.on_request("hook/decide", HookDecideParams, decide)
        assert await BridgedHook(twin.link, _SPEC).decide("before", {}) == HookOutcome(outcome="continue")

    _run(scenario, deadlines={"hook/decide": 1e-9})


class _Allow(Wire, frozen=True):
    """What a plugin that tries to widen would answer."""

    outcome: str


def test_an_allow_answer_is_not_a_decision() -> None:
    async def scenario(twin: Twin) -> None:
        async def decide(params: HookDecideParams) -> _Allow:
            return _Allow(outcome="allow")

        twin.plugin.on_request("hook/decide", HookDecideParams, decide)
        with pytest.raises(PluginError):
            await BridgedHook(twin.link, _SPEC).decide("before", {})

    _run(scenario)


def test_observe_is_a_notification_and_nothing_when_the_plugin_is_not_running() -> None:
    seen: list[HookObserveParams] = []

    async def scenario(twin: Twin) -> None:
        got = asyncio.Event()

        def observe(params: HookObserveParams) -> None:
            seen.append(params)
            got.set()

        twin.plugin.on_notification("hook/observe", HookObserveParams, observe)
        await BridgedHook(twin.link, _SPEC).observe("after", {"tool": "x"})
        await got.wait()
        await BridgedHook(StaticLink("p", None), _SPEC).observe("after", {})

    _run(scenario)
    assert seen == [HookObserveParams(id="guard", site="tool", point="after", payload={"tool": "x"})]


def test_a_hook_whose_plugin_is_not_running_says_so_to_the_kernel() -> None:
    # The kernel lets it decide nothing quietly, or answer ask for a plugin that fails closed.
    async def scenario(twin: Twin) -> None:
        with pytest.raises(PluginUnavailable):
            await BridgedHook(StaticLink("p", None), _SPEC).decide("before", {})

    _run(scenario)
