"""wrongname: a test plugin that answers the handshake under another name than its manifest's.

  tool `ping`  answers "pong"
"""

import json
import sys

PROTOCOL = 5
NAME = "othername"


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def handshake():
    return {
        "protocol": PROTOCOL,
        "name": NAME,
        "version": "0.1.0",
        "tools": [{"name": "ping", "description": "Answers pong.",
                   "inputSchema": {"type": "object"}}],
    }


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            send({"id": message["id"], "result": handshake()})
        elif method == "tool/call" and message["params"].get("name") == "ping":
            result = {"output": {"parts": [{"type": "text", "text": "pong"}]}}
            send({"id": message["id"], "result": result})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
