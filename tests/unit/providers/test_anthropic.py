"""The anthropic provider against a real local server speaking the Messages API's events."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest

from bingo.kernel.errors import ProviderError
from bingo.providers import AnthropicProvider
from bingo.wire import (
    Delta,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    TextBlock,
    TextDelta,
    TextPart,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    ToolUseDelta,
    Usage,
)
from tests.support.model_server import ErrorReply, ModelServer, RawReply

_HELLO = ModelRequest(
    model="claude-test", messages=[Message(role="user", content=[TextBlock(text="hi")])]
)


def _provider(server: ModelServer, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(api_key="sk-test", base_url=server.url, **options)


def _stream(
    provider: AnthropicProvider, request: ModelRequest = _HELLO
) -> tuple[ModelResponse, list[Delta]]:
    deltas: list[Delta] = []

    async def main() -> ModelResponse:
        async with asyncio.timeout(5):
            return await provider.stream(request, deltas.append)

    return asyncio.run(main()), deltas


def _failure(provider: AnthropicProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        _stream(provider)
    return caught.value


def test_text_streams_in_several_deltas_in_order() -> None:
    with ModelServer([[("text", "Hello, streaming world")]]) as server:
        response, deltas = _stream(_provider(server))
    assert len(deltas) >= 2
    assert all(isinstance(d, TextDelta) for d in deltas)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Hello, streaming world"
    assert response == ModelResponse(
        message=Message(role="assistant", content=[TextBlock(text="Hello, streaming world")]),
        stop_reason="end",
        usage=Usage(input_tokens=11, output_tokens=7),
    )


def test_text_reaches_on_delta_before_the_stream_ends() -> None:
    go_on = threading.Event()
    steps = [("text", "Hello "), ("pause", go_on), ("text", "again")]
    with ModelServer([steps]) as server:
        provider = _provider(server)

        async def main() -> ModelResponse:
            first = asyncio.Event()

            def on_delta(_delta: Delta) -> None:
                first.set()

            async with asyncio.timeout(5):
                task = asyncio.create_task(provider.stream(_HELLO, on_delta))
                await first.wait()
                assert not task.done()
                go_on.set()
                return await task

        response = asyncio.run(main())
    assert response.message.content == [TextBlock(text="Hello "), TextBlock(text="again")]


def test_a_tool_call_comes_back_as_a_tool_use_block_with_its_parsed_input() -> None:
    tool_input = {"path": "notes.txt", "limits": [1, 2], "deep": {"x": None}}
    steps = [("text", "Let me count."), ("tool", "toolu_1", "count", tool_input)]
    with ModelServer([steps]) as server:
        response, deltas = _stream(_provider(server))
    use = ToolUseBlock(id="toolu_1", name="count", input=tool_input)
    assert response.message.content == [TextBlock(text="Let me count."), use]
    assert response.stop_reason == "toolUse"
    assert deltas[-1] == ToolUseDelta(id="toolu_1", name="count", input=tool_input)


def test_max_tokens_stop_reason_becomes_max_tokens() -> None:
    with ModelServer([[("text", "cut sho"), ("stop", "max_tokens")]]) as server:
        response, _ = _stream(_provider(server))
    assert response.stop_reason == "maxTokens"


def test_the_request_has_the_messages_api_shape() -> None:
    request = ModelRequest(
        model="claude-test",
        system="Be brief.",
        max_tokens=100,
        tools=[ToolSpec(name="count", description="Counts.", input_schema={"type": "object"})],
        messages=[
            Message(role="user", content=[TextBlock(text="count notes.txt")]),
            Message(
                role="assistant",
                content=[
                    TextBlock(text=""),
                    ToolUseBlock(id="t1", name="count", input={"path": "notes.txt"}),
                ],
            ),
            Message(
                role="user",
                content=[
                    ToolResultBlock(
                        tool_use_id="t1",
                        parts=[
                            TextPart(text="count is not allowed here"),
                            ImagePart(media_type="image/png", data="iVBO"),
                        ],
                        is_error=True,
                    )
                ],
            ),
        ],
    )
    with ModelServer([[("text", "ok")]]) as server:
        _stream(_provider(server), request)
    [recorded] = server.requests
    assert recorded.path == "/v1/messages"
    assert recorded.headers["x-api-key"] == "sk-test"
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    assert recorded.body == {
        "model": "claude-test",
        "max_tokens": 100,
        "stream": True,
        "system": "Be brief.",
        "tools": [{"name": "count", "description": "Counts.", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "count notes.txt"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "count",
                        "input": {"path": "notes.txt"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": [
                            {"type": "text", "text": "count is not allowed here"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "iVBO",
                                },
                            },
                        ],
                    }
                ],
            },
        ],
    }


def test_blocks_travel_in_the_role_the_api_requires_and_neighbours_share_a_message() -> None:
    from bingo.providers.anthropic import request_body

    request = ModelRequest(
        model="m",
        messages=[
            Message(role="user", content=[ToolResultBlock(tool_use_id="t1", parts=[])]),
            Message(role="user", content=[TextBlock(text="and then?")]),
        ],
    )
    assert request_body(request)["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": []},
                {"type": "text", "text": "and then?"},
            ],
        }
    ]
    assert request_body(request)["max_tokens"] == 4096


def test_http_401_becomes_a_provider_error_naming_the_key() -> None:
    with ModelServer([ErrorReply(401)]) as server:
        error = _failure(_provider(server))
    assert error.line() == "anthropic answered HTTP 401: invalid x-api-key: check ANTHROPIC_API_KEY"


def test_http_500_becomes_a_provider_error_with_the_apis_message() -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": "Internal\nerror"}}
    with ModelServer([ErrorReply(500, body)]) as server:
        error = _failure(_provider(server))
    assert error.line() == (
        "anthropic answered HTTP 500: Internal error: the service failed: try again later"
    )


def test_an_event_that_is_not_json_is_a_malformed_stream() -> None:
    raw = "event: message_start\ndata: {not json\n\n"
    with ModelServer([RawReply(raw)]) as server:
        error = _failure(_provider(server))
    assert error.message.startswith("anthropic sent a malformed stream: message_start event:")
    assert error.hint == "check that ANTHROPIC_BASE_URL points at a compatible server"


def test_a_stream_that_ends_before_message_stop_is_malformed() -> None:
    raw = (
        'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
        'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
        '"content_block": {"type": "text", "text": ""}}\n\n'
    )
    with ModelServer([RawReply(raw)]) as server:
        error = _failure(_provider(server))
    assert error.message == (
        "anthropic sent a malformed stream: the stream ended before message_stop"
    )


def test_an_error_event_mid_stream_becomes_a_provider_error() -> None:
    raw = (
        'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "Overloaded"}}\n\n'
    )
    with ModelServer([RawReply(raw)]) as server:
        error = _failure(_provider(server))
    assert error.line() == "anthropic failed mid-answer: Overloaded: try again later"


def test_an_unreachable_server_becomes_a_provider_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port was free a moment ago and nothing listens on it now.
    provider = AnthropicProvider(api_key="k", base_url=f"http://127.0.0.1:{port}")
    error = _failure(provider)
    assert error.message.startswith(
        f"cannot reach anthropic at http://127.0.0.1:{port}/v1/messages"
    )
    assert error.hint == "check ANTHROPIC_BASE_URL and your network"


def test_silence_past_the_read_timeout_becomes_a_provider_error() -> None:
    with ModelServer([[("text", "Hello"), ("pause",)]]) as server:
        error = _failure(_provider(server, read_timeout=0.2))
    assert error.line() == "anthropic sent nothing for 0.2 s: try again later"


def test_cancelling_mid_stream_ends_the_call_promptly() -> None:
    with ModelServer([[("text", "Hello there"), ("pause",)]]) as server:
        provider = _provider(server)

        async def main() -> None:
            first = asyncio.Event()

            def on_delta(_delta: Delta) -> None:
                first.set()

            async with asyncio.timeout(5):
                task = asyncio.create_task(provider.stream(_HELLO, on_delta))
                await first.wait()
                assert await asyncio.to_thread(server.paused.wait, 5)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

        asyncio.run(main())
