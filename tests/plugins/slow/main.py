"""slow: a test plugin that takes its time.

  tool `wait`         sends tool/progress "waiting", then waits for tool/cancel on its callId
                      (at most 30 s) and answers "cancelled after cancel"
  contributor `late`  never answers
  hook `sleepy`       on tool.before, never answers

Its stdin is read on the main thread while each wait runs on a thread of its own, so a
tool/cancel arrives however long a call takes. It logs "got tool/cancel" to stderr.
"""

import json
import sys
import threading

LOCK = threading.Lock()
CANCELS = {}  # callId -> threading.Event
WAIT_LIMIT = 30.0  # a call never cancelled gives up after this long


def send(message):
    with LOCK:
        sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
        sys.stdout.flush()


def text(said):
    return {"output": {"parts": [{"type": "text", "text": said}]}}


def handshake():
    return {
        "protocol": 5,
        "name": "slow",
        "version": "0.1.0",
        "tools": [{"name": "wait", "description": "Waits until it is cancelled.", "inputSchema": {"type": "object"}}],
        "contributors": [{"name": "late", "description": "never answers"}],
        "hooks": [{"name": "sleepy", "site": "tool", "points": ["before"]}],
    }


def wait(request_id, call_id):
    event = CANCELS.setdefault(call_id, threading.Event())
    send({"method": "tool/progress", "params": {"callId": call_id, "tail": "waiting"}})
    if event.wait(WAIT_LIMIT):
        send({"id": request_id, "result": text("cancelled after cancel")})
    else:
        send({"id": request_id, "result": text("waited %d s without a cancel" % WAIT_LIMIT)})
    CANCELS.pop(call_id, None)


def main():
    threads = []
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, params = message.get("method"), message.get("params") or {}
        if method == "tool/cancel":
            print("slow: got tool/cancel", file=sys.stderr, flush=True)
            CANCELS.setdefault(params["callId"], threading.Event()).set()
        elif "id" not in message or method is None:
            continue
        elif method == "initialize":
            send({"id": message["id"], "result": handshake()})
        elif method == "tool/call" and params.get("name") == "wait":
            thread = threading.Thread(target=wait, args=(message["id"], params["callId"]))
            thread.daemon = True
            thread.start()
            threads.append(thread)
        elif method in ("context/contribute", "hook/decide"):
            continue  # never answered: the host's deadline is what ends these
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
