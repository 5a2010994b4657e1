"""The zoo's hostile peers: MCP servers (stdio and Streamable HTTP) and model services that
try to make bingo hold unbounded memory or wait for ever (issue 23, items 8, 9 and 13).

    python3 _hostile.py BEHAVIOUR RECORD              an MCP server on stdio
    python3 _hostile.py BEHAVIOUR RECORD --http PORT  an HTTP server (MCP at /mcp, a model
                                                      at .../v1/messages)

RECORD is a file this program appends one JSON line to per thing that happened to it: what
it was asked (`{"asked": "tools/list"}`), what headers reached it, and how much of a hostile
answer it got out before bingo hung up (`{"sent": N, "hung_up": true}`). It is the attacked
side's own record, so the tests take their evidence from it. Python 3 standard library only.

Behaviours (an MCP server's one tool is `poke` unless said):

  mcp-list-flood      stdio: `poke` sends 200 000 `notifications/tools/list_changed` before it
                      answers (reading nothing meanwhile), then answers every `tools/list`
  mcp-huge-result     stdio: `poke` answers a 20 MB text result on one line, written as the
                      TypeScript SDK orders it (`{"result": ..., "jsonrpc", "id"}`: the id last)
  mcp-huge-error      HTTP: `poke` is answered HTTP 500 with a 400 MB body
  mcp-huge-sse        HTTP: `poke` is answered with an event stream whose first line is 400 MB
                      long, then the stream stays open (for at most HANG seconds)
  mcp-plain           stdio or HTTP: a well-behaved server (over HTTP it records the headers of
                      every request, as every behaviour does)
  model-huge-line     HTTP model (Anthropic's API): message_start, then one 300 MB line
  model-huge-error    HTTP model: every request answered HTTP 529 with a 300 MB body
  model-keepalive     HTTP model: message_start, then keep-alive comments and pings every
                      50 ms, and never any content (for at most HANG seconds)
"""

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BEHAVIOUR = sys.argv[1]
RECORD = sys.argv[2]
HANG = 120.0
"""No hostile wait outlasts this: the tests' own timeouts are shorter, so bingo must end it."""
MB = 1024 * 1024
LOCK = threading.Lock()


def record(**what):
    with LOCK, open(RECORD, "a", encoding="utf-8") as file:
        file.write(json.dumps(what) + "\n")


TOOL = {"name": "poke", "description": "A hostile tool.", "inputSchema": {"type": "object"}}


def initialized(request_id):
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "hostile", "version": "0"},
        },
    }


def listed(request_id):
    return {"jsonrpc": "2.0", "id": request_id, "result": {"tools": [TOOL]}}


def poked(request_id, said="poked"):
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": said}]}}


# --- stdio --------------------------------------------------------------------------


def send(message):
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def stdio():
    record(pid=os.getpid())
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            continue
        record(asked=method)
        if method == "initialize":
            send(initialized(request_id))
        elif method == "tools/list":
            send(listed(request_id))
        elif method == "tools/call" and BEHAVIOUR == "mcp-list-flood":
            notice = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
            out = sys.stdout.buffer
            for _ in range(200):
                out.write(notice * 1000)
            out.flush()
            record(flooded=200000)
            send(poked(request_id, "flooded"))
        elif method == "tools/call" and BEHAVIOUR == "mcp-huge-result":
            out = sys.stdout.buffer
            out.write(b'{"result": {"content": [{"type": "text", "text": "')
            chunk = b"x" * MB
            try:
                for _ in range(20):
                    out.write(chunk)
                out.write(b'"}]}, "jsonrpc": "2.0", "id": %s}\n' % json.dumps(request_id).encode())
                out.flush()
                record(sent=20 * MB)
            except BrokenPipeError:
                record(hung_up=True)
                return
        elif method == "tools/call":
            send(poked(request_id))
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no " + method}})


# --- HTTP ---------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        return None

    def do_GET(self):
        self.send_response(405)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_DELETE(self):
        self.do_GET()

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        try:
            message = json.loads(body)
        except ValueError:
            message = {}
        if self.path.rstrip("/").endswith("/messages"):
            record(asked="model", path=self.path)
            self.model()
            return
        method, request_id = message.get("method"), message.get("id")
        record(asked=method, headers=dict(self.headers.items()))
        if request_id is None:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        if method == "initialize":
            self.json(initialized(request_id))
        elif method == "tools/list":
            self.json(listed(request_id))
        elif method == "tools/call" and BEHAVIOUR == "mcp-huge-error":
            self.huge(500, "text/plain", 400)
        elif method == "tools/call" and BEHAVIOUR == "mcp-huge-sse":
            self.huge(200, "text/event-stream", 400, head=b"data: ", hang=True)
        elif method == "tools/call":
            self.json(poked(request_id))
        else:
            self.json({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no " + str(method)}})

    def json(self, value):
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def huge(self, status, kind, megabytes, head=b"", hang=False, before=b""):
        """Answer `status` with a body of `megabytes` MB (after `before`, a line starting
        with `head`), recording how much got out before the client hung up."""
        self.send_response(status)
        self.send_header("content-type", kind)
        if not hang:
            self.send_header("content-length", str(len(before) + len(head) + megabytes * MB))
        if status == 529:
            self.send_header("retry-after", "0")  # retried at once: the test waits for nothing
        self.send_header("connection", "close")
        self.end_headers()
        sent = 0
        chunk = b"x" * MB
        try:
            self.wfile.write(before + head)
            for _ in range(megabytes):
                self.wfile.write(chunk)
                sent += len(chunk)
            if hang:
                self.wfile.write(b"\n\n")
                self.wfile.flush()
                record(sent=sent, hung_up=False, waiting=True)
                until = time.monotonic() + HANG
                while time.monotonic() < until:
                    time.sleep(0.5)
                    self.wfile.write(b": still here\n\n")
                    self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            record(sent=sent, hung_up=True)
            return
        record(sent=sent, hung_up=False)

    def model(self):
        start = b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 1}}}\n\n'
        if BEHAVIOUR == "model-huge-error":
            self.huge(529, "application/json", 300)
        elif BEHAVIOUR == "model-huge-line":
            self.huge(200, "text/event-stream", 300, head=b"event: content_block_delta\ndata: ", before=start)
        elif BEHAVIOUR == "model-keepalive":
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            kept = 0
            try:
                self.wfile.write(start)
                until = time.monotonic() + HANG
                while time.monotonic() < until:
                    self.wfile.write(b': keep-alive\n\nevent: ping\ndata: {"type": "ping"}\n\n')
                    self.wfile.flush()
                    kept += 1
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):
                record(keepalives=kept, hung_up=True)
                return
            record(keepalives=kept, hung_up=False)


def serve(port):
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    record(listening=server.server_address[1], pid=os.getpid())  # port 0: the one bound
    server.serve_forever()


if __name__ == "__main__":
    if "--http" in sys.argv:
        serve(int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        stdio()
