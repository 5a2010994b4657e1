"""A bare MCP server, standard library only, one JSON-RPC message per line on stdio.

Tools: `junk` (writes a line that is not JSON-RPC to stdout before its answer), `grow` (adds
the tool `grown` and says `notifications/tools/list_changed`), `grown`, and `ask` (asks the
client a question). It answers `initialize` with `$MCP_RAW_REVISION` when set (to test a
revision bingo does not speak), else with the revision it was offered.

With `MCP_RAW_STATELESS=1` it speaks only the stateless revision 2026-07-28, as its spec
reads: `initialize` is answered -32022 naming the revisions it speaks, `server/discover`
says what it is, every request must carry the revision and the client's capabilities in
`_meta` (else -32602), and `ask` answers `input_required` with an elicitation, then, asked
again with `inputResponses` and the `requestState` it gave, what the person said.
"""

import json
import os
import sys

tools = ["junk", "grow", "ask"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def text(value):
    return {"content": [{"type": "text", "text": value}]}


STATELESS = os.environ.get("MCP_RAW_STATELESS") == "1"
MODERN = "2026-07-28"


def error(request_id, code, text, data=None):
    body = {"code": code, "message": text}
    if data is not None:
        body["data"] = data
    send({"jsonrpc": "2.0", "id": request_id, "error": body})


def ask(request_id, params):
    responses = params.get("inputResponses")
    if not STATELESS:
        answer(request_id, text("ask needs the stateless revision"))
    elif responses is None:
        question = {
            "method": "elicitation/create",
            "params": {
                "message": "Go on?",
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "title": "Go on"}}},
            },
        }
        answer(
            request_id, {"resultType": "input_required", "inputRequests": {"q1": question}, "requestState": "state-1"}
        )
    else:
        said = responses.get("q1", {})
        answer(
            request_id,
            text(f"state {params.get('requestState')}: {said.get('action')} {json.dumps(said.get('content'))}"),
        )


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    params = message.get("params") or {}
    if STATELESS:
        meta = params.get("_meta") or {}
        if method == "initialize":
            error(
                request_id,
                -32022,
                "unsupported protocol version",
                {"supported": [MODERN], "requested": params.get("protocolVersion")},
            )
            continue
        if (
            meta.get("io.modelcontextprotocol/protocolVersion") != MODERN
            or "io.modelcontextprotocol/clientCapabilities" not in meta
        ):
            error(request_id, -32602, "_meta must carry the protocol version and client capabilities")
            continue
        if method == "server/discover":
            answer(
                request_id,
                {
                    "supportedVersions": [MODERN],
                    "capabilities": {"tools": {}},
                    "resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp-raw", "version": "0.2.0"}},
                },
            )
            continue
    if method == "initialize":
        revision = os.environ.get("MCP_RAW_REVISION") or params["protocolVersion"]
        answer(
            request_id,
            {
                "protocolVersion": revision,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "mcp-raw", "version": "0.1.0"},
            },
        )
    elif method == "tools/list":
        answer(request_id, {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in tools]})
    elif method == "tools/call":
        name = params["name"]
        if name == "junk":
            sys.stdout.write("careless debug output\n")
            answer(request_id, text("wrote junk"))
        elif name == "ask":
            ask(request_id, params)
        elif name == "grow":
            if "grown" not in tools:
                tools.append("grown")
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            answer(request_id, text("grew"))
        else:
            answer(request_id, text(f"{name} here"))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
