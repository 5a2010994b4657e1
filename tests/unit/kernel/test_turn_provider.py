"""What a turn does with what a provider reports (ADR-0020): each response's usage is kept
on its AssistantFrame and summed, cache fields included, into `Conversation.used`; a stream
that breaks after text was shown fails the turn with its line and keeps that text in the
session and the history; an interrupt during a provider's retry wait ends the turn at once
(on the virtual clock, with the real anthropic provider on the in-memory transport)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from bingo.kernel.errors import ProviderError
from bingo.kernel.frames import AssistantFrame, spent
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.interfaces import Provider
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.kernel.turn import Conversation, TurnResult
from bingo.providers import AnthropicProvider
from bingo.wire import Delta, Message, ModelRequest, ModelResponse, ProviderSpec, TextBlock, TextDelta, Usage
from tests.support import clock
from tests.support.model_script import ErrorReply
from tests.support.model_transport import BASE, ModelTransport
from tests.unit.kernel.test_turn import Events, Log, Person


@dataclass
class Reporting:
    """A provider answering each request with one text and the usage it was given; a reply
    that is an exception is raised after its text was streamed."""

    replies: list[tuple[str, Usage | ProviderError]]
    spec: ProviderSpec = ProviderSpec(name="reporting")
    source: str = "test"
    requests: list[ModelRequest] = field(default_factory=lambda: [])

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        self.requests.append(request)
        text, outcome = self.replies.pop(0)
        on_delta(TextDelta(text=text))
        if isinstance(outcome, ProviderError):
            raise outcome
        return ModelResponse(
            message=Message(role="assistant", content=[TextBlock(text=text)]), stop_reason="end", usage=outcome
        )


def _conversation(provider: Provider, runner: Hooks, notices: Notices, log: Log) -> Conversation:
    settings = Settings()
    return Conversation(
        registry=Registry(notices),
        settings=settings,
        gate=Gate(settings.permissions),
        hooks=runner,
        notices=notices,
        log=log,
        events=Events(),
        asker=Person(),
        session="s",
        cwd="/",
        provider=provider,
    )


def _turns(provider: Provider, *prompts: str) -> tuple[Conversation, Log, list[TurnResult]]:
    notices, log = Notices(), Log()

    async def go() -> tuple[Conversation, list[TurnResult]]:
        async with Hooks([], notices, 1.0) as runner:
            conversation = _conversation(provider, runner, notices, log)
            async with asyncio.timeout(5):
                return conversation, [await conversation.run_turn(p) for p in prompts]

    conversation, results = asyncio.run(go())
    return conversation, log, results


def test_each_responses_usage_is_kept_on_its_frame_and_summed_with_the_cache_fields() -> None:
    first = Usage(input_tokens=2000, output_tokens=10, cache_read_tokens=0, cache_write_tokens=1800)
    second = Usage(input_tokens=2100, output_tokens=20, cache_read_tokens=1800, cache_write_tokens=90)
    conversation, log, results = _turns(Reporting([("one", first), ("two", second)]), "a", "b")

    assert [r.status for r in results] == ["done", "done"]
    assert [f.usage for f in log.frames if isinstance(f, AssistantFrame)] == [first, second]
    total = Usage(input_tokens=4100, output_tokens=30, cache_read_tokens=1800, cache_write_tokens=1890)
    assert conversation.used == total
    assert spent(log.frames) == total


def test_a_stream_broken_after_text_fails_the_turn_and_keeps_the_text() -> None:
    broke = ProviderError("anthropic failed mid-answer: Overloaded (overloaded_error)", "try again later")
    provider = Reporting([("Hel", broke), ("again", Usage())])
    conversation, log, results = _turns(provider, "say hello", "go on")

    assert results[0] == TurnResult(
        "failed", "anthropic failed mid-answer: Overloaded (overloaded_error): try again later"
    )
    kept = Message(role="assistant", content=[TextBlock(text="Hel")])
    assert [f.message for f in log.frames if isinstance(f, AssistantFrame)][0] == kept
    assert provider.requests[1].messages[1] == kept
    assert conversation.used == Usage()


def test_an_interrupt_during_a_retry_wait_ends_the_turn_at_once() -> None:
    transport = ModelTransport([ErrorReply(529, headers={"retry-after": "30"}), [("text", "never")]])
    notices, log = Notices(), Log()
    waiting = asyncio.Event()
    notices.listen(lambda _notice: waiting.set())
    provider = AnthropicProvider(api_key="k", base_url=BASE, transport=transport, notices=notices)

    async def go() -> tuple[TurnResult, float]:
        loop = asyncio.get_running_loop()
        async with Hooks([], notices, 1.0) as runner:
            conversation = _conversation(provider, runner, notices, log)
            turn = asyncio.create_task(conversation.run_turn("hi"))
            async with asyncio.timeout(5):
                await waiting.wait()
                conversation.interrupt()
                return await turn, loop.time()

    result, when = clock.run(go())

    assert result.status == "interrupted"
    assert when < 30.0
    assert len(transport.requests) == 1
