"""Both built-in providers read the streams their APIs' own documentation shows
(tests/fixtures/providers/, each file naming its page): tool use, parallel tool calls, an
error mid-stream, `overloaded_error`, and each of OpenAI's finish reasons, with the usage
they report (cache reads included)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bingo.kernel.errors import ProviderError
from bingo.kernel.interfaces import Provider
from bingo.kernel.notices import Notices
from bingo.providers import AnthropicProvider, OpenAIProvider
from bingo.providers._retry import Retry
from bingo.wire import Delta, ModelResponse, Notice, TextBlock, TextDelta, ToolUseBlock, ToolUseDelta, Usage
from tests.support.model_script import RawReply
from tests.support.model_transport import BASE, HELLO, ModelTransport, ask

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"

ONCE = Retry(attempts=1)
"""No retry: each test reads one recorded answer."""


def _recorded(name: str) -> RawReply:
    return RawReply((FIXTURES / name).read_text())


def _anthropic(name: str, notices: Notices | None = None) -> AnthropicProvider:
    transport = ModelTransport([_recorded(f"anthropic/{name}")])
    return AnthropicProvider(api_key="k", base_url=BASE, transport=transport, retry=ONCE, notices=notices)


def _openai(name: str, notices: Notices | None = None) -> OpenAIProvider:
    transport = ModelTransport([_recorded(f"openai/{name}")])
    return OpenAIProvider(api_key="k", base_url=f"{BASE}/v1", transport=transport, retry=ONCE, notices=notices)


def _failing(provider: Provider) -> tuple[ProviderError, list[Delta]]:
    """The error `provider` fails with, and the deltas it streamed before it did."""
    deltas: list[Delta] = []

    async def main() -> ModelResponse:
        async with asyncio.timeout(5):
            return await provider.stream(HELLO, deltas.append)

    with pytest.raises(ProviderError) as caught:
        asyncio.run(main())
    return caught.value, deltas


def test_every_fixture_names_its_source_in_its_first_line() -> None:
    paths = sorted(FIXTURES.rglob("*.sse"))
    assert len(paths) == 10
    for path in paths:
        assert path.read_text().startswith(": Source: https://"), path


def test_anthropic_basic_stream_is_its_text_and_usage() -> None:
    response, deltas = ask(_anthropic("basic.sse"))

    assert response.message.content == [TextBlock(text="Hello!")]
    assert deltas == [TextDelta(text="Hello"), TextDelta(text="!")]
    assert (response.stop_reason, response.usage) == ("end", Usage(input_tokens=25, output_tokens=15))


def test_anthropic_tool_use_stream_is_its_text_then_one_call_with_the_joined_input() -> None:
    response, deltas = ask(_anthropic("tool_use.sse"))

    call = ToolUseBlock(
        id="toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name="get_weather",
        input={"location": "San Francisco, CA", "unit": "fahrenheit"},
    )
    assert response.message.content == [TextBlock(text="Okay, let's check the weather for San Francisco, CA:"), call]
    assert response.stop_reason == "toolUse"
    assert len([d for d in deltas if isinstance(d, TextDelta)]) == 13
    assert deltas[-1] == ToolUseDelta(id=call.id, name=call.name, input=call.input)
    assert response.usage == Usage(input_tokens=472, output_tokens=89)


def test_anthropic_parallel_tool_calls_are_two_calls_in_their_order() -> None:
    response, deltas = ask(_anthropic("parallel_tool_use.sse"))

    assert response.message.content == [
        ToolUseBlock(id="toolu_01", name="get_weather", input={"location": "San Francisco, CA"}),
        ToolUseBlock(id="toolu_02", name="get_time", input={"timezone": "America/Los_Angeles"}),
    ]
    assert response.stop_reason == "toolUse"
    assert [d.id for d in deltas if isinstance(d, ToolUseDelta)] == ["toolu_01", "toolu_02"]


def test_anthropic_error_mid_stream_fails_naming_the_error_after_the_text_it_streamed() -> None:
    error, deltas = _failing(_anthropic("error_mid_stream.sse"))

    assert error.line() == "anthropic failed mid-answer: Overloaded (overloaded_error): try again later"
    assert deltas == [TextDelta(text="Hello")]


def test_anthropic_overloaded_before_any_text_fails_as_overloaded_when_not_retried() -> None:
    error, deltas = _failing(_anthropic("overloaded.sse"))

    assert error.line() == "anthropic failed mid-answer: Overloaded (overloaded_error): try again later"
    assert deltas == []


@pytest.mark.parametrize(
    ("name", "stop"),
    [("stop.sse", "end"), ("length.sse", "maxTokens"), ("content_filter.sse", "end")],
)
def test_openai_finish_reasons_become_stop_reasons(name: str, stop: str) -> None:
    response, deltas = ask(_openai(name))

    assert response.message.content == [TextBlock(text="Hello")]
    assert deltas == [TextDelta(text="Hello")]
    assert response.stop_reason == stop


def test_openai_content_filter_is_said_to_the_person() -> None:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)

    ask(_openai("content_filter.sse", notices))

    assert [(n.source, n.message) for n in said] == [
        ("openai", "the answer was stopped by the content filter (finish_reason content_filter)")
    ]


def test_openai_tool_calls_stream_is_one_call_with_its_arguments_joined() -> None:
    response, deltas = ask(_openai("tool_calls.sse"))

    call = ToolUseBlock(id="call_DdmO9pD3xa9XTPNJ32zg2hcA", name="get_weather", input={"location": "Paris, France"})
    assert response.message.content == [call]
    assert response.stop_reason == "toolUse"
    assert deltas == [ToolUseDelta(id=call.id, name=call.name, input=call.input)]


def test_openai_usage_chunk_gives_the_whole_requests_tokens_with_the_cached_ones() -> None:
    response, _ = ask(_openai("usage.sse"))

    assert response.usage == Usage(input_tokens=2006, output_tokens=300, cache_read_tokens=1920)
