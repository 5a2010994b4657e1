"""A real local HTTP server that plays a model, for the black-box tests of the real binary.

It answers `POST .../v1/messages` in the Anthropic Messages API's server-sent events and
`POST .../chat/completions` (with or without a `/v1` prefix) in OpenAI's Chat Completions
chunks, from a script (`model_script`: the same language `model_transport`, the providers'
in-memory twin, plays). Standard library only, so it runs anywhere the tests run.

A `("pause",)` step waits until the server is released or stopped (`ModelServer.release()`);
`("pause", event)` waits for that `threading.Event` instead; no pause holds its thread
longer than PAUSE_CAP.

Every request is recorded (`ModelServer.requests`: path, headers, parsed JSON body), so a test
can assert what reached the model, e.g. that a tool_result carried a refusal.

By default it speaks HTTP/1.0, so every answer ends its connection. With `keep_alive=True`
it speaks HTTP/1.1 as the APIs do (a stream is sent chunked) and keeps each connection for
the next request; `connections` counts the connections it accepted. `closes` makes it close
a kept connection as servers do: "after-answer" closes each once its answer is sent (an
idle connection closed at once), "on-reuse" reads a request that comes on a connection that
already carried an answer and closes it unanswered (the server's close meeting the request
on its way), counted in `dropped` and not recorded.

In a test:

    with ModelServer([[("text", "Hello world")]]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k"}

Point `ANTHROPIC_BASE_URL=<url>` or `OPENAI_BASE_URL=<url>/v1` at it (and set a dummy
ANTHROPIC_API_KEY / OPENAI_API_KEY so the provider is chosen).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from .model_script import ErrorReply, RawReply, Recorded, Reply, Step, answer

__all__ = ["ErrorReply", "ModelServer", "RawReply", "Recorded", "Reply", "Step"]

PAUSE_CAP = 30.0
"""A paused reply never holds its thread longer than this, even if nobody releases it."""

_POLL = 0.02
"""How often the serving loop looks for `stop()`: socketserver's shutdown waits one poll."""


class _Handler(BaseHTTPRequestHandler):
    answered = 0
    """Answers sent on this handler's connection."""

    @property
    def owner(self) -> ModelServer:
        server = self.server
        assert isinstance(server, _Server)
        return server.owner

    def setup(self) -> None:
        super().setup()
        owner = self.owner
        owner.connected()
        if owner.keep_alive:
            self.protocol_version = "HTTP/1.1"

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
        if owner.closes == "on-reuse" and self.answered:
            owner.drop()
            self.close_connection = True
            return
        owner.record(Recorded(self.path, dict(self.headers.items()), body))
        reply = answer(self.path, body, owner.next_reply)
        # A stream has no content-length: on HTTP/1.0 its body ends when the connection
        # closes; on HTTP/1.1 it is sent chunked. Every write reaches the client at once
        # (the writes are unbuffered).
        chunked = owner.keep_alive and "content-length" not in reply.headers
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if chunked:
                self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks:
                if isinstance(chunk, bytes):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                elif chunk[0] == "pause":
                    self._pause(chunk)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (an interrupted turn): nothing to answer
            return
        self.answered += 1
        if owner.closes == "after-answer":
            self.close_connection = True

    def _pause(self, step: Step) -> None:
        owner = self.owner
        owner.paused.set()
        event = step[1] if len(step) > 1 else owner.released
        event.wait(PAUSE_CAP)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: ModelServer


class ModelServer:
    """The scripted model, serving on 127.0.0.1 in a background thread while entered."""

    def __init__(
        self,
        replies: Sequence[Reply],
        *,
        keep_alive: bool = False,
        closes: Literal["after-answer", "on-reuse"] | None = None,
    ) -> None:
        self._replies = list(replies)
        self._lock = threading.Lock()
        self.keep_alive = keep_alive or closes is not None
        self.closes = closes
        self.connections = 0
        """Connections accepted."""
        self.dropped = 0
        """Requests closed unanswered (`closes="on-reuse"`)."""
        self.requests: list[Recorded] = []
        self.paused = threading.Event()
        """Set when a reply reaches a pause step."""
        self.released = threading.Event()
        """Set to let `("pause",)` steps go on; set on stop."""
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

    def connected(self) -> None:
        with self._lock:
            self.connections += 1

    def drop(self) -> None:
        with self._lock:
            self.dropped += 1

    def next_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.pop(0) if self._replies else None

    def release(self) -> None:
        """Let every `("pause",)` step go on."""
        self.released.set()

    def start(self) -> ModelServer:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": _POLL}, daemon=True)
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
