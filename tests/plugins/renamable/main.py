"""renamable: a test plugin that takes its name from its own manifest, so a test can install
it under any name (a 60-character one, say) by copying it and rewriting `name`.

  tool `fetch.page`  answers "fetched <input.url> by <name>" (a tool name with a dot)
  command `hello`    answers "hello from <name>"

Each start appends its name to `<env.dataDir>/starts.txt`, so a test can tell whether bingo
started it at all (project plugins start only in a trusted project).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def own_name():
    with open(os.path.join(HERE, "plugin.json"), encoding="utf-8") as file:
        return json.load(file)["name"]


def handshake(name, params):
    data_dir = params["env"]["dataDir"]
    os.makedirs(data_dir, exist_ok=True)
    with open(os.path.join(data_dir, "starts.txt"), "a", encoding="utf-8") as file:
        file.write(name + "\n")
    return {
        "protocol": 5,
        "name": name,
        "version": "0.1.0",
        "tools": [
            {
                "name": "fetch.page",
                "description": "Pretends to fetch a page.",
                "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            }
        ],
        "commands": [
            {"name": "hello", "hint": "say hello", "args": {"kind": "none"}, "instant": True, "family": "plugin"}
        ],
    }


def main():
    name = own_name()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            send({"id": message["id"], "result": handshake(name, params)})
        elif method == "tool/call" and params.get("name") == "fetch.page":
            said = "fetched %s by %s" % (params["input"].get("url"), name)
            send({"id": message["id"], "result": {"output": {"parts": [{"type": "text", "text": said}]}}})
        elif method == "command/run" and params.get("name") == "hello":
            send({"id": message["id"], "result": {"outcome": {"kind": "text", "text": "hello from " + name}}})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
