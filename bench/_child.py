"""The bench's plugin child: a minimal bingo plugin with one `count` tool, stdlib only.

The same script answers the raw ping-pong client (the limit) and bingo's bridge, so the
two differ only in the host's side. Usage: `python _child.py NAME CPU [turn]` (CPU `-`
leaves the placement alone, otherwise the process pins itself there before reading
anything). With `turn` it also declares two context contributors and a `tool.before` hook
(the model-turn rows of bench/turn.py): each contributor gives one short piece, the hook
continues. It does not implement commands, completion or progress.
"""

import json
import os
import sys


def _pin(cpu: str) -> None:
    if cpu != "-":
        os.sched_setaffinity(0, {int(cpu)})


def _answer(message: dict) -> dict:
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize" and TURN:
        return {
            "protocol": 5,
            "name": NAME,
            "version": "1",
            "contributors": [{"name": "a"}, {"name": "b"}],
            "hooks": [{"name": "look", "site": "tool", "points": ["before"]}],
        }
    if method == "context/contribute":
        return {"pieces": [{"text": "%s/%s: a short piece of context" % (NAME, params.get("id")), "title": NAME}]}
    if method == "hook/decide":
        return {"outcome": "continue"}
    if method == "initialize":
        return {
            "protocol": 5,
            "name": NAME,
            "version": "1",
            "tools": [
                {
                    "name": "count",
                    "description": "Counts the words in a text.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"text": {"type": "string"}},
                        "required": ["text"],
                    },
                }
            ],
        }
    if method == "tool/call":
        words = len(str((params.get("input") or {}).get("text", "")).split())
        return {"output": {"parts": [{"type": "text", "text": "%d words" % words}]}}
    return {}


def main() -> None:
    read, out = sys.stdin.buffer.readline, sys.stdout.buffer
    while True:
        line = read()
        if not line:
            return
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification (tool/cancel) or an answer: nothing to say
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": _answer(message)}
        out.write(json.dumps(reply).encode() + b"\n")
        out.flush()


NAME = sys.argv[1] if len(sys.argv) > 1 else "bench"
TURN = len(sys.argv) > 3 and sys.argv[3] == "turn"
_pin(sys.argv[2] if len(sys.argv) > 2 else "-")
main()
