"""The scripts a test model plays, and the bytes each built-in API answers them with.

One script language for both players of a model: `model_transport.ModelTransport` (httpx's
MockTransport, for the providers' unit tests) and `model_server.ModelServer` (a real local
HTTP server, for the black-box tests that point the real binary at a model). This module
does no I/O: `answer` turns one request and its reply into a status, headers and the body's
chunks, and each player writes them its own way.

A script is a list of replies, used one per request in order, whichever API asks. A reply
is one of:

- a list of steps, streamed as a successful answer:
    ("text", "Hello there")          text, sent in several events (at least two when the text
                                     has two or more characters)
    ("tool", "t1", "count", {...})   a tool call (id, name, input); its input JSON is sent in
                                     several pieces
    ("stop", "max_tokens")           override the stop reason (Anthropic words: end_turn,
                                     tool_use, max_tokens; OpenAI's are derived)
    ("pause",) or ("pause", event)   the player holds the stream here (see each player)
  Any other step is handed to the player as it is, where it stands in the stream (the
  transport raises at `("raise", exc)`). The stop reason defaults to tool_use when a tool
  step is present, else end_turn.
- `ErrorReply(401, {...})`           an HTTP error with that JSON body (a string body is sent
                                     as plain text; without a body, a typical error body of
                                     the asking API is used); `headers=` adds response
                                     headers (`{"retry-after": "0"}`)
- `RawReply("data: {broken\\n\\n")`    exactly these bytes as a 200 event stream (for
                                     malformed and truncated streams)

A request beyond the script is answered HTTP 500 `model server: script exhausted`; a path
that is neither API's, HTTP 404 (and it uses no reply).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Answer", "ErrorReply", "RawReply", "Recorded", "Reply", "Step", "answer", "pieces"]

Step = tuple[Any, ...]
"""("text", str) | ("tool", id, name, input) | ("stop", reason) | ("pause", ...) | a player's own"""

_PIECES = 3
"""Text and tool input are cut into this many pieces, to prove the client streams."""


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error answer."""

    status: int
    body: Any = None
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class RawReply:
    """Exactly these bytes, as a 200 event stream."""

    text: str


Reply = Sequence[Step] | ErrorReply | RawReply


@dataclass(frozen=True)
class Recorded:
    """One request a player received."""

    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Answer:
    """What to send back: a status, headers, and the body as byte chunks, with the steps
    the player acts on itself (pauses) where they stand."""

    status: int
    headers: dict[str, str]
    chunks: Iterator[bytes | Step]


def pieces(text: str, count: int = _PIECES) -> list[str]:
    """`text` cut into `count` pieces or so (one when it is shorter than two characters)."""
    if len(text) < 2:
        return [text]
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _api(path: str) -> str | None:
    path = path.rstrip("/")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    return None


def answer(path: str, body: Any, next_reply: Callable[[], Reply | None]) -> Answer:
    """The answer to a POST of `body` to `path`, by the script's next reply."""
    api = _api(path)
    if api is None:
        return _error(404, {"error": {"message": f"no such path {path}"}})
    reply = next_reply()
    if reply is None:
        return _error(500, {"error": {"message": "model server: script exhausted"}})
    if isinstance(reply, ErrorReply):
        return _error(reply.status, reply.body or _default_error(api, reply.status), reply.headers)
    if isinstance(reply, RawReply):
        return _stream(iter([reply.text.encode()]))
    model = body.get("model", "model") if isinstance(body, dict) else "model"
    return _stream(_anthropic(reply, model) if api == "anthropic" else _openai(reply, model))


def _error(status: int, body: Any, extra: dict[str, str] | None = None) -> Answer:
    # A string body is sent as it is (text/plain), anything else as JSON.
    text = isinstance(body, str)
    data = body.encode() if text else json.dumps(body).encode()
    headers = {"content-type": "text/plain" if text else "application/json", "content-length": str(len(data))}
    headers.update(extra or {})
    return Answer(status, headers, iter([data]))


def _stream(chunks: Iterator[bytes | Step]) -> Answer:
    return Answer(200, {"content-type": "text/event-stream", "cache-control": "no-cache"}, chunks)


def _default_error(api: str, status: int) -> Any:
    message = {401: "invalid x-api-key", 404: "model not found", 429: "rate limited", 529: "Overloaded"}.get(
        status, "internal server error"
    )
    if api == "anthropic":
        kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _anthropic(steps: Sequence[Step], model: str) -> Iterator[bytes | Step]:
    stop = "tool_use" if any(s[0] == "tool" for s in steps) else "end_turn"
    yield _sse(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 11, "output_tokens": 1},
            },
        },
    )
    yield _sse("ping", {"type": "ping"})
    index = 0
    for step in steps:
        kind = step[0]
        if kind == "text":
            yield _sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            for piece in pieces(step[1]):
                yield _sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        elif kind == "tool":
            _, call_id, name, tool_input = step
            yield _sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}},
                },
            )
            for piece in ["", *pieces(json.dumps(tool_input))]:
                yield _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
            index += 1
        elif kind == "stop":
            stop = step[1]
        else:
            yield step
    yield _sse(
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 7}},
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _openai(steps: Sequence[Step], model: str) -> Iterator[bytes | Step]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse(
            None,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    stops = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
    stop = "tool_calls" if any(s[0] == "tool" for s in steps) else "stop"
    yield chunk({"role": "assistant", "content": ""})
    calls = 0
    for step in steps:
        kind = step[0]
        if kind == "text":
            for piece in pieces(step[1]):
                yield chunk({"content": piece})
        elif kind == "tool":
            _, call_id, name, tool_input = step
            yield chunk(
                {
                    "tool_calls": [
                        {"index": calls, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
                    ]
                }
            )
            for piece in pieces(json.dumps(tool_input)):
                yield chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
            calls += 1
        elif kind == "stop":
            stop = stops.get(step[1], step[1])
        else:
            yield step
    yield chunk({}, stop)
    yield _sse(
        None,
        {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        },
    )
    yield b"data: [DONE]\n\n"
