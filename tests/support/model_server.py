"""A real local HTTP server that plays a model, speaking both built-in providers' APIs.

It answers `POST .../v1/messages` in the Anthropic Messages API's server-sent events and
`POST .../chat/completions` (with or without a `/v1` prefix) in OpenAI's Chat Completions
chunks, from a script. Standard library only, so it runs anywhere the tests run.

The script is a list of replies, used one per request in order, whichever API asks. A reply is
one of:

- a list of steps, streamed as a successful answer:
    ["text", "Hello there"]          text, sent in several events (at least two when the text
                                     has two or more characters)
    ["tool", "t1", "count", {...}]   a tool call (id, name, input); its input JSON is sent in
                                     several pieces
    ["stop", "max_tokens"]           override the stop reason (Anthropic words: end_turn,
                                     tool_use, max_tokens; OpenAI's are derived)
    ["pause"]                        wait here until the server is released or stopped
                                     (`ModelServer.release()`); in Python, ("pause", event)
                                     waits for that `threading.Event` instead
  The stop reason defaults to tool_use when a tool step is present, else end_turn.
- {"status": 401, "body": {...}}     an HTTP error with that JSON body (a string body is sent
                                     as plain text; without a body, a typical error body of
                                     the asking API is used)
- {"raw": "data: {broken\\n\\n"}       exactly these bytes as a 200 event stream (for
                                     malformed and truncated streams)

A request beyond the script is answered HTTP 500 `model server: script exhausted`.

Every request is recorded (`ModelServer.requests`: path, headers, parsed JSON body), so a test
can assert what reached the model, e.g. that a tool_result carried a refusal.

In a test:

    with ModelServer([[("text", "Hello world")]]) as server:
        provider = AnthropicProvider(api_key="k", base_url=server.url)

As a process, for black-box tests of the real binary:

    python -m tests.support.model_server --script script.json [--log requests.jsonl]

prints the port on the first stdout line, appends each request as one JSON line
(`{"path", "body"}`) to the log, and serves until SIGTERM (or Ctrl-C).
Point `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` or `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`
at it (and set a dummy ANTHROPIC_API_KEY / OPENAI_API_KEY so the provider is chosen). The
script file holds the list of replies, or `{"replies": [...]}`.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["ErrorReply", "ModelServer", "RawReply", "Recorded", "Reply", "Step", "load_script"]

Step = tuple[Any, ...]
"""("text", str) | ("tool", id, name, input) | ("stop", reason) | ("pause",) | ("pause", Event)"""

PAUSE_CAP = 30.0
"""A paused reply never holds its thread longer than this, even if nobody releases it."""

_POLL = 0.02
"""How often the serving loop looks for `stop()`: socketserver's shutdown waits one poll."""

_PIECES = 3
"""Text and tool input are cut into this many pieces, to prove the client streams."""


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error answer."""

    status: int
    body: Any = None


@dataclass(frozen=True)
class RawReply:
    """Exactly these bytes, as a 200 event stream."""

    text: str


Reply = Sequence[Step] | ErrorReply | RawReply


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


def _pieces(text: str, count: int = _PIECES) -> list[str]:
    if len(text) < 2:
        return [text]
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def load_script(data: Any) -> list[Reply]:
    """Replies from a script's JSON (a list, or `{"replies": [...]}`)."""
    items = data["replies"] if isinstance(data, dict) else data
    replies: list[Reply] = []
    for item in items:
        if isinstance(item, dict) and "raw" in item:
            replies.append(RawReply(str(item["raw"])))
        elif isinstance(item, dict):
            replies.append(ErrorReply(int(item["status"]), item.get("body")))
        else:
            replies.append([tuple(step) for step in item])
    return replies


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    @property
    def owner(self) -> ModelServer:
        server = self.server
        assert isinstance(server, _Server)
        return server.owner

    def log_message(self, format: str, *args: Any) -> None:
        return None  # keep test output clean

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        owner = self.owner
        owner.record(Recorded(self.path, dict(self.headers.items()), body))
        api = "anthropic" if self.path.rstrip("/").endswith("/messages") else "openai"
        if not (api == "anthropic" or self.path.rstrip("/").endswith("/chat/completions")):
            self._error(404, {"error": {"message": f"no such path {self.path}"}})
            return
        reply = owner.next_reply()
        try:
            if reply is None:
                self._error(500, {"error": {"message": "model server: script exhausted"}})
            elif isinstance(reply, ErrorReply):
                self._error(reply.status, reply.body or _default_error(api, reply.status))
            elif isinstance(reply, RawReply):
                self._start_stream()
                self.wfile.write(reply.text.encode())
            else:
                self._start_stream()
                model = body.get("model", "model") if isinstance(body, dict) else "model"
                if api == "anthropic":
                    self._anthropic(reply, model)
                else:
                    self._openai(reply, model)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (an interrupted turn): nothing to answer

    def _error(self, status: int, body: Any) -> None:
        # A string body is sent as it is (text/plain), anything else as JSON.
        text = isinstance(body, str)
        data = body.encode() if text else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "text/plain" if text else "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        # HTTP/1.0 without content-length: the body ends when the connection closes,
        # and every write reaches the client at once (the handler's writes are unbuffered).
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()

    def _pause(self, step: Step) -> None:
        owner = self.owner
        owner.paused.set()
        event = step[1] if len(step) > 1 else owner.released
        event.wait(PAUSE_CAP)

    def _anthropic(self, steps: Sequence[Step], model: str) -> None:
        w = self.wfile.write
        stop = "tool_use" if any(s[0] == "tool" for s in steps) else "end_turn"
        w(_sse("message_start", {"type": "message_start", "message": {
            "id": "msg_test", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 1}}}))
        w(_sse("ping", {"type": "ping"}))
        index = 0
        for step in steps:
            kind = step[0]
            if kind == "text":
                w(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "text", "text": ""}}))
                for piece in _pieces(step[1]):
                    w(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": piece}}))
                w(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
                index += 1
            elif kind == "tool":
                _, call_id, name, tool_input = step
                w(_sse("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "tool_use", "id": call_id,
                                                                 "name": name, "input": {}}}))
                for piece in ["", *_pieces(json.dumps(tool_input))]:
                    w(_sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": piece}}))
                w(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
                index += 1
            elif kind == "stop":
                stop = step[1]
            elif kind == "pause":
                self._pause(step)
        w(_sse("message_delta", {"type": "message_delta",
                                 "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"output_tokens": 7}}))
        w(_sse("message_stop", {"type": "message_stop"}))

    def _openai(self, steps: Sequence[Step], model: str) -> None:
        w = self.wfile.write

        def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
            w(_sse(None, {"id": "chatcmpl-test", "object": "chat.completion.chunk",
                          "created": 0, "model": model,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))

        stops = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
        stop = "tool_calls" if any(s[0] == "tool" for s in steps) else "stop"
        chunk({"role": "assistant", "content": ""})
        calls = 0
        for step in steps:
            kind = step[0]
            if kind == "text":
                for piece in _pieces(step[1]):
                    chunk({"content": piece})
            elif kind == "tool":
                _, call_id, name, tool_input = step
                chunk({"tool_calls": [{"index": calls, "id": call_id, "type": "function",
                                       "function": {"name": name, "arguments": ""}}]})
                for piece in _pieces(json.dumps(tool_input)):
                    chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]})
                calls += 1
            elif kind == "stop":
                stop = stops.get(step[1], step[1])
            elif kind == "pause":
                self._pause(step)
        chunk({}, stop)
        w(_sse(None, {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                      "model": model, "choices": [],
                      "usage": {"prompt_tokens": 11, "completion_tokens": 7,
                                "total_tokens": 18}}))
        w(b"data: [DONE]\n\n")


def _default_error(api: str, status: int) -> Any:
    message = {401: "invalid x-api-key", 404: "model not found", 429: "rate limited"}.get(
        status, "internal server error"
    )
    if api == "anthropic":
        return {"type": "error", "error": {"type": "api_error", "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ModelServer


class ModelServer:
    """The scripted model, serving on 127.0.0.1 in a background thread while entered."""

    def __init__(self, replies: Sequence[Reply], *, log: Path | None = None) -> None:
        self._replies = list(replies)
        self._lock = threading.Lock()
        self._log = log
        self.requests: list[Recorded] = []
        self.paused = threading.Event()
        """Set when a reply reaches a pause step."""
        self.released = threading.Event()
        """Set to let `["pause"]` steps go on; set on stop."""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not running"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL for ANTHROPIC_BASE_URL (OpenAI: add `/v1`, or not: both work)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order."""
        with self._lock:
            return [r.body for r in self.requests]

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)
            if self._log is not None:
                with self._log.open("a", encoding="utf-8") as log:
                    log.write(json.dumps({"path": request.path, "body": request.body}) + "\n")

    def next_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.pop(0) if self._replies else None

    def release(self) -> None:
        """Let every `["pause"]` step go on."""
        self.released.set()

    def start(self) -> ModelServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": _POLL}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="model_server", description="A scripted model speaking the Anthropic and OpenAI APIs."
    )
    parser.add_argument("--script", type=Path, required=True, help="the replies, as JSON")
    parser.add_argument("--log", type=Path, help="append each request here as a JSON line")
    args = parser.parse_args(argv)
    replies = load_script(json.loads(args.script.read_text(encoding="utf-8")))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with ModelServer(replies, log=args.log) as server:
        print(server.port, flush=True)
        try:
            # A bounded wait in a loop, so SIGTERM's handler gets to run promptly.
            while not done.wait(1.0):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
