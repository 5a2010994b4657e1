"""zguard: a guard a person installs in their own layer — a `tool.before` hook `guard` that
denies every `bash` call and lets everything else continue.

Each start appends "zguard" to `<env.dataDir>/starts.txt` and each decision appends the tool
it saw to `<env.dataDir>/seen.txt`, so a test can tell whether it ran and what it was shown.
"""

import json
import os
import sys

STATE = {"data": None}


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def note(name, text):
    with open(os.path.join(STATE["data"], name), "a", encoding="utf-8") as file:
        file.write(text + "\n")


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
            STATE["data"] = params["env"]["dataDir"]
            os.makedirs(STATE["data"], exist_ok=True)
            note("starts.txt", "zguard")
            send(
                {
                    "id": message["id"],
                    "result": {
                        "protocol": 5,
                        "name": "zguard",
                        "version": "0.1.0",
                        "hooks": [{"name": "guard", "site": "tool", "points": ["before"]}],
                    },
                }
            )
        elif method == "hook/decide":
            tool = (params.get("payload") or {}).get("tool")
            note("seen.txt", str(tool))
            if tool == "bash":
                send({"id": message["id"], "result": {"outcome": "deny", "value": "zguard denies bash"}})
            else:
                send({"id": message["id"], "result": {"outcome": "continue"}})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
