"""Services both ways, and the host's own `bingo.host` doors, against the in-memory twin."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bingo.bridge._link import Calls
from bingo.bridge.service import BridgedService, HostService, ServiceRouter
from bingo.kernel.errors import PluginError
from bingo.kernel.interfaces import ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.wire import Json, Notice, ServiceCallParams, ServiceCallResult, ServiceSpec
from bingo.wire.rpc import METHOD_NOT_FOUND, REFUSED
from tests.support.twin import Twin, memory_twin

Scenario = Callable[[Twin, Registry, Calls], Awaitable[None]]


def _run(scenario: Scenario) -> list[Notice]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)

    async def main() -> None:
        registry = Registry(notices)
        other = Calls()
        async with asyncio.timeout(5), memory_twin("p") as twin:
            ServiceRouter(registry, notices, {"p": twin.link.calls, "q": other}).install(twin.host, "p")
            await scenario(twin, registry, other)

    asyncio.run(main())
    return said


async def _host_call(twin: Twin, key: str, method: str, params: Json) -> Json:
    """The fake plugin calls the host."""
    answer = await twin.plugin.call(
        "service/call", ServiceCallParams(key=key, method=method, params=params), ServiceCallResult, deadline=5
    )
    return answer.result


async def _code(call: Awaitable[Json]) -> tuple[int, str]:
    with pytest.raises(PluginError) as caught:
        await call
    return caught.value.code, caught.value.message


class _Echo:
    spec = ServiceSpec(key="echo", methods=["say"])
    source = "builtin"

    async def call(self, method: str, params: Json) -> Json:
        return {"method": method, "params": params}


def test_the_host_calls_a_plugins_service_by_its_key() -> None:
    async def scenario(twin: Twin, registry: Registry, other: Calls) -> None:
        async def serve(params: ServiceCallParams) -> ServiceCallResult:
            return ServiceCallResult(result=[params.key, params.method, params.params])

        twin.plugin.on_request("service/call", ServiceCallParams, serve)
        service = BridgedService(twin.link, ServiceSpec(key="kv", methods=["get"]))
        assert await service.call("get", {"k": 1}) == ["kv", "get", {"k": 1}]

    _run(scenario)


def test_a_plugins_call_is_routed_by_key_to_the_registrys_service() -> None:
    async def scenario(twin: Twin, registry: Registry, other: Calls) -> None:
        registry.add_service(_Echo())
        assert await _host_call(twin, "echo", "say", [1]) == {"method": "say", "params": [1]}
        code, _ = await _code(_host_call(twin, "nobody", "x", None))
        assert code == METHOD_NOT_FOUND

    _run(scenario)


def test_a_plugins_notice_is_one_line_under_its_name() -> None:
    async def scenario(twin: Twin, registry: Registry, other: Calls) -> None:
        assert await _host_call(twin, "bingo.host", "notice", {"level": "warning", "message": "disk low"}) == {}
        code, _ = await _code(_host_call(twin, "bingo.host", "shout", {}))
        assert code == METHOD_NOT_FOUND

    said = _run(scenario)
    assert said == [Notice(source="p", message="disk low", level="warning")]


def test_ask_reaches_the_person_on_a_call_the_plugin_is_running() -> None:
    async def scenario(twin: Twin, registry: Registry, other: Calls) -> None:
        async def ask(question: str, choices: list[str] | None) -> str:
            return f"{question} -> {choices}"

        twin.link.calls.begin(ToolCall("c1", {}, "/w", "s", 1, ask=ask))
        answer = await _host_call(twin, "bingo.host", "ask", {"call": "c1", "question": "sure?", "choices": ["y", "n"]})
        assert answer == {"answer": "plugin \"p\" asks: sure? -> ['y', 'n']"}  # who asks comes first (ADR-0029)

    _run(scenario)


def test_ask_on_an_ended_call_or_another_plugins_call_is_refused_in_words() -> None:
    async def scenario(twin: Twin, registry: Registry, other: Calls) -> None:
        twin.link.calls.begin(ToolCall("c1", {}, "/w", "s", 1))
        twin.link.calls.end("c1")
        other.begin(ToolCall("c2", {}, "/w", "s", 1))
        ended = await _code(_host_call(twin, "bingo.host", "ask", {"call": "c1", "question": "?"}))
        theirs = await _code(_host_call(twin, "bingo.host", "ask", {"call": "c2", "question": "?"}))
        unknown = await _code(_host_call(twin, "bingo.host", "ask", {"call": "c3", "question": "?"}))
        bad = await _code(_host_call(twin, "bingo.host", "ask", {"question": "?"}))
        assert ended == (REFUSED, "fake p: call c1 has ended: ask only during a call you are running")
        assert theirs == (REFUSED, "fake p: call c2 is not yours: it is another plugin's call")
        assert unknown == (REFUSED, "fake p: call c3 is not a call you are running")
        assert bad[0] == -32602

    _run(scenario)


def test_ask_with_nobody_to_ask_is_refused_with_no_person_to_ask() -> None:
    async def scenario(twin: Twin, registry: Registry, other: Calls) -> None:
        twin.link.calls.begin(ToolCall("c1", {}, "/w", "s", 1))  # the default ask: nobody
        code, message = await _code(_host_call(twin, "bingo.host", "ask", {"call": "c1", "question": "?"}))
        assert (code, message) == (REFUSED, "fake p: no person to ask")

    _run(scenario)


def test_the_host_service_holds_its_key_and_refuses_in_process_callers() -> None:
    async def main() -> tuple[int, str]:
        registry = Registry(Notices())
        assert registry.add_service(HostService())
        assert registry.services["bingo.host"].spec.methods == ["ask", "notice"]
        return await _code(HostService().call("notice", {}))

    assert asyncio.run(main())[0] == REFUSED
