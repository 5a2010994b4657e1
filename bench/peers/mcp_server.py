#!/usr/bin/env python3
"""A tiny stdio MCP server, stdlib only, the same for every host.

    python3 mcp_server.py NAME [MODE]

One tool, `<NAME>_echo(text)`, answering "echo:<text>". Newline-delimited JSON-RPC 2.0 on
stdin/stdout; answers `initialize` with the revision the client asked for when it knows it
(2024-11-05 .. 2025-11-25), else 2025-06-18.

MODE (argv[2], else the file $BENCH_MCP_STATE_DIR/mode, else $BENCH_MCP_MODE), for the
reliability rows:
  ok          normal
  crash       the first tools/call of the whole run (a marker file in $BENCH_MCP_STATE_DIR
              remembers it) exits the process with status 3 before answering; later ones,
              after a respawn, answer normally
  junk        writes a non-JSON line on stdout before every tools/call answer
  hang        never answers tools/call (still answers everything else)
  diestart    prints one line on stderr and exits 1 before reading anything
  big         answers tools/call with a 20 MB text (bigN: N MB; BENCH_MCP_BIG_MB overrides)
  slow        sleeps 60 s before answering tools/call (for the SIGKILL-the-host row)

Each event is one JSON line appended to $BENCH_MCP_LOG (if set): start, recv (a tools/call
arrived), sent (its answer was written), exit; `t` is CLOCK_MONOTONIC seconds, comparable
with fake_model.py's log, plus pid/ppid, so a harness can count spawns and find orphans.
"""

import json
import os
import sys
import time

NAME = sys.argv[1] if len(sys.argv) > 1 else "bench0"


def _mode():
    """argv[2]; else the file $BENCH_MCP_STATE_DIR/mode (so a harness can break a server
    without changing the host's configuration, which keeps caches and trust valid); else
    $BENCH_MCP_MODE; else ok."""
    if len(sys.argv) > 2:
        return sys.argv[2]
    try:
        with open(os.path.join(os.environ["BENCH_MCP_STATE_DIR"], "mode")) as f:
            return f.read().strip() or "ok"
    except (KeyError, OSError):
        return os.environ.get("BENCH_MCP_MODE", "ok")


MODE = _mode()
LOG = os.environ.get("BENCH_MCP_LOG")
TOOL = f"{NAME}_echo"
KNOWN = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


def log(event, **kw):
    if not LOG:
        return
    rec = {"t": time.monotonic(), "event": event, "name": NAME, "mode": MODE, "pid": os.getpid(), "ppid": os.getppid()}
    rec.update(kw)
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(rec) + "\n").encode())
    finally:
        os.close(fd)


out = sys.stdout.buffer


def send(obj):
    out.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
    out.flush()


def main():
    log("start", argv=sys.argv[1:])
    if MODE == "diestart":
        sys.stderr.write(f"{NAME}: fatal: cannot open the bench database (deliberate start failure)\n")
        sys.stderr.flush()
        log("exit", why="diestart")
        sys.exit(1)
    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method is None:  # a response to something we never asked; ignore
            continue
        if mid is None:  # notification
            continue
        if method == "initialize":
            asked = (msg.get("params") or {}).get("protocolVersion")
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {
                        "protocolVersion": asked if asked in KNOWN else "2025-06-18",
                        "capabilities": {"tools": {"listChanged": False}},
                        "serverInfo": {"name": NAME, "version": "1.0.0"},
                    },
                }
            )
        elif method == "tools/list":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {
                        "tools": [
                            {
                                "name": TOOL,
                                "description": f"Echo the given text back (bench server {NAME}).",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {"text": {"type": "string", "description": "text to echo"}},
                                    "required": ["text"],
                                },
                            }
                        ]
                    },
                }
            )
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif method == "tools/call":
            t0 = time.monotonic()
            args = (msg.get("params") or {}).get("arguments") or {}
            log("recv", id=mid, text=args.get("text"))
            if MODE == "crash":
                marker = os.path.join(os.environ.get("BENCH_MCP_STATE_DIR", "."), f"{NAME}.crashed")
                if not os.path.exists(marker):
                    open(marker, "w").close()
                    sys.stderr.write(f"{NAME}: segfault-like crash in the middle of a call (deliberate)\n")
                    sys.stderr.flush()
                    log("exit", why="crash")
                    os._exit(3)
            if MODE == "hang":
                log("hang", id=mid)
                continue
            if MODE == "slow":
                time.sleep(60)
            if MODE == "junk":
                out.write(b"this is not JSON: debug print from a careless server\n")
                out.flush()
            if MODE.startswith("big"):  # big = 20 MB, big15 = 15 MB, ...
                mb = float(MODE[3:] or os.environ.get("BENCH_MCP_BIG_MB", "20"))
                text = ("0123456789abcdef" * 64 + "\n") * int(mb * 1024 * 1024 / 1025)
            else:
                text = f"echo:{args.get('text', '')}"
            send(
                {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}], "isError": False}}
            )
            log("sent", id=mid, busy=time.monotonic() - t0, size=len(text))
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}})
    log("exit", why="eof")


if __name__ == "__main__":
    main()
