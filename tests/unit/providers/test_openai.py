"""The openai provider against a real local server speaking Chat Completions chunks."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from bingo.kernel.errors import ProviderError
from bingo.providers import OpenAIProvider
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
    model="gpt-test", messages=[Message(role="user", content=[TextBlock(text="hi")])]
)


def _provider(server: ModelServer, key: str | None = "sk-test", **options: Any) -> OpenAIProvider:
    return OpenAIProvider(api_key=key, base_url=server.url + "/v1", **options)


def _stream(
    provider: OpenAIProvider, request: ModelRequest = _HELLO
) -> tuple[ModelResponse, list[Delta]]:
    deltas: list[Delta] = []

    async def main() -> ModelResponse:
        async with asyncio.timeout(5):
            return await provider.stream(request, deltas.append)

    return asyncio.run(main()), deltas


def _failure(provider: OpenAIProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        _stream(provider)
    return caught.value


def _chunk(delta: str, finish: str | None = None) -> str:
    finish_json = "null" if finish is None else f'"{finish}"'
    return (
        f'data: {{"choices": [{{"index": 0, "delta": {delta}, '
        f'"finish_reason": {finish_json}}}]}}\n\n'
    )


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


def test_tool_calls_come_back_as_tool_use_blocks_with_their_parsed_input() -> None:
    steps = [
        ("text", "Counting."),
        ("tool", "call_a", "count", {"path": "a.txt", "n": [1, 2]}),
        ("tool", "call_b", "count", {"path": "b.txt"}),
    ]
    with ModelServer([steps]) as server:
        response, deltas = _stream(_provider(server))
    uses = [
        ToolUseBlock(id="call_a", name="count", input={"path": "a.txt", "n": [1, 2]}),
        ToolUseBlock(id="call_b", name="count", input={"path": "b.txt"}),
    ]
    assert response.message.content == [TextBlock(text="Counting."), *uses]
    assert response.stop_reason == "toolUse"
    assert deltas[-2:] == [ToolUseDelta(id=u.id, name=u.name, input=u.input) for u in uses]


def test_length_finish_becomes_max_tokens() -> None:
    with ModelServer([[("text", "cut sho"), ("stop", "max_tokens")]]) as server:
        response, _ = _stream(_provider(server))
    assert response.stop_reason == "maxTokens"


def test_a_stop_finish_with_tool_calls_is_still_a_tool_use() -> None:
    raw = (
        _chunk('{"tool_calls": [{"index": 0, "function": {"name": "count", "arguments": "{}"}}]}')
        + _chunk("{}", "stop")
    )
    with ModelServer([RawReply(raw)]) as server:
        response, _ = _stream(_provider(server))
    # No [DONE] and no id, as some compatible servers send it: both are tolerated.
    assert response.message.content == [ToolUseBlock(id="call_0", name="count", input={})]
    assert response.stop_reason == "toolUse"
    assert response.usage is None


def test_the_request_has_the_chat_completions_shape() -> None:
    request = ModelRequest(
        model="gpt-test",
        system="Be brief.",
        max_tokens=100,
        tools=[ToolSpec(name="count", description="Counts.", input_schema={"type": "object"})],
        messages=[
            Message(role="user", content=[TextBlock(text="count notes.txt")]),
            Message(
                role="assistant",
                content=[
                    TextBlock(text="Sure."),
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
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer sk-test"
    assert recorded.body == {
        "model": "gpt-test",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 100,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "count",
                    "description": "Counts.",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "count notes.txt"},
            {
                "role": "assistant",
                "content": "Sure.",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "count", "arguments": '{"path":"notes.txt"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "Error: count is not allowed here"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Images from the tool calls:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                ],
            },
        ],
    }


def test_without_a_key_no_authorization_is_sent() -> None:
    with ModelServer([[("text", "ok")]]) as server:
        _stream(_provider(server, key=None))
    assert "authorization" not in {k.lower() for k in server.requests[0].headers}


def test_http_401_becomes_a_provider_error_naming_the_key() -> None:
    with ModelServer([ErrorReply(401)]) as server:
        error = _failure(_provider(server))
    assert error.line() == "openai answered HTTP 401: invalid x-api-key: check OPENAI_API_KEY"


def test_http_500_without_a_json_body_still_says_what_failed() -> None:
    with ModelServer([ErrorReply(500, "upstream exploded")]) as server:
        error = _failure(_provider(server))
    assert error.line() == (
        "openai answered HTTP 500: upstream exploded: the service failed: try again later"
    )


def test_a_chunk_that_is_not_json_is_a_malformed_stream() -> None:
    with ModelServer([RawReply("data: {not json\n\n")]) as server:
        error = _failure(_provider(server))
    assert error.message.startswith("openai sent a malformed stream: a chunk is not valid:")
    assert error.hint == "check that OPENAI_BASE_URL points at a compatible server"


def test_tool_arguments_that_are_not_json_are_a_malformed_stream() -> None:
    raw = (
        _chunk('{"tool_calls": [{"index": 0, "id": "c", "function": {"name": "count", '
               '"arguments": "{\\"pa"}}]}', "tool_calls")
        + "data: [DONE]\n\n"
    )
    with ModelServer([RawReply(raw)]) as server:
        error = _failure(_provider(server))
    assert error.message == (
        "openai sent a malformed stream: the arguments of tool call 'count' are not JSON"
    )


def test_a_stream_that_ends_before_a_finish_reason_is_malformed() -> None:
    with ModelServer([RawReply(_chunk('{"content": "Hel"}'))]) as server:
        error = _failure(_provider(server))
    assert error.message == (
        "openai sent a malformed stream: the stream ended before a finish reason"
    )


def test_an_error_chunk_mid_stream_becomes_a_provider_error() -> None:
    raw = _chunk('{"content": "Hel"}') + 'data: {"error": {"message": "model crashed"}}\n\n'
    with ModelServer([RawReply(raw)]) as server:
        error = _failure(_provider(server))
    assert error.line() == "openai failed mid-answer: model crashed: try again later"


def test_an_unreachable_server_becomes_a_provider_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIProvider(api_key=None, base_url=f"http://127.0.0.1:{port}/v1")
    error = _failure(provider)
    assert error.message.startswith(
        f"cannot reach openai at http://127.0.0.1:{port}/v1/chat/completions"
    )
    assert error.hint == "check OPENAI_BASE_URL and your network"


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
