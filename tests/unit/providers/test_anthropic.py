"""The anthropic provider's own part, on the in-memory transport: the Messages API's request
shape and the reading of its events (what both built-ins share is in test_http.py)."""

from __future__ import annotations

import msgspec

from bingo.kernel.notices import Notices
from bingo.providers import AnthropicProvider
from bingo.providers._retry import Retry
from bingo.providers.anthropic import request_body
from bingo.wire import (
    ImageBlock,
    Json,
    Message,
    ModelRequest,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseDelta,
    Usage,
)
from tests.support.model_script import RawReply, Reply
from tests.support.model_transport import BASE, CONVERSATION, HELLO, ModelTransport, ask, failure

ONCE = Retry(attempts=1)

EPHEMERAL = {"type": "ephemeral"}
"""A prompt-cache breakpoint, as the prompt caching page writes it."""

_STARTED = 'event: message_start\ndata: {"type": "message_start", "message": {"usage": {}}}\n\n'


def _provider(*replies: Reply, retry: Retry = ONCE) -> tuple[AnthropicProvider, ModelTransport]:
    # No retry unless a test is about retrying: the rest are about one answer.
    transport = ModelTransport(replies)
    return AnthropicProvider(api_key="sk-test", base_url=BASE, transport=transport, retry=retry), transport


def test_a_tool_call_comes_back_as_a_tool_use_block_with_its_parsed_input() -> None:
    tool_input = {"path": "notes.txt", "limits": [1, 2], "deep": {"x": None}}
    provider, _ = _provider([("text", "Let me count."), ("tool", "toolu_1", "count", tool_input)])

    response, deltas = ask(provider)

    use = ToolUseBlock(id="toolu_1", name="count", input=tool_input)
    assert response.message.content == [TextBlock(text="Let me count."), use]
    assert response.stop_reason == "toolUse"
    assert deltas[-1] == ToolUseDelta(id="toolu_1", name="count", input=tool_input)


def test_max_tokens_stop_reason_becomes_max_tokens() -> None:
    provider, _ = _provider([("text", "cut sho"), ("stop", "max_tokens")])

    response, _ = ask(provider)

    assert response.stop_reason == "maxTokens"


def test_the_request_has_the_messages_api_shape() -> None:
    provider, transport = _provider([("text", "ok")])

    ask(provider, CONVERSATION)

    [recorded] = transport.requests
    assert recorded.path == "/v1/messages"
    assert recorded.headers["x-api-key"] == "sk-test"
    assert recorded.headers["anthropic-version"] == "2023-06-01"
    assert recorded.body == {
        "model": "test-model",
        "max_tokens": 100,
        "stream": True,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}],
        "tools": [
            {"name": "count", "description": "Counts.", "input_schema": {"type": "object"}, "cache_control": EPHEMERAL}
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "count notes.txt", "cache_control": EPHEMERAL}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Sure."},
                    {"type": "tool_use", "id": "t1", "name": "count", "input": {"path": "notes.txt"}},
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
                            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
                        ],
                        "cache_control": EPHEMERAL,
                    }
                ],
            },
        ],
    }


def test_an_empty_text_block_is_not_sent() -> None:
    request = ModelRequest(
        model="m",
        messages=[
            Message(role="assistant", content=[TextBlock(text=""), ToolUseBlock(id="t1", name="count", input={})])
        ],
    )

    assert request_body(request)["messages"] == [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "count", "input": {}}]}
    ]


def test_blocks_travel_in_the_role_the_api_requires_and_neighbours_share_a_message() -> None:
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
                {"type": "text", "text": "and then?", "cache_control": EPHEMERAL},
            ],
        }
    ]
    assert request_body(request)["max_tokens"] == 4096


def test_an_event_that_is_not_json_is_a_malformed_stream() -> None:
    provider, _ = _provider(RawReply("event: message_start\ndata: {not json\n\n"))

    error = failure(provider)

    assert error.message.startswith("anthropic sent a malformed stream: message_start event:")
    assert error.hint == "check that ANTHROPIC_BASE_URL points at a compatible server"


def test_a_stream_that_ends_before_message_stop_broke_off() -> None:
    raw = _STARTED + (
        'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
        '"content_block": {"type": "text", "text": ""}}\n\n'
    )
    provider, _ = _provider(RawReply(raw))

    error = failure(provider)

    assert error.line() == "anthropic's answer broke off: the stream ended before message_stop: try again later"


def test_an_error_event_mid_stream_becomes_a_provider_error() -> None:
    raw = _STARTED + (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
    )
    provider, _ = _provider(RawReply(raw))

    error = failure(provider)

    assert error.line() == "anthropic failed mid-answer: Overloaded (overloaded_error): try again later"


def _breakpoints(body: dict[str, Json]) -> list[str]:
    """Where the body's cache_control marks are, as `tools[i]`, `system[i]`, `messages[i][j]`."""
    found: list[str] = []
    for key in ("tools", "system"):
        for i, item in enumerate(body.get(key) or []):
            if "cache_control" in item:
                found.append(f"{key}[{i}]")
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append(f"messages[{i}][{j}]")
    return found


def test_a_long_conversation_has_four_breakpoints_tools_system_and_the_last_two_user_turns() -> None:
    messages: list[Message] = []
    for turn in range(6):
        messages.append(Message(role="user", content=[TextBlock(text=f"prompt {turn}")]))
        messages.append(
            Message(
                role="assistant", content=[TextBlock(text="ok"), ToolUseBlock(id=f"t{turn}", name="count", input={})]
            )
        )
        messages.append(
            Message(
                role="user",
                content=[
                    ToolResultBlock(tool_use_id=f"t{turn}", parts=[]),
                    ToolResultBlock(tool_use_id=f"u{turn}", parts=[]),
                ],
            )
        )
    request = msgspec.structs.replace(CONVERSATION, messages=messages, tools=[*CONVERSATION.tools, *CONVERSATION.tools])

    body = request_body(request)

    # A turn's results and the next prompt share one API message: 13 in all, users even.
    assert len(body["messages"]) == 13
    assert _breakpoints(body) == ["tools[1]", "system[0]", "messages[10][2]", "messages[12][1]"]
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]


def test_a_request_with_no_system_or_tools_marks_only_its_tail() -> None:
    assert _breakpoints(request_body(HELLO)) == ["messages[0][0]"]
    assert "system" not in request_body(HELLO)


def test_cache_reads_and_writes_are_counted_into_the_input_and_kept_apart() -> None:
    started = (
        'event: message_start\ndata: {"type": "message_start", "message": {"usage": {"input_tokens": 21, '
        '"cache_creation_input_tokens": 188, "cache_read_input_tokens": 1800, "output_tokens": 1}}}\n\n'
    )
    ended = (
        'event: message_delta\ndata: {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, '
        '"usage": {"output_tokens": 393}}\n\nevent: message_stop\ndata: {"type": "message_stop"}\n\n'
    )
    provider, _ = _provider(RawReply(started + ended))

    response, _ = ask(provider)

    assert response.usage == Usage(input_tokens=2009, output_tokens=393, cache_read_tokens=1800, cache_write_tokens=188)


def test_a_refusal_stop_is_said_to_the_person() -> None:
    ended = (
        'event: message_delta\ndata: {"type": "message_delta", "delta": {"stop_reason": "refusal"}, '
        '"usage": {"output_tokens": 3}}\n\nevent: message_stop\ndata: {"type": "message_stop"}\n\n'
    )
    notices = Notices()
    said: list[str] = []
    notices.listen(lambda n: said.append(f"{n.source}: {n.message}"))
    transport = ModelTransport([RawReply(_STARTED + ended)])
    provider = AnthropicProvider(api_key="k", base_url=BASE, transport=transport, retry=ONCE, notices=notices)

    response, _ = ask(provider)

    assert response.stop_reason == "end"
    assert said == ["anthropic: the model declined to go on (stop_reason refusal)"]


def test_a_persons_images_are_image_blocks_of_their_user_message_before_its_text() -> None:
    provider, transport = _provider([("text", "a cat")], [("text", "still a cat")])
    png, jpeg = (
        ImageBlock(media_type="image/png", data="iVBORw0KGgo="),
        ImageBlock(media_type="image/jpeg", data="/9j/4A=="),
    )
    first = Message(role="user", content=[png, jpeg, TextBlock(text="what is this?")])
    alone = Message(role="user", content=[png])  # an image-only prompt
    ask(provider, ModelRequest(model="m", messages=[first]))
    ask(
        provider,
        ModelRequest(model="m", messages=[first, Message(role="assistant", content=[TextBlock(text="a cat")]), alone]),
    )

    def image(media_type: str, data: str) -> Json:
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}

    assert transport.requests[0].body["messages"] == [
        {
            "role": "user",
            "content": [
                image("image/png", "iVBORw0KGgo="),
                image("image/jpeg", "/9j/4A=="),
                {"type": "text", "text": "what is this?", "cache_control": EPHEMERAL},
            ],
        }
    ]
    later = transport.requests[1].body["messages"]
    assert later[0]["content"][0] == image("image/png", "iVBORw0KGgo=")  # sent again, turn after turn
    assert later[2] == {"role": "user", "content": [{**image("image/png", "iVBORw0KGgo="), "cache_control": EPHEMERAL}]}
