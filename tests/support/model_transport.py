"""The built-in providers' in-memory twin: a scripted model as an httpx `MockTransport`, and
the few helpers the provider tests share.

`ModelTransport` plays a script (`model_script`: the language the black-box tests'
`ModelServer` plays too) to a provider built with `transport=`: no socket, no thread. It
records every request (`requests`, and the httpx requests themselves in `sent`, whose
`extensions["timeout"]` says what timeouts the provider set). Where a step holds or breaks
the stream, the stream does it, on the test's own event loop:

    ("pause",)          waits until `released` is set (set it, or cancel the call)
    ("pause", event)    waits for that `asyncio.Event`
    ("raise", exc)      raises `exc` (an httpx error, as a network would) mid-body

`paused` is set when a stream reaches a pause, and `closed` counts the response bodies
the provider closed. A reply that is an exception is raised before any answer, as a
connection that cannot be made is.

In a test:

    transport = ModelTransport([[("text", "Hello world")]])
    response, deltas = ask(AnthropicProvider(api_key="k", base_url=BASE, transport=transport))
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence

import httpx
import pytest

from bingo.kernel.errors import ProviderError
from bingo.kernel.interfaces import Provider
from bingo.wire import (
    Delta,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    TextBlock,
    TextPart,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)

from .model_script import Recorded, Reply, Step, answer

__all__ = ["BASE", "CONVERSATION", "HELLO", "ModelTransport", "ask", "failure"]

BASE = "http://model.test"
"""A base URL for providers under test: the transport answers whatever the host."""

HELLO = ModelRequest(model="test-model", messages=[Message(role="user", content=[TextBlock(text="hi")])])

CONVERSATION = ModelRequest(
    model="test-model",
    system="Be brief.",
    max_tokens=100,
    tools=[ToolSpec(name="count", description="Counts.", input_schema={"type": "object"})],
    messages=[
        Message(role="user", content=[TextBlock(text="count notes.txt")]),
        Message(
            role="assistant",
            content=[TextBlock(text="Sure."), ToolUseBlock(id="t1", name="count", input={"path": "notes.txt"})],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="t1",
                    parts=[TextPart(text="count is not allowed here"), ImagePart(media_type="image/png", data="iVBO")],
                    is_error=True,
                )
            ],
        ),
    ],
)
"""A request with every kind of thing a request carries: system, limit, tools, text, a tool
call and a failed result with an image."""


class _Body(httpx.AsyncByteStream):
    """One answer's body, streamed as the script says."""

    def __init__(self, owner: ModelTransport, chunks: Iterator[bytes | Step]) -> None:
        self._owner = owner
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            if isinstance(chunk, bytes):
                yield chunk
            elif chunk[0] == "pause":
                self._owner.paused.set()
                await (chunk[1] if len(chunk) > 1 else self._owner.released).wait()
            elif chunk[0] == "raise":
                raise chunk[1]
            else:
                raise AssertionError(f"no such step {chunk!r}")

    async def aclose(self) -> None:
        self._owner.closed += 1


class ModelTransport(httpx.MockTransport):
    """The scripted model, answering in memory (see the module docstring)."""

    def __init__(self, replies: Sequence[Reply | Exception] = ()) -> None:
        super().__init__(self._handle)
        self._replies = list(replies)
        self.requests: list[Recorded] = []
        self.sent: list[httpx.Request] = []
        self.paused = asyncio.Event()
        self.released = asyncio.Event()
        self.closed = 0

    @property
    def bodies(self) -> list[object]:
        """The JSON bodies received, in order."""
        return [r.body for r in self.requests]

    def _next(self) -> Reply | None:
        reply = self._replies.pop(0) if self._replies else None
        assert not isinstance(reply, Exception)
        return reply

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        body = json.loads(request.content) if request.content else None
        self.requests.append(Recorded(request.url.path, dict(request.headers.items()), body))
        refused = self._replies[0] if self._replies else None
        if isinstance(refused, Exception):
            self._replies.pop(0)
            raise refused
        reply = answer(request.url.path, body, self._next)
        return httpx.Response(reply.status, headers=reply.headers, stream=_Body(self, reply.chunks))


def ask(provider: Provider, request: ModelRequest = HELLO) -> tuple[ModelResponse, list[Delta]]:
    """One response from `provider`, and the deltas it streamed, within 5 s."""
    deltas: list[Delta] = []

    async def main() -> ModelResponse:
        async with asyncio.timeout(5):
            return await provider.stream(request, deltas.append)

    return asyncio.run(main()), deltas


def failure(provider: Provider, request: ModelRequest = HELLO) -> ProviderError:
    """The ProviderError `provider` fails with."""
    with pytest.raises(ProviderError) as caught:
        ask(provider, request)
    return caught.value
