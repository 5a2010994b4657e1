"""A built-in provider's one HTTP client (ADR-0040), through its in-memory twin: made at the
first request and kept for every later one until `aclose`; a request dropped unanswered on
a client that has answered before is sent again at once and unsaid, once; an answer whose
stream goes on after it is whole is returned without waiting on the rest. Whether the
connection itself is reused is the black-box tests' (tests/e2e/test_one_connection_per_provider.py):
an in-memory transport has none."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx

from bingo.kernel.notices import Notices
from bingo.providers import AnthropicProvider, OpenAIProvider
from bingo.providers._retry import Retry
from bingo.wire import ModelResponse, Notice, TextBlock
from tests.support import clock
from tests.support.model_script import Reply, answer
from tests.support.model_transport import BASE, HELLO, ModelTransport

NO_WAIT = Retry(random=lambda: 0.0)
"""Four tries, no backoff wait: a test sees the notices, not the waits."""


class _Closing(ModelTransport):
    """The scripted model, counting the times a client closed it."""

    def __init__(self, replies: list[Reply | Exception]) -> None:
        super().__init__(replies)
        self.shut = 0

    async def aclose(self) -> None:
        self.shut += 1


def _anthropic(transport: httpx.AsyncBaseTransport, said: list[Notice] | None = None) -> AnthropicProvider:
    notices = Notices()
    if said is not None:
        notices.listen(said.append)
    return AnthropicProvider(api_key="k", base_url=BASE, transport=transport, retry=NO_WAIT, notices=notices)


def _texts(responses: list[ModelResponse]) -> list[str]:
    return [b.text for r in responses for b in r.message.content if isinstance(b, TextBlock)]


async def _ask(provider: AnthropicProvider | OpenAIProvider, times: int) -> list[ModelResponse]:
    async with asyncio.timeout(5):
        return [await provider.stream(HELLO, lambda delta: None) for _ in range(times)]


def _asked(provider: AnthropicProvider | OpenAIProvider, times: int) -> list[ModelResponse]:
    """`times` responses from `provider` in turn, on the virtual clock; its client closed after."""

    async def main() -> list[ModelResponse]:
        try:
            return await _ask(provider, times)
        finally:
            await provider.aclose()

    return clock.run(main())


def test_a_provider_keeps_one_client_for_its_requests_until_aclose() -> None:
    transport = _Closing([[("text", "one")], [("text", "two")], [("text", "three")]])
    provider = _anthropic(transport)

    async def main() -> tuple[list[ModelResponse], int]:
        responses = await _ask(provider, 3)
        open_after_three = transport.shut
        await provider.aclose()
        return responses, open_after_three

    responses, shut_before = asyncio.run(main())

    assert _texts(responses) == ["one", "two", "three"]
    assert (shut_before, transport.shut) == (0, 1), "one client, closed once, by aclose"


def test_aclose_before_any_request_closes_nothing_and_a_request_after_it_makes_a_new_client() -> None:
    transport = _Closing([[("text", "after")]])
    provider = _anthropic(transport)

    async def main() -> list[ModelResponse]:
        await provider.aclose()
        responses = await _ask(provider, 1)
        await provider.aclose()
        await provider.aclose()
        return responses

    responses = asyncio.run(main())

    assert _texts(responses) == ["after"]
    assert transport.shut == 1


def test_a_request_dropped_unanswered_after_an_answer_is_sent_again_at_once_unsaid() -> None:
    dropped = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    transport = ModelTransport([[("text", "one")], dropped, [("text", "two")]])
    said: list[Notice] = []
    provider = _anthropic(transport, said)

    responses = _asked(provider, 2)

    assert _texts(responses) == ["one", "two"]
    assert (len(transport.requests), said) == (3, [])


def test_a_second_drop_in_a_row_is_a_dropped_connection_retried_with_its_notice() -> None:
    dropped = httpx.ReadError("connection reset by peer")
    transport = ModelTransport([[("text", "one")], dropped, dropped, [("text", "two")]])
    said: list[Notice] = []
    provider = _anthropic(transport, said)

    responses = _asked(provider, 2)

    assert _texts(responses) == ["one", "two"]
    assert len(transport.requests) == 4
    assert [f"{n.source}: {n.message}" for n in said] == [
        "anthropic: connection dropped; retrying in 0.0 s, attempt 2 of 4"
    ]


def test_a_drop_on_the_first_request_is_not_sent_again_unsaid() -> None:
    dropped = httpx.RemoteProtocolError("Server disconnected without sending a response.")
    transport = ModelTransport([dropped, [("text", "one")]])
    said: list[Notice] = []
    provider = _anthropic(transport, said)

    responses = _asked(provider, 1)

    assert _texts(responses) == ["one"]
    assert [n.message for n in said] == ["connection dropped; retrying in 0.0 s, attempt 2 of 4"]


class _Lingering(httpx.AsyncByteStream):
    """A whole answer's bytes, then a stream that never ends (keep-alives, then nothing)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk
        yield b": still here\n\n"
        await asyncio.Event().wait()

    async def aclose(self) -> None:
        self.closed = True


def test_an_answer_whose_stream_goes_on_after_it_is_whole_is_returned_and_its_body_closed() -> None:
    bodies: list[_Lingering] = []

    def handle(request: httpx.Request) -> httpx.Response:
        reply = answer(request.url.path, None, lambda: [("text", "whole")])
        bodies.append(_Lingering([c for c in reply.chunks if isinstance(c, bytes)]))
        return httpx.Response(200, headers=reply.headers, stream=bodies[-1])

    provider = _anthropic(httpx.MockTransport(handle))

    responses = _asked(provider, 1)  # the drain's bound passes on the virtual clock

    assert _texts(responses) == ["whole"]
    assert [body.closed for body in bodies] == [True]
