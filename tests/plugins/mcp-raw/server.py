"""A bare MCP server, standard library only, one JSON-RPC message per line on stdio.

Tools: `junk` (writes a line that is not JSON-RPC to stdout before its answer), `grow` (adds
the tool `grown` and says `notifications/tools/list_changed`), `grown`. It answers
`initialize` with `$MCP_RAW_REVISION` when set (to test a revision bingo does not speak),
else with the revision it was offered.
"""

import json
import os
import sys

tools = ["junk", "grow"]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def text(value):
    return {"content": [{"type": "text", "text": value}]}


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        revision = os.environ.get("MCP_RAW_REVISION") or params["protocolVersion"]
        answer(request_id, {"protocolVersion": revision, "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "mcp-raw", "version": "0.1.0"}})
    elif method == "tools/list":
        answer(request_id, {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in tools]})
    elif method == "tools/call":
        name = params["name"]
        if name == "junk":
            sys.stdout.write("careless debug output\n")
            answer(request_id, text("wrote junk"))
        elif name == "grow":
            if "grown" not in tools:
                tools.append("grown")
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            answer(request_id, text("grew"))
        else:
            answer(request_id, text(f"{name} here"))
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})
