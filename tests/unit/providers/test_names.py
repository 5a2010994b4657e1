"""Tool names the model APIs accept: fitted names always fit, the table is a bijection within
a request, names that fit are never touched, and both providers send fitted names and hand
the kernel canonical ones."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.providers import AnthropicProvider, OpenAIProvider
from bingo.providers._names import ToolNames, fit_name, fits, request_names
from bingo.wire import Message, ModelRequest, TextBlock, ToolSpec, ToolUseBlock, ToolUseDelta
from tests.support.examples import examples
from tests.support.model_transport import BASE, ModelTransport, ask

_API = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_LONG = "plugin__" + "a" * 60 + "__fetch.page"

_names = st.lists(st.text(min_size=0, max_size=120), max_size=12)


@settings(max_examples=examples(500), deadline=None)
@given(_names)
def test_every_fitted_name_matches_the_api_pattern(names: list[str]) -> None:
    table = ToolNames.of(names)
    for name in names:
        assert _API.fullmatch(table.api(name))


@settings(max_examples=examples(500), deadline=None)
@given(_names)
def test_the_table_is_a_bijection_within_a_request(names: list[str]) -> None:
    table = ToolNames.of(names)
    fitted = [table.api(name) for name in set(names)]
    assert len(set(fitted)) == len(fitted)
    for name in names:
        assert table.canonical(table.api(name)) == name


@settings(max_examples=examples(200), deadline=None)
@given(_names)
def test_the_table_does_not_depend_on_order_or_duplicates(names: list[str]) -> None:
    assert ToolNames.of(names) == ToolNames.of(list(reversed(names)) + names)


def test_names_that_fit_are_sent_as_they_are() -> None:
    table = ToolNames.of(["read", "bash", "plugin__wordcount__count", "a" * 64])
    assert [table.api(n) for n in ("read", "bash", "plugin__wordcount__count", "a" * 64)] == [
        "read",
        "bash",
        "plugin__wordcount__count",
        "a" * 64,
    ]


def test_a_long_name_keeps_its_head_and_its_tools_own_name() -> None:
    fitted = ToolNames.of([_LONG]).api(_LONG)
    assert len(fitted) == 64 and fits(fitted)
    assert fitted.startswith("plugin__aaaaaaaaaaaa_")
    assert fitted.endswith("aaaa__fetch_page")
    assert fitted == fit_name(_LONG)


def test_a_dot_becomes_an_underscore_and_a_tag() -> None:
    fitted = ToolNames.of(["plugin__web__fetch.page"]).api("plugin__web__fetch.page")
    assert re.fullmatch(r"plugin__web__fetch_page_[0-9a-f]{8}", fitted)


def test_a_fitted_name_that_is_another_tools_real_name_is_retagged() -> None:
    taken = fit_name("x.y")
    table = ToolNames.of(["x.y", taken])
    assert table.api(taken) == taken
    assert table.api("x.y") == fit_name("x.y", 1)
    assert table.canonical(fit_name("x.y", 1)) == "x.y"


def test_an_unknown_name_from_the_model_comes_back_unchanged() -> None:
    assert ToolNames.of(["a.b"]).canonical("made_up") == "made_up"


def test_the_history_names_are_in_the_table() -> None:
    request = ModelRequest(
        model="m",
        messages=[Message(role="assistant", content=[ToolUseBlock(id="t1", name="old.tool", input={})])],
        tools=[ToolSpec(name=_LONG, description="d", input_schema={"type": "object"})],
    )
    table = request_names(request)
    assert set(table.to_api) == {"old.tool", _LONG}


def _request() -> ModelRequest:
    history = [
        Message(role="user", content=[TextBlock(text="fetch it")]),
        Message(role="assistant", content=[ToolUseBlock(id="t0", name=_LONG, input={"url": "a"})]),
    ]
    tools = [
        ToolSpec(name=_LONG, description="fetches", input_schema={"type": "object"}),
        ToolSpec(name="read", description="reads", input_schema={"type": "object"}),
    ]
    return ModelRequest(model="m", messages=history, tools=tools)


def _sent_names(body: dict[str, Any], api: str) -> set[str]:
    tools: list[dict[str, Any]] = body["tools"]
    if api == "anthropic":
        return {t["name"] for t in tools}
    return {t["function"]["name"] for t in tools}


def test_both_providers_send_fitted_names_and_return_canonical_ones() -> None:
    fitted = fit_name(_LONG)
    for api in ("anthropic", "openai"):
        transport = ModelTransport([[("tool", "t1", fitted, {"url": "b"})]])
        if api == "anthropic":
            provider: AnthropicProvider | OpenAIProvider = AnthropicProvider(
                api_key="k", base_url=BASE, transport=transport
            )
        else:
            provider = OpenAIProvider(api_key="k", base_url=f"{BASE}/v1", transport=transport)

        response, deltas = ask(provider, _request())

        [use] = [b for b in response.message.content if isinstance(b, ToolUseBlock)]
        assert use.name == _LONG
        [body] = transport.bodies
        assert isinstance(body, dict)
        assert _sent_names(body, api) == {fitted, "read"}
        assert all(_API.fullmatch(n) for n in _sent_names(body, api))
        assert fitted in repr(body["messages"]) and _LONG not in repr(body["messages"])
        assert [d.name for d in deltas if isinstance(d, ToolUseDelta)] == [_LONG]
