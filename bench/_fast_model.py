"""fast-model: a provider plugin for bench/editor.py that answers at once.

A prompt holding "stream" is answered with `deltas` text deltas of four characters each
(its `plugins.fast-model.deltas` setting), written as fast as the pipe takes them; any other
prompt with one delta, "ok". Standard library only, as a plugin author would write it.
"""

import json
import sys

DELTAS = [0]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")


def prompt_of(request):
    last = request["messages"][-1]
    return "".join(block.get("text", "") for block in last["content"] if block.get("type") == "text")


def main():
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            DELTAS[0] = int((params.get("config") or {}).get("deltas", 1000))
            result = {
                "protocol": 5,
                "name": "fast-model",
                "version": "0",
                "providers": [{"name": "fast", "models": ["fast-1"]}],
            }
        elif method == "provider/stream":
            pieces = ["word" for _ in range(DELTAS[0])] if "stream" in prompt_of(params["request"]) else ["ok"]
            for piece in pieces:
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "provider/delta",
                        "params": {"streamId": params["streamId"], "delta": {"type": "text", "text": piece}},
                    }
                )
            text = "".join(pieces)
            result = {
                "response": {
                    "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
                    "stopReason": "end",
                }
            }
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no method " + method}})
            sys.stdout.flush()
            continue
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
