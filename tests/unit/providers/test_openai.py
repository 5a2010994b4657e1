"""The openai provider's own part, on the in-memory transport: the Chat Completions request
shape and the reading of its chunks (what both built-ins share is in test_http.py)."""

from __future__ import annotations

from bingo.providers import OpenAIProvider
from bingo.providers._retry import Retry
from bingo.wire import ImageBlock, Message, ModelRequest, TextBlock, ToolUseBlock, ToolUseDelta
from tests.support.model_script import RawReply, Reply
from tests.support.model_transport import BASE, CONVERSATION, ModelTransport, ask, failure


def _provider(*replies: Reply, key: str | None = "sk-test") -> tuple[OpenAIProvider, ModelTransport]:
    # No retry: these tests are about one answer (retries are test_retry.py's).
    transport = ModelTransport(replies)
    return OpenAIProvider(api_key=key, base_url=f"{BASE}/v1", transport=transport, retry=Retry(attempts=1)), transport


def _chunk(delta: str, finish: str | None = None) -> str:
    finish_json = "null" if finish is None else f'"{finish}"'
    return f'data: {{"choices": [{{"index": 0, "delta": {delta}, "finish_reason": {finish_json}}}]}}\n\n'


def test_tool_calls_come_back_as_tool_use_blocks_with_their_parsed_input() -> None:
    provider, _ = _provider(
        [
            ("text", "Counting."),
            ("tool", "call_a", "count", {"path": "a.txt", "n": [1, 2]}),
            ("tool", "call_b", "count", {"path": "b.txt"}),
        ]
    )

    response, deltas = ask(provider)

    uses = [
        ToolUseBlock(id="call_a", name="count", input={"path": "a.txt", "n": [1, 2]}),
        ToolUseBlock(id="call_b", name="count", input={"path": "b.txt"}),
    ]
    assert response.message.content == [TextBlock(text="Counting."), *uses]
    assert response.stop_reason == "toolUse"
    assert deltas[-2:] == [ToolUseDelta(id=u.id, name=u.name, input=u.input) for u in uses]


def test_length_finish_becomes_max_tokens() -> None:
    provider, _ = _provider([("text", "cut sho"), ("stop", "max_tokens")])

    response, _ = ask(provider)

    assert response.stop_reason == "maxTokens"


def test_a_stop_finish_with_tool_calls_is_still_a_tool_use() -> None:
    raw = _chunk('{"tool_calls": [{"index": 0, "function": {"name": "count", "arguments": "{}"}}]}') + _chunk(
        "{}", "stop"
    )
    provider, _ = _provider(RawReply(raw))

    response, _ = ask(provider)

    # No [DONE] and no id, as some compatible servers send it: both are tolerated.
    assert response.message.content == [ToolUseBlock(id="call_0", name="count", input={})]
    assert response.stop_reason == "toolUse"
    assert response.usage is None


def test_the_request_has_the_chat_completions_shape() -> None:
    provider, transport = _provider([("text", "ok")])

    ask(provider, CONVERSATION)

    [recorded] = transport.requests
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer sk-test"
    assert recorded.body == {
        "model": "test-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 100,
        "tools": [
            {
                "type": "function",
                "function": {"name": "count", "description": "Counts.", "parameters": {"type": "object"}},
            }
        ],
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "count notes.txt"},
            {
                "role": "assistant",
                "content": "Sure.",
                "tool_calls": [
                    {"id": "t1", "type": "function", "function": {"name": "count", "arguments": '{"path":"notes.txt"}'}}
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
    provider, transport = _provider([("text", "ok")], key=None)

    ask(provider)

    assert "authorization" not in transport.requests[0].headers


def test_a_chunk_that_is_not_json_is_a_malformed_stream() -> None:
    provider, _ = _provider(RawReply("data: {not json\n\n"))

    error = failure(provider)

    assert error.message.startswith("openai sent a malformed stream: a chunk is not valid:")
    assert error.hint == "check that OPENAI_BASE_URL points at a compatible server"


def test_tool_arguments_that_are_not_json_are_a_malformed_stream() -> None:
    call = '{"tool_calls": [{"index": 0, "id": "c", "function": {"name": "count", "arguments": "{\\"pa"}}]}'
    provider, _ = _provider(RawReply(_chunk(call, "tool_calls") + "data: [DONE]\n\n"))

    error = failure(provider)

    assert error.message == "openai sent a malformed stream: the arguments of tool call 'count' are not JSON"


def test_a_stream_that_ends_before_a_finish_reason_broke_off() -> None:
    provider, _ = _provider(RawReply(_chunk('{"content": "Hel"}')))

    error = failure(provider)

    assert error.line() == "openai's answer broke off: the stream ended before a finish reason: try again later"


def test_an_error_chunk_mid_stream_becomes_a_provider_error() -> None:
    provider, _ = _provider(
        RawReply(_chunk('{"content": "Hel"}') + 'data: {"error": {"message": "model crashed"}}\n\n')
    )

    error = failure(provider)

    assert error.line() == "openai failed mid-answer: model crashed: try again later"


def test_a_persons_images_are_image_url_parts_of_their_user_message_before_its_text() -> None:
    provider, transport = _provider([("text", "a cat")], [("text", "ok")])
    png, gif = (
        ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
        ImageBlock(media_type="image/gif", data="R0lGODlh"),
    )
    ask(
        provider,
        ModelRequest(model="m", messages=[Message(role="user", content=[png, gif, TextBlock(text="what is this?")])]),
    )
    ask(provider, ModelRequest(model="m", messages=[Message(role="user", content=[gif])]))  # an image-only prompt
    assert transport.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGODlh"}},
                {"type": "text", "text": "what is this?"},
            ],
        }
    ]
    assert transport.requests[1].body["messages"] == [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGODlh"}}]}
    ]
