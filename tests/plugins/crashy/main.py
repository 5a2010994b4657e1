"""crashy: a test plugin that dies on request.

  tool `boom`  writes "about to die" to stderr and exits with status 3, mid-call
  tool `ok`    answers "still here"

Each start appends a line to `<env.dataDir>/starts.txt`, so a test can count respawns.
"""

import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def handshake(params):
    data_dir = params["env"]["dataDir"]
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "starts.txt"), "a", encoding="utf-8") as file:
        file.write("%d\n" % os.getpid())
    schema = {"type": "object"}
    return {
        "protocol": 5,
        "name": "crashy",
        "version": "0.1.0",
        "tools": [
            {"name": "boom", "description": "Dies mid-call.", "inputSchema": schema},
            {"name": "ok", "description": "Answers that it is still here.", "inputSchema": schema},
        ],
    }


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            send({"id": message["id"], "result": handshake(params)})
        elif method == "tool/call" and params.get("name") == "boom":
            print("about to die", file=sys.stderr, flush=True)
            sys.exit(3)
        elif method == "tool/call" and params.get("name") == "ok":
            result = {"output": {"parts": [{"type": "text", "text": "still here"}]}}
            send({"id": message["id"], "result": result})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
