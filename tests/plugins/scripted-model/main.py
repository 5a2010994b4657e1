"""scripted-model: a model provider for tests, reading its replies from a script.

Settings `plugins.scripted-model = {"replies": [[step, ...], ...]}` reach it as
`initialize.config`. Each `provider/stream` takes the next reply; a step is
`{"text": "..."}` (streamed in a few text deltas), `{"tool": {"id", "name", "input"}}`
(one toolUse delta), `{"hang": true}` (stream nothing more until `provider/cancel`, then
answer stopReason "cancelled"), `{"sleep": seconds}` (pause, then go on), `{"until": path}` (pause until that file exists, at
most HANG_LIMIT, then go on) or `{"error": "..."}` (answer a JSON-RPC error instead).
Past the script it answers "(script finished)". Every request it receives is appended to
`<env.dataDir>/requests.jsonl`, so tests can read what the model was told. With
`"concurrent": true` in its settings, each `provider/stream` is answered on a thread of its
own as it arrives (its reply taken in arrival order), so requests made at once (subagents')
are in flight at once, and `{"until": path}` steps can show it.
"""

import json
import os
import queue
import sys
import threading

LOCK = threading.Lock()
CANCELLED = {}  # streamId -> threading.Event, set by provider/cancel
STATE = {"replies": [], "log": None}
HANG_LIMIT = 30.0  # a hanging reply gives up after this long without provider/cancel


SEND_LOCK = threading.Lock()


def send(message):
    with SEND_LOCK:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})


def chunks(text, parts=3):
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def next_reply():
    with LOCK:
        return STATE["replies"].pop(0) if STATE["replies"] else [{"text": "(script finished)"}]


def stream(params, reply=None):
    stream_id = params["streamId"]
    cancelled = CANCELLED.setdefault(stream_id, threading.Event())
    if reply is None:
        reply = next_reply()
    content, stop = [], "end"
    for step in reply:
        if cancelled.is_set():
            stop = "cancelled"
            break
        if "error" in step:
            return None, {"code": -32603, "message": step["error"]}
        if "hang" in step:
            stop = "cancelled" if cancelled.wait(HANG_LIMIT) else "end"
            break
        if "sleep" in step:  # think for a while (cancellable), then go on with the reply
            if cancelled.wait(float(step["sleep"])):
                stop = "cancelled"
                break
        if "until" in step:  # wait for the test to open a gate (cancellable, bounded)
            waited = 0.0
            while not os.path.exists(step["until"]) and waited < HANG_LIMIT:
                if cancelled.wait(0.02):
                    break
                waited += 0.02
            if cancelled.is_set():
                stop = "cancelled"
                break
        if "text" in step:
            for piece in chunks(step["text"]):
                notify("provider/delta", {"streamId": stream_id, "delta": {"type": "text", "text": piece}})
            content.append({"type": "text", "text": step["text"]})
        if "tool" in step:
            tool = step["tool"]
            use = {"id": tool["id"], "name": tool["name"], "input": tool.get("input", {})}
            notify("provider/delta", {"streamId": stream_id, "delta": {"type": "toolUse", **use}})
            content.append({"type": "toolUse", **use})
            stop = "toolUse"
    CANCELLED.pop(stream_id, None)
    message = {"role": "assistant", "content": content}
    return {"response": {"message": message, "stopReason": stop}}, None


def initialize(params):
    STATE["replies"] = list((params.get("config") or {}).get("replies", []))
    STATE["concurrent"] = bool((params.get("config") or {}).get("concurrent"))
    data_dir = params["env"]["dataDir"]
    os.makedirs(data_dir, exist_ok=True)
    STATE["log"] = os.path.join(data_dir, "requests.jsonl")
    return {
        "protocol": 5,
        "name": "scripted-model",
        "version": "0.1.0",
        "providers": [{"name": "scripted", "description": "replies from a script", "models": ["scripted-1"]}],
    }, None


def work(requests):
    """Answers requests one at a time, in order, on its own thread."""
    while True:
        message = requests.get()
        if message is None:
            return
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            result, error = initialize(params)
            with open(STATE["log"], "a", encoding="utf-8") as file:
                file.write(json.dumps(message) + "\n")
        else:
            # Logged as it arrives, before it is answered: a test can wait for the model to
            # have a request it is still answering (a hanging or sleeping reply).
            if STATE["log"]:  # set by initialize
                with LOG_LOCK, open(STATE["log"], "a", encoding="utf-8") as file:
                    file.write(json.dumps(message) + "\n")
            if method == "provider/stream":
                result, error = stream(params)
            else:
                result, error = None, {"code": -32601, "message": "no method " + method}
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        reply.update({"error": error} if error else {"result": result})
        send(reply)


def answer_at_once(message):
    """A provider/stream answered on its own thread (`concurrent`), logged as it arrives."""
    with LOG_LOCK:
        with open(STATE["log"], "a", encoding="utf-8") as file:
            file.write(json.dumps(message) + "\n")
    reply = next_reply()

    def run():
        result, error = stream(message.get("params") or {}, reply)
        answer = {"jsonrpc": "2.0", "id": message["id"]}
        answer.update({"error": error} if error else {"result": result})
        send(answer)

    threading.Thread(target=run, daemon=True).start()


LOG_LOCK = threading.Lock()


def main():
    requests = queue.Queue()
    worker = threading.Thread(target=work, args=(requests,), daemon=True)
    worker.start()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            print("scripted-model: not JSON: %r" % line, file=sys.stderr)
            continue
        if message.get("method") == "provider/cancel":
            # Read here, not by the worker, so that a hanging reply can be cancelled.
            stream_id = message["params"]["streamId"]
            CANCELLED.setdefault(stream_id, threading.Event()).set()
        elif message.get("method") == "provider/stream" and STATE.get("concurrent") and STATE["log"]:
            answer_at_once(message)
        elif "method" in message and "id" in message:
            requests.put(message)
    requests.put(None)
    worker.join(timeout=5)


if __name__ == "__main__":
    main()
