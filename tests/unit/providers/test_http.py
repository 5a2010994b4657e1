"""The skeleton both built-in providers are (`_http`), run through each on the in-memory
transport: text streams as it arrives, error statuses and transport failures become one
line naming what to check, the read timeout is the one set, cancelling closes the answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import httpx
import pytest

from bingo.kernel.errors import ProviderError
from bingo.kernel.interfaces import Provider
from bingo.providers import AnthropicProvider, OpenAIProvider
from bingo.providers._retry import Retry
from bingo.wire import Message, ModelResponse, TextBlock, TextDelta, Usage
from tests.support.model_script import ErrorReply, RawReply
from tests.support.model_transport import BASE, HELLO, ModelTransport, ask, failure


@dataclass(frozen=True)
class Builtin:
    """One built-in provider as these tests make it, and the names its error lines use."""

    make: Callable[..., Provider]
    name: str
    url: str
    key_env: str
    base_env: str


ANTHROPIC = Builtin(
    lambda transport, **options: AnthropicProvider(api_key="sk-test", base_url=BASE, transport=transport, **options),
    "anthropic",
    f"{BASE}/v1/messages",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)
OPENAI = Builtin(
    lambda transport, **options: OpenAIProvider(
        api_key="sk-test", base_url=f"{BASE}/v1", transport=transport, **options
    ),
    "openai",
    f"{BASE}/v1/chat/completions",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
)

ONCE = Retry(attempts=1)
"""No retry: these tests are about one answer's words."""

each_builtin = pytest.mark.parametrize("builtin", [ANTHROPIC, OPENAI], ids=lambda b: b.name)


async def _streaming(provider: Provider) -> asyncio.Task[ModelResponse]:
    """`provider` streaming an answer to HELLO in a task, once its first delta has arrived."""
    first = asyncio.Event()
    task = asyncio.create_task(provider.stream(HELLO, lambda _delta: first.set()))
    await first.wait()
    return task


@each_builtin
def test_text_streams_in_several_deltas_in_order(builtin: Builtin) -> None:
    response, deltas = ask(builtin.make(ModelTransport([[("text", "Hello, streaming world")]])))

    assert len(deltas) >= 2
    assert all(isinstance(d, TextDelta) for d in deltas)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Hello, streaming world"
    assert response == ModelResponse(
        message=Message(role="assistant", content=[TextBlock(text="Hello, streaming world")]),
        stop_reason="end",
        usage=Usage(input_tokens=11, output_tokens=7),
    )


@each_builtin
def test_text_reaches_on_delta_before_the_stream_ends(builtin: Builtin) -> None:
    async def main() -> tuple[bool, ModelResponse]:
        go_on = asyncio.Event()
        transport = ModelTransport([[("text", "Hello "), ("pause", go_on), ("text", "again")]])
        async with asyncio.timeout(5):
            task = await _streaming(builtin.make(transport))
            ended_early = task.done()
            go_on.set()
            return ended_early, await task

    ended_early, response = asyncio.run(main())

    assert not ended_early
    assert "".join(b.text for b in response.message.content if isinstance(b, TextBlock)) == "Hello again"


@each_builtin
def test_every_request_is_a_json_post_asking_for_an_event_stream(builtin: Builtin) -> None:
    transport = ModelTransport([[("text", "ok")]])

    ask(builtin.make(transport))

    [request] = transport.sent
    assert (request.method, str(request.url)) == ("POST", builtin.url)
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"


@each_builtin
@pytest.mark.parametrize(
    ("reply", "line"),
    [
        (ErrorReply(401), "{name} answered HTTP 401: invalid x-api-key: check {key_env}"),
        (
            ErrorReply(500, {"type": "error", "error": {"type": "api_error", "message": "Internal\nerror"}}),
            "{name} answered HTTP 500: Internal error: the service failed: try again later",
        ),
        (
            ErrorReply(500, "upstream exploded"),
            "{name} answered HTTP 500: upstream exploded: the service failed: try again later",
        ),
    ],
    ids=["401", "500-json", "500-text"],
)
def test_an_error_status_becomes_one_line_with_the_apis_message_and_what_to_check(
    builtin: Builtin, reply: ErrorReply, line: str
) -> None:
    error = failure(builtin.make(ModelTransport([reply]), retry=ONCE))

    assert error.line() == line.format(name=builtin.name, key_env=builtin.key_env)


@each_builtin
@pytest.mark.parametrize(
    ("refusal", "line"),
    [
        (httpx.ConnectError, "cannot reach {name} at {url} (refused): check {base_env} and your network"),
        (
            httpx.ConnectTimeout,
            "{name} did not accept a connection within 10 s at {url}: check {base_env} and your network",
        ),
    ],
    ids=["refused", "not-accepted-in-time"],
)
def test_a_connection_that_cannot_be_made_becomes_one_line_naming_the_base_url(
    builtin: Builtin, refusal: type[httpx.TransportError], line: str
) -> None:
    error = failure(builtin.make(ModelTransport([refusal("refused")])))

    assert error.line() == line.format(name=builtin.name, url=builtin.url, base_env=builtin.base_env)


@each_builtin
def test_silence_past_the_read_timeout_becomes_a_provider_error(builtin: Builtin) -> None:
    # httpx's network layer enforces the timeout: what the provider owns is the timeout it
    # sets on the request and the words for the ReadTimeout that comes of it.
    transport = ModelTransport([[("text", "Hello"), ("raise", httpx.ReadTimeout("timed out"))]])

    error = failure(builtin.make(transport, read_timeout=0.2))

    assert transport.sent[0].extensions["timeout"] == {"connect": 10.0, "read": 0.2, "write": 0.2, "pool": 10.0}
    assert error.line() == f"{builtin.name} sent nothing for 0.2 s: try again later"


@each_builtin
def test_a_connection_broken_mid_answer_becomes_a_provider_error(builtin: Builtin) -> None:
    transport = ModelTransport([[("text", "Hello"), ("raise", httpx.RemoteProtocolError("peer closed"))]])

    error = failure(builtin.make(transport))

    assert error.line() == f"{builtin.name}'s connection failed mid-answer (peer closed): try again later"
    assert transport.closed == 1


@each_builtin
def test_cancelling_mid_stream_ends_the_call_and_closes_the_answer(builtin: Builtin) -> None:
    transport = ModelTransport([[("text", "Hello there"), ("pause",)]])

    async def main() -> None:
        async with asyncio.timeout(5):
            task = await _streaming(builtin.make(transport))
            await transport.paused.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())

    assert transport.closed == 1


# --- JSON nested too deeply (issue 12): a malformed stream or a raw detail, never a crash ---

_NESTED = "[" * 100_000 + "]" * 100_000
"""100 000 levels: msgspec raises RecursionError skipping it, and would in the provider."""


@pytest.mark.parametrize(
    ("builtin", "broken"),
    [
        (ANTHROPIC, "the input of tool call 'count' is not JSON"),
        (OPENAI, "the arguments of tool call 'count' are not JSON"),
    ],
    ids=["anthropic", "openai"],
)
def test_a_tool_input_nested_too_deeply_is_a_malformed_stream(builtin: Builtin, broken: str) -> None:
    deep: object = 1
    for _ in range(200):  # past the limit, within what the script's json.dumps can write
        deep = [deep]
    error = failure(builtin.make(ModelTransport([[("tool", "t1", "count", {"deep": deep})]])))

    assert (
        error.message == f"{builtin.name} sent a malformed stream: {broken}: nested too deeply (more than 128 levels)"
    )


@pytest.mark.parametrize(
    ("builtin", "raw", "what"),
    [
        (
            ANTHROPIC,
            'event: message_start\ndata: {"type": "message_start", "x": ' + _NESTED + "}\n\n",
            "message_start event",
        ),
        (OPENAI, 'data: {"x": ' + _NESTED + "}\n\n", "a chunk is not valid"),
    ],
    ids=["anthropic", "openai"],
)
def test_an_event_nested_too_deeply_is_a_malformed_stream(builtin: Builtin, raw: str, what: str) -> None:
    error = failure(builtin.make(ModelTransport([RawReply(raw)])))

    assert error.message == f"{builtin.name} sent a malformed stream: {what}: nested too deeply"


@each_builtin
def test_an_error_body_nested_too_deeply_is_shown_as_its_text(builtin: Builtin) -> None:
    error = failure(builtin.make(ModelTransport([ErrorReply(500, '{"error": ' + _NESTED + "}")]), retry=ONCE))

    assert error.message.startswith(f'{builtin.name} answered HTTP 500: {{"error": [[[[')
    assert error.hint == "the service failed: try again later"


# --- the stall deadline (ADR-0028), on the virtual clock ------------------------------

_START = (
    b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "type": "message", '
    b'"role": "assistant", "model": "m", "content": [], "stop_reason": null, "stop_sequence": null, '
    b'"usage": {"input_tokens": 1, "output_tokens": 1}}}\n\n'
)
_TEXT_START = b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}\n\n'
_TEXT = b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}\n\n'
_ALIVE = b': keep-alive\n\nevent: ping\ndata: {"type": "ping"}\n\n'


def _stalling(text_at: float | None) -> httpx.MockTransport:
    """An Anthropic stream that sends a keep-alive and a ping every 10 virtual seconds for
    ever, and text once, `text_at` seconds in."""

    class Body(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            loop = asyncio.get_running_loop()
            yield _START + _TEXT_START
            said = text_at is None
            while True:
                await asyncio.sleep(10)
                if not said and text_at is not None and loop.time() >= text_at:
                    said = True
                    yield _TEXT
                yield _ALIVE

    return httpx.MockTransport(
        lambda _request: httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=Body())
    )


@pytest.mark.parametrize(("text_at", "ended_at"), [(None, 300.0), (250.0, 550.0)])
def test_keep_alives_do_not_reset_the_stall_deadline_and_content_does(text_at: float | None, ended_at: float) -> None:
    from tests.support import clock

    async def main() -> tuple[str, float]:
        provider = AnthropicProvider(api_key="k", base_url=BASE, transport=_stalling(text_at), retry=ONCE)
        with pytest.raises(ProviderError) as raised:
            await provider.stream(HELLO, lambda _delta: None)
        return raised.value.line(), asyncio.get_running_loop().time()

    line, when = clock.run(main())
    assert (
        line
        == "anthropic sent no content for 300 s (only keep-alives, or nothing): try again later; modelStallSeconds in settings sets how long to wait"
    )
    assert when == pytest.approx(ended_at)
