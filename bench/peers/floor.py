#!/usr/bin/env python3
"""The raw floor beside bingo in `bench/peers` (issue 27): the least a Python agent can do.

    python floor.py -p PROMPT        (run in the project, as a host is; the environment names
                                      the model: ANTHROPIC_BASE_URL, FLOOR_BODY)

A bare Python that imports httpx and sends the request bingo sends (its first request body,
recorded by the fake model in bingo's warm-up run: $FLOOR_BODY) to the same server, over one
kept `httpx.Client`, and reads the stream to its end. When the answer is a tool call, it runs
the project's `.mcp.json` servers it names (spawned when the call needs one, as bingo does
for a server it has not started: the first call's row is the floor of a cold start), sends
`tools/call`, appends the step durably to SQLite the way bingo's store does (WAL,
synchronous=NORMAL, one transaction per frame) and sends the next request with the result.
No validation, no gate, no rendering, no notices: what is left is the floor.
"""

from __future__ import annotations

import json
import os
import sqlite3
import ssl
import subprocess
import sys
import types
import urllib.request

# As bingo does (its cli.py): httpx's command-line client, which would import click, rich
# and pygments where they are installed, is never imported. The floor gets every saving
# bingo makes on the same import.
sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))
import httpx  # noqa: E402


def events(response: httpx.Response):
    """(event, data) of an SSE stream."""
    name = None
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            yield name, json.loads(line[5:])


class Server:
    """One stdio MCP server: spawned, initialized, asked."""

    def __init__(self, spec: dict) -> None:
        env = dict(os.environ, **spec.get("env", {}))
        self.proc = subprocess.Popen(
            [spec["command"], *spec.get("args", [])], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.next = 0
        self.ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "floor"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict) -> dict:
        assert self.proc.stdout is not None
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next:
                return answer.get("result") or {}

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(5)


def main() -> None:
    prompt = sys.argv[sys.argv.index("-p") + 1]
    body = json.loads(open(os.environ["FLOOR_BODY"], "rb").read())
    body["messages"] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    specs = {}
    if os.path.exists(".mcp.json"):
        specs = json.loads(open(".mcp.json").read())["mcpServers"]
        # bingo's names for the servers' tools, so the fake model's script finds them
        body["tools"] = [
            {"name": f"plugin__{name}__{name}_echo", "description": "echo", "input_schema": {"type": "object"}}
            for name in specs
        ] + [t for t in body.get("tools", []) if not t["name"].startswith("plugin__")]
    url = os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages"
    headers = {"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""), "anthropic-version": "2023-06-01"}
    servers: dict[str, Server] = {}
    store = sqlite3.connect(".floor.db", isolation_level=None)
    store.execute("PRAGMA journal_mode = WAL")
    store.execute("PRAGMA synchronous = NORMAL")
    store.execute("CREATE TABLE IF NOT EXISTS frames (seq INTEGER PRIMARY KEY, data BLOB)")
    # As bingo does (ADR-0043): a plain-HTTP endpoint with no proxy reads no CA bundle; the
    # floor gets that saving too, so the ratio holds only bingo's own costs.
    verify: object = True
    if url[:7].lower() == "http://" and not urllib.request.getproxies():
        verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with httpx.Client(verify=verify) as client:
        while True:
            blocks: list[dict] = []
            with client.stream("POST", url, content=json.dumps(body).encode(), headers=headers) as response:
                for name, data in events(response):
                    if name == "content_block_start":
                        blocks.append(dict(data["content_block"]))
                    elif name == "content_block_delta" and data["delta"]["type"] == "input_json_delta":
                        blocks[-1]["input"] = json.loads(data["delta"]["partial_json"])
                    elif name == "content_block_delta":
                        blocks[-1]["text"] = blocks[-1].get("text", "") + data["delta"]["text"]
            uses = [b for b in blocks if b["type"] == "tool_use"]
            if not uses:
                print("".join(b.get("text", "") for b in blocks))
                break
            results = []
            for use in uses:
                server = use["name"].split("__")[1]
                if server not in servers:
                    servers[server] = Server(specs[server])
                tool = use["name"].split("__")[2]
                answer = servers[server].ask("tools/call", {"name": tool, "arguments": use["input"]})
                results.append({"type": "tool_result", "tool_use_id": use["id"], "content": answer.get("content", [])})
            body["messages"] += [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]
            store.execute("BEGIN IMMEDIATE")
            store.execute("INSERT INTO frames (data) VALUES (?)", (json.dumps(body["messages"][-2:]).encode(),))
            store.execute("COMMIT")
    for server in servers.values():
        server.close()


if __name__ == "__main__":
    main()
