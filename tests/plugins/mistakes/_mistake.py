"""Mistakes: one bingo plugin program that makes, on purpose, the mistake its first argument
names. Each is one a plugin author made writing a plugin from the docs alone (issue 18); the
rest of the program is a correct plugin, so `bingo --check-plugin` must find that mistake and
nothing else of note.

Each directory beside this file is a real plugin (`plugin.json` + `main.py`, a symlink to this
program), Python 3 standard library only:

  hook-site-dotted    declares a hook with site "tool.before" (the pair, not the site)
  input-schema-snake  declares its tool's schema under `input_schema`, not `inputSchema`
  strict-params       refuses params with a field it does not know (-32602), as a Python
                      method without `**_` does under a JSON-RPC library
  pretty-printed      writes every message pretty-printed over many lines
  string-ids          answers every request with its id as a string ("1" for 1)
  display-strings     answers `count` with a `display` list whose items are strings
  relative-args       its manifest names main.py by a relative path in `args`
  stdout-banner       prints a banner on stdout before it reads anything
"""

import json
import sys

MISTAKE = sys.argv[1] if len(sys.argv) > 1 else "none"


def send(message):
    message = dict(message, jsonrpc="2.0")
    if MISTAKE == "pretty-printed":
        text = json.dumps(message, indent=2)
    else:
        text = json.dumps(message)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def answer(request_id, result):
    if MISTAKE == "string-ids":
        request_id = str(request_id)
    send({"id": request_id, "result": result})


def fail(request_id, code, message):
    send({"id": request_id, "error": {"code": code, "message": message}})


SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def handshake(params):
    name = params["pluginRoot"].rstrip("/").rsplit("/", 1)[-1]
    tool = {"name": "count", "description": "Counts the words of a text.", "inputSchema": SCHEMA}
    if MISTAKE == "input-schema-snake":
        tool = {"name": "count", "description": "Counts the words of a text.", "input_schema": SCHEMA}
    result = {
        "protocol": 5,
        "name": name,
        "version": "0.1.0",
        "tools": [tool],
        "commands": [{"name": "words", "hint": "count words", "args": {"kind": "free", "hint": "<text>"}}],
    }
    if MISTAKE == "hook-site-dotted":
        result["hooks"] = [{"name": "guard", "site": "tool.before", "points": ["before"]}]
    return result


def count(params):
    text = (params.get("input") or {}).get("text", "")
    said = "%d words" % len(str(text).split())
    output = {"parts": [{"type": "text", "text": said}]}
    if MISTAKE == "display-strings":
        output["display"] = {"type": "list", "items": [said, "counted"]}
    else:
        output["display"] = {"type": "list", "items": [{"type": "text", "text": said}]}
    return {"output": output}


def complete(params):
    return {"completions": [{"value": "hello world"}]}


EXPECTED = {
    "tool/call": {"callId", "name", "input", "cwd", "session", "turn"},
    "command/complete": {"name", "partial", "cwd"},
    "command/run": {"name", "args", "cwd", "session"},
    "hook/decide": {"id", "site", "point", "payload"},
}
HANDLERS = {
    "initialize": handshake,
    "tool/call": count,
    "command/run": lambda params: {"outcome": {"kind": "text", "text": "%d words" % len(params["args"].split())}},
    "command/complete": complete,
    "hook/decide": lambda params: {"outcome": "continue"},
}


def handle(message):
    if "method" not in message or "id" not in message:
        return
    method, params = message["method"], message.get("params") or {}
    handler = HANDLERS.get(method)
    if handler is None:
        fail(message["id"], -32601, "no method " + method)
        return
    if MISTAKE == "strict-params" and method in EXPECTED:
        # What a method `def complete(name, partial, cwd)` does under a JSON-RPC library.
        unknown = sorted(set(params) - EXPECTED[method])
        if unknown:
            fail(message["id"], -32602, "Invalid params: unexpected keyword argument " + unknown[0])
            return
    answer(message["id"], handler(params))


def main():
    if MISTAKE == "stdout-banner":
        print("mistake plugin ready!")
        sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message)


if __name__ == "__main__":
    main()
