"""A one-tool test plugin (`ping` answers "pong") whose handshake misbehaves as its manifest's
arguments say. badproto, wrongname and chatty are this script with different arguments:

  --protocol N   answer the handshake with protocol N (badproto: 4)
  --name NAME    answer the handshake under NAME (wrongname: othername)
  --chatty       print "hello there" on stdout before the handshake (chatty)
"""

import argparse
import json
import sys


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


def handshake(options):
    return {
        "protocol": options.protocol,
        "name": options.name,
        "version": "0.1.0",
        "tools": [{"name": "ping", "description": "Answers pong.", "inputSchema": {"type": "object"}}],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--protocol", type=int, default=5)
    parser.add_argument("--name", required=True)
    parser.add_argument("--chatty", action="store_true")
    options = parser.parse_args()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        if "id" not in message or method is None:
            continue
        if method == "initialize":
            if options.chatty:
                # On purpose: stdout is for messages only, and the host must survive this.
                print("hello there", flush=True)
            send({"id": message["id"], "result": handshake(options)})
        elif method == "tool/call" and message["params"].get("name") == "ping":
            result = {"output": {"parts": [{"type": "text", "text": "pong"}]}}
            send({"id": message["id"], "result": result})
        else:
            send({"id": message["id"], "error": {"code": -32601, "message": "no method " + method}})


if __name__ == "__main__":
    main()
