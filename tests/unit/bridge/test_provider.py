"""The bridged provider, against the in-memory twin, on the virtual clock (its deadline is
under test: tests/support/clock.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bingo.bridge.provider import BridgedProvider
from bingo.kernel.errors import ProviderError
from bingo.wire import (
    Delta,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderCancelParams,
    ProviderDeltaParams,
    ProviderSpec,
    ProviderStreamParams,
    ProviderStreamResult,
    TextBlock,
    TextDelta,
)
from tests.support import clock
from tests.support.twin import Twin, memory_twin

_REQUEST = ModelRequest(model="m", messages=[Message(role="user", content=[TextBlock(text="hi")])])
_RESPONSE = ModelResponse(message=Message(role="assistant", content=[TextBlock(text="hello")]), stop_reason="end")


def _run(scenario: Callable[[Twin], Awaitable[None]], *, deadlines: dict[str, float] | None = None) -> None:
    async def main() -> None:
        async with asyncio.timeout(5), memory_twin("p", deadlines=deadlines) as twin:
            await scenario(twin)

    clock.run(main())


def test_deltas_reach_on_delta_and_the_whole_response_is_returned() -> None:
    seen: list[Delta] = []

    async def scenario(twin: Twin) -> None:
        async def stream(params: ProviderStreamParams) -> ProviderStreamResult:
            assert params.id == "scripted"
            twin.plugin.notify(
                "provider/delta", ProviderDeltaParams(stream_id=params.stream_id, delta=TextDelta(text="hel"))
            )
            twin.plugin.notify(
                "provider/delta", ProviderDeltaParams(stream_id="s999", delta=TextDelta(text="not ours"))
            )
            twin.plugin.notify(
                "provider/delta", ProviderDeltaParams(stream_id=params.stream_id, delta=TextDelta(text="lo"))
            )
            return ProviderStreamResult(response=_RESPONSE)

        twin.plugin.on_request("provider/stream", ProviderStreamParams, stream)
        provider = BridgedProvider(twin.link, ProviderSpec(name="scripted", models=["m"]))
        assert provider.spec.name == "plugin__p__scripted"
        assert await provider.stream(_REQUEST, seen.append) == _RESPONSE

    _run(scenario)
    assert seen == [TextDelta(text="hel"), TextDelta(text="lo")]


def _dot(twin: Twin, params: ProviderStreamParams) -> None:
    twin.plugin.notify("provider/delta", ProviderDeltaParams(stream_id=params.stream_id, delta=TextDelta(text=".")))


def test_the_deadline_is_between_messages_and_every_delta_resets_it() -> None:
    async def scenario(twin: Twin) -> None:
        loop = asyncio.get_running_loop()

        async def stream(params: ProviderStreamParams) -> ProviderStreamResult:
            # 4 gaps of 0.1 s: longer than the 0.15 s deadline in all, shorter each.
            for _ in range(3):
                await asyncio.sleep(0.1)
                _dot(twin, params)
            await asyncio.sleep(0.1)
            return ProviderStreamResult(response=_RESPONSE)

        twin.plugin.on_request("provider/stream", ProviderStreamParams, stream)
        provider = BridgedProvider(twin.link, ProviderSpec(name="slowly"))
        start = loop.time()
        assert await provider.stream(_REQUEST, lambda delta: None) == _RESPONSE
        assert loop.time() - start == pytest.approx(0.4)

    _run(scenario, deadlines={"provider/stream": 0.15})


def test_silence_after_a_delta_fails_one_deadline_after_that_delta() -> None:
    async def scenario(twin: Twin) -> None:
        loop = asyncio.get_running_loop()

        async def stream(params: ProviderStreamParams) -> ProviderStreamResult:
            await asyncio.sleep(0.1)
            _dot(twin, params)
            await asyncio.Event().wait()
            raise AssertionError

        twin.plugin.on_request("provider/stream", ProviderStreamParams, stream)
        provider = BridgedProvider(twin.link, ProviderSpec(name="stalls"))
        start = loop.time()
        with pytest.raises(ProviderError) as caught:
            await provider.stream(_REQUEST, lambda delta: None)
        assert loop.time() - start == pytest.approx(0.1 + 0.15)
        assert caught.value.message == "plugin__p__stalls sent nothing for 0.15 s"

    _run(scenario, deadlines={"provider/stream": 0.15})


def test_a_silent_provider_fails_with_provider_error_and_is_told_to_stop() -> None:
    async def scenario(twin: Twin) -> None:
        cancelled = asyncio.Event()

        async def stream(params: ProviderStreamParams) -> ProviderStreamResult:
            await asyncio.Event().wait()
            raise AssertionError

        twin.plugin.on_request("provider/stream", ProviderStreamParams, stream)
        twin.plugin.on_notification("provider/cancel", ProviderCancelParams, lambda params: cancelled.set())
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(ProviderError):
            await BridgedProvider(twin.link, ProviderSpec(name="mute")).stream(_REQUEST, lambda delta: None)
        assert loop.time() - start == pytest.approx(0.15)
        await cancelled.wait()

    _run(scenario, deadlines={"provider/stream": 0.15})


def test_cancelling_the_stream_sends_provider_cancel_and_reraises() -> None:
    async def scenario(twin: Twin) -> None:
        started = asyncio.Event()
        cancelled: list[str] = []
        told = asyncio.Event()

        async def stream(params: ProviderStreamParams) -> ProviderStreamResult:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError

        def cancel(params: ProviderCancelParams) -> None:
            cancelled.append(params.stream_id)
            told.set()

        twin.plugin.on_request("provider/stream", ProviderStreamParams, stream)
        twin.plugin.on_notification("provider/cancel", ProviderCancelParams, cancel)
        task = asyncio.create_task(BridgedProvider(twin.link, ProviderSpec(name="x")).stream(_REQUEST, lambda d: None))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await told.wait()
        assert cancelled == ["s1"]

    _run(scenario)
