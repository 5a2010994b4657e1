"""A momentary failure is tried again (`_http.Retry`, ADR-0020), on a virtual clock: the
server's retry-after is waited exactly, else a full-jitter backoff doubling per try, a
bounded number of times, one notice per wait; never once any of the answer was shown,
never for a refusal; and cancelling the turn ends a wait at once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest

from bingo.kernel.errors import ProviderError
from bingo.kernel.notices import Notices
from bingo.providers import AnthropicProvider, OpenAIProvider
from bingo.providers._retry import Retry, retry_after
from bingo.wire import ModelResponse, Notice, TextBlock
from tests.support import clock
from tests.support.model_script import ErrorReply, RawReply, Reply
from tests.support.model_transport import BASE, HELLO, ModelTransport

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
"""The body of Anthropic's 529: the overloaded_error of the streaming page's "Error events"."""

HALF = Retry(random=lambda: 0.5)
"""Four tries; each backoff wait half its bound (0.5 s, 1 s, 2 s)."""


class _Run:
    """One `stream` of a built-in on a scripted transport, on the virtual clock: what it
    answered or raised, the notices said, the requests made and the virtual time taken."""

    def __init__(self, replies: list[Reply | Exception], *, retry: Retry = HALF, provider: str = "anthropic") -> None:
        self.transport = ModelTransport(replies)
        self.said: list[Notice] = []
        notices = Notices()
        notices.listen(self.said.append)
        if provider == "anthropic":
            self.provider: AnthropicProvider | OpenAIProvider = AnthropicProvider(
                api_key="k", base_url=BASE, transport=self.transport, retry=retry, notices=notices
            )
        else:
            self.provider = OpenAIProvider(
                api_key="k", base_url=f"{BASE}/v1", transport=self.transport, retry=retry, notices=notices
            )
        self.texts: list[str] = []
        self.elapsed = 0.0

    def go(self) -> ModelResponse:
        async def main() -> ModelResponse:
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                async with asyncio.timeout(600):  # virtual seconds
                    return await self.provider.stream(HELLO, lambda d: self.texts.append(getattr(d, "text", "")))
            finally:
                self.elapsed = loop.time() - started

        return clock.run(main())

    def fails(self) -> ProviderError:
        with pytest.raises(ProviderError) as caught:
            self.go()
        return caught.value

    @property
    def lines(self) -> list[str]:
        return [f"{n.source}: {n.message}" for n in self.said]


def test_an_overloaded_529_is_tried_again_after_one_notice_and_the_answer_comes() -> None:
    run = _Run([ErrorReply(529, OVERLOADED), [("text", "Hello")]])

    response = run.go()

    assert response.message.content == [TextBlock(text="Hello")]
    assert run.lines == ["anthropic: overloaded (529); retrying in 0.5 s, attempt 2 of 4"]
    assert len(run.transport.requests) == 2
    assert run.elapsed == pytest.approx(0.5)


def test_the_wait_the_server_asks_for_is_waited_exactly() -> None:
    run = _Run([ErrorReply(429, headers={"retry-after": "3"}), [("text", "ok")]])

    run.go()

    assert run.lines == ["anthropic: rate limited (429); retrying in 3.0 s, attempt 2 of 4"]
    assert run.elapsed == pytest.approx(3.0)


def test_retry_after_ms_wins_over_retry_after() -> None:
    run = _Run(
        [ErrorReply(503, headers={"retry-after-ms": "1250", "retry-after": "9"}), [("text", "ok")]], provider="openai"
    )

    run.go()

    assert run.lines == ["openai: unavailable (503); retrying in 1.2 s, attempt 2 of 4"]
    assert run.elapsed == pytest.approx(1.25)


def test_retry_after_reads_seconds_milliseconds_and_http_dates() -> None:
    now = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2026, 12, 3, 12, 0, 7, tzinfo=UTC), usegmt=True)

    assert retry_after({"retry-after": later}, now=now.timestamp()) == pytest.approx(7.0)
    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert retry_after({"retry-after-ms": "40"}) == pytest.approx(0.04)
    assert retry_after({"retry-after": "-3"}) == 0.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_backoff_doubles_with_full_jitter_and_the_last_failure_says_how_many_tries() -> None:
    run = _Run([ErrorReply(500)] * 4)

    error = run.fails()

    assert run.lines == [
        "anthropic: server error (500); retrying in 0.5 s, attempt 2 of 4",
        "anthropic: server error (500); retrying in 1.0 s, attempt 3 of 4",
        "anthropic: server error (500); retrying in 2.0 s, attempt 4 of 4",
    ]
    assert (
        error.line()
        == "anthropic answered HTTP 500: internal server error; tried 4 times: the service failed: try again later"
    )
    assert len(run.transport.requests) == 4
    assert run.elapsed == pytest.approx(3.5)


def test_the_jitter_is_drawn_below_a_bound_that_doubles_up_to_its_cap() -> None:
    retry = Retry(base=1.0, cap=5.0, random=lambda: 1.0)

    assert [retry.wait(tries, None) for tries in (1, 2, 3, 4, 5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert Retry(random=lambda: 0.0).wait(3, None) == 0.0


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_a_refusal_is_never_tried_again(status: int) -> None:
    run = _Run([ErrorReply(status), [("text", "never")]])

    run.fails()

    assert (len(run.transport.requests), run.lines) == (1, [])


@pytest.mark.parametrize("status", [408, 409, 429, 502, 504, 529])
def test_each_momentary_status_is_tried_again(status: int) -> None:
    run = _Run([ErrorReply(status), [("text", "ok")]])

    run.go()

    assert len(run.transport.requests) == 2


def test_x_should_retry_false_stops_a_retry() -> None:
    run = _Run([ErrorReply(529, OVERLOADED, headers={"x-should-retry": "false"}), [("text", "never")]])

    error = run.fails()

    assert error.line() == "anthropic answered HTTP 529: Overloaded: the service is overloaded: try again later"
    assert (len(run.transport.requests), run.lines) == (1, [])


def test_an_overloaded_event_before_any_text_is_tried_again() -> None:
    overloaded = RawReply((FIXTURES / "anthropic" / "overloaded.sse").read_text())
    run = _Run([overloaded, [("text", "Hello")]])

    run.go()

    assert run.lines == ["anthropic: overloaded (overloaded_error); retrying in 0.5 s, attempt 2 of 4"]
    assert run.texts == ["He", "ll", "o"]


def test_a_failure_after_text_was_shown_is_never_tried_again() -> None:
    broken = RawReply((FIXTURES / "anthropic" / "error_mid_stream.sse").read_text())
    run = _Run([broken, [("text", "a second answer")]])

    error = run.fails()

    assert error.line() == "anthropic failed mid-answer: Overloaded (overloaded_error): try again later"
    assert (run.texts, len(run.transport.requests), run.lines) == (["Hello"], 1, [])


def test_a_connection_dropped_before_anything_arrived_is_tried_again() -> None:
    run = _Run([[("raise", httpx.RemoteProtocolError("peer closed"))], [("text", "ok")]], provider="openai")

    run.go()

    assert run.lines == ["openai: connection dropped; retrying in 0.5 s, attempt 2 of 4"]


def test_a_server_asking_for_too_long_a_wait_is_not_waited_for() -> None:
    run = _Run([ErrorReply(429, headers={"retry-after": "3600"}), [("text", "never")]])

    error = run.fails()

    assert error.hint == "the service asks to wait 3600 s before trying again"
    assert (len(run.transport.requests), run.elapsed) == (1, 0.0)


def test_one_attempt_means_no_retry() -> None:
    run = _Run([ErrorReply(529, OVERLOADED), [("text", "never")]], retry=Retry(attempts=1))

    error = run.fails()

    assert error.line() == "anthropic answered HTTP 529: Overloaded: the service is overloaded: try again later"
    assert len(run.transport.requests) == 1


def test_cancelling_during_the_wait_ends_the_call_at_once() -> None:
    transport = ModelTransport([ErrorReply(529, OVERLOADED, headers={"retry-after": "30"}), [("text", "never")]])
    waiting = asyncio.Event()
    notices = Notices()
    notices.listen(lambda _notice: waiting.set())
    provider = AnthropicProvider(api_key="k", base_url=BASE, transport=transport, notices=notices)

    async def main() -> float:
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(provider.stream(HELLO, lambda _d: None))
        async with asyncio.timeout(5):
            await waiting.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return loop.time()

    assert clock.run(main()) < 30.0
    assert len(transport.requests) == 1


def test_an_openai_server_error_chunk_before_any_text_is_tried_again_and_a_refusal_chunk_is_not() -> None:
    server_error = RawReply('data: {"error": {"message": "The server had an error", "type": "server_error"}}\n\n')
    run = _Run([server_error, [("text", "ok")]], provider="openai")

    run.go()

    assert run.lines == ["openai: server error (server_error); retrying in 0.5 s, attempt 2 of 4"]

    invalid = RawReply('data: {"error": {"message": "bad request", "type": "invalid_request_error"}}\n\n')
    refused = _Run([invalid, [("text", "never")]], provider="openai")

    error = refused.fails()

    assert error.line() == "openai failed mid-answer: bad request (invalid_request_error): try again later"
    assert (len(refused.transport.requests), refused.lines) == (1, [])
