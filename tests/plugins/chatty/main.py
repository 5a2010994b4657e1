"""chatty: a test plugin that prints "hello there" on stdout before its handshake, then works.

  tool `ping`  answers "pong"
"""

import json
import sys

PROTOCOL = 5
NAME = "chatty"


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
            # On purpose: stdout is for messages only, and the host must survive this.
            print("hello there", flush=True)
            send({"id": message["id"], "result": handshake()})
        elif method == "tool/call" and message["params"].get("name") == "ping":
            result = {"output": {"parts": [{"type": "text", "text": "pong"}]}}
            send({"id": message["id"], "result": result})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
