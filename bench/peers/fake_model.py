#!/usr/bin/env python3
"""One scripted fake model server for every host, stdlib only, bound to 127.0.0.1.

It speaks, streaming or not:
  * Anthropic Messages        POST .../v1/messages            (+ /v1/messages/count_tokens)
  * OpenAI Chat Completions   POST .../chat/completions
  * OpenAI Responses          POST .../responses
  * Gemini generateContent    POST .../models/<m>:streamGenerateContent|generateContent|countTokens
  * model lists               GET  .../models

The script. The newest user text that contains a marker

    BENCHCALL tool=<name> server=<substring> n=<count> [wait=<seconds>]

makes the model call, one call per response, the first tool in the request's tool list
whose name ends with <name> (and contains <substring>), with arguments {"text": "call-<i>"},
until the conversation holds <count> tool results after that user message; then it answers
"done <count>". Anything else (no marker, no such tool, a request without tools) is answered
"ok". The state is read from the request itself, so the server keeps none between requests.

Every request is logged: one JSON line in $FAKE_LOG (or --log) with the monotonic
receive/finish times (CLOCK_MONOTONIC, comparable with the MCP server's log), the tag, the
API, the body's size, the system prompt's and the tools' sizes, tool count and the action
taken; with --bodies DIR the first request body of each tag is written there in full.

Tags: a path prefix /t/<tag>/ on the base URL tags a request and is stripped; requests
without one get the current tag, set with GET /_ctl/tag?tag=<tag> (the harness runs one host
at a time). GET /_ctl/log?tag=<tag> returns that tag's log lines as a JSON array.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

NS_SEP = "::"  # joins a Responses namespace and a tool name in the flattened tool list
MARKER = re.compile(r"BENCHCALL\s+tool=(\S+)\s+server=(\S+)\s+n=(\d+)(?:\s+wait=([\d.]+))?")

LOCK = threading.Lock()
STATE = {"tag": "none", "log": [], "bodies_seen": set()}
ARGS: argparse.Namespace


# --------------------------------------------------------------------------- helpers
def _texts(value) -> list[str]:
    """Every string found under text-ish keys of a JSON value (content blocks, parts)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            out.extend(_texts(v))
    elif isinstance(value, dict):
        t = value.get("type")
        if t in ("tool_result", "function_call_output", "tool_use", "function_call"):
            return out
        for k in ("text", "content", "input_text", "parts"):
            if k in value:
                out.extend(_texts(value[k]))
    return out


def _flat(v) -> str:
    """A tool result's content as one string (text blocks joined, anything else as JSON)."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(x, dict) for x in v):
        return "\n".join(x["text"] if isinstance(x.get("text"), str) else json.dumps(x) for x in v)
    return json.dumps(v)


def _jlen(v) -> int:
    return len(json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode()) if v is not None else 0


# --------------------------------------------------------------------------- per-API views
# Each view turns a request body into: a list of conversation events in order, each
# ("user", text) or ("result", None), the tool names offered, the system prompt's size.


def view_anthropic(body):
    events = []
    for m in body.get("messages", []):
        c = m.get("content")
        if m.get("role") == "user":
            if isinstance(c, str):
                events.append(("user", c))
            else:
                for b in c or []:
                    if b.get("type") == "tool_result":
                        events.append(("result", ("ERROR " if b.get("is_error") else "") + _flat(b.get("content"))))
                    elif b.get("type") == "text":
                        events.append(("user", b.get("text", "")))
    tools = [t.get("name", "") for t in body.get("tools", []) or []]
    return events, tools, _jlen(body.get("system")), _jlen(body.get("tools"))


def view_chat(body):
    events, sys_size = [], 0
    for m in body.get("messages", []):
        r = m.get("role")
        if r in ("system", "developer"):
            sys_size += _jlen(m.get("content"))
        elif r == "user":
            events.append(("user", "\n".join(_texts(m.get("content")))))
        elif r == "tool":
            events.append(("result", _flat(m.get("content"))))
    tools = [(t.get("function") or {}).get("name", t.get("name", "")) for t in body.get("tools", []) or []]
    return events, tools, sys_size, _jlen(body.get("tools"))


def view_responses(body):
    events, sys_size = [], _jlen(body.get("instructions"))
    inp = body.get("input")
    if isinstance(inp, str):
        inp = [{"role": "user", "content": inp}]
    for it in inp or []:
        t = it.get("type", "message")
        if t == "message":
            r = it.get("role")
            if r in ("system", "developer"):
                sys_size += _jlen(it.get("content"))
            elif r == "user":
                events.append(("user", "\n".join(_texts(it.get("content")))))
        elif t in ("function_call_output", "custom_tool_call_output", "mcp_call_output", "tool_search_output"):
            events.append(("result", _flat(it.get("output"))))
    tools = []
    for t in body.get("tools", []) or []:
        if t.get("type") == "namespace":  # Codex groups an MCP server's tools in a namespace
            for inner in t.get("tools", []) or []:
                tools.append(t.get("name", "") + NS_SEP + inner.get("name", ""))
        else:
            tools.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type", ""))
    return events, tools, sys_size, _jlen(body.get("tools"))


def view_gemini(body):
    events = []
    for c in body.get("contents", []):
        if c.get("role", "user") == "user":
            for p in c.get("parts", []):
                if "functionResponse" in p:
                    events.append(("result", _flat(p["functionResponse"].get("response"))))
                elif "text" in p:
                    events.append(("user", p["text"]))
    tools = []
    for t in body.get("tools", []) or []:
        for f in t.get("functionDeclarations", []) or []:
            tools.append(f.get("name", ""))
    sysi = body.get("systemInstruction") or (body.get("config") or {}).get("systemInstruction")
    return events, tools, _jlen(sysi), _jlen(body.get("tools"))


def _json_schema(body):
    """The JSON schema a request asks its answer to follow (Gemini responseJsonSchema,
    OpenAI response_format / text.format), or None."""
    gc = body.get("generationConfig") or {}
    if gc.get("responseMimeType") == "application/json":
        return gc.get("responseJsonSchema") or gc.get("responseSchema") or {}
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("schema") or {}
    tf = (body.get("text") or {}).get("format") or {}
    if tf.get("type") == "json_schema":
        return tf.get("schema") or {}
    return None


def _fill(schema, name=""):
    """A minimal value that follows `schema` (types upper- or lower-case)."""
    t = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if t == "object":
        props = schema.get("properties") or {}
        return {k: _fill(v, k) for k, v in props.items()}
    if t == "array":
        return []
    if t in ("integer", "number"):
        return 0 if "confidence" in name else 10  # gemini's loop check: "not stuck"
    if t == "boolean":
        return False
    if name == "next_speaker":
        return "user"
    return "ok"


def decide(events, tools):
    """('tool', name, args, i, n) or ('text', answer)."""
    idx = None
    for i in range(len(events) - 1, -1, -1):
        kind, text = events[i]
        if kind == "user" and text and MARKER.search(text):
            idx = i
            break
    if idx is None:
        return ("text", "ok")
    m = MARKER.search(events[idx][1])
    want, server, n = m.group(1), m.group(2), int(m.group(3))
    done = sum(1 for k, _ in events[idx + 1 :] if k == "result")
    if done >= n:
        return ("text", f"done {n}")
    for name in tools:
        if name.endswith(want) and server in name:
            return ("tool", name, {"text": f"call-{done + 1}"}, done + 1, n, float(m.group(4) or 0))
    return ("text", "NO_MATCHING_TOOL among " + ",".join(tools[:80]))


# --------------------------------------------------------------------------- responders
def _id(prefix):
    return prefix + uuid.uuid4().hex[:24]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-model/1"

    def log_message(self, fmt, *a):  # quiet
        pass

    def setup(self):
        super().setup()
        # Each event is its own write: without this, Nagle's algorithm holds a small write
        # behind the client's delayed ACK (40 ms) on a kept connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # ---- plumbing
    def _send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        if ARGS.close:
            self.send_header("connection", "close")
            self.close_connection = True
        else:
            # As the real APIs do: a chunked stream on a connection kept for the next request.
            self.send_header("transfer-encoding", "chunked")
            self._chunked = True
        self.end_headers()

    def _sse(self, event, data):
        chunk = ""
        if event:
            chunk += f"event: {event}\n"
        chunk += "data: " + (data if isinstance(data, str) else json.dumps(data)) + "\n\n"
        raw = chunk.encode()
        if getattr(self, "_chunked", False):
            raw = f"{len(raw):x}\r\n".encode() + raw + b"\r\n"
        self.wfile.write(raw)

    def _sse_end(self):
        if getattr(self, "_chunked", False):
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self._chunked = False

    def _route(self):
        parts = urlsplit(self.path)
        path, tag = parts.path, None
        m = re.match(r"^/t/([^/]+)(/.*)$", path)
        if m:
            tag, path = m.group(1), m.group(2)
        return path, parse_qs(parts.query), tag

    def _record(self, rec):
        with LOCK:
            STATE["log"].append(rec)
            if ARGS.log:
                with open(ARGS.log, "a") as f:
                    f.write(json.dumps(rec) + "\n")

    # ---- GET
    def do_GET(self):
        path, q, tag = self._route()
        if path == "/_ctl/tag":
            with LOCK:
                STATE["tag"] = q.get("tag", ["none"])[0]
            return self._send_json({"tag": STATE["tag"]})
        if path == "/_ctl/log":
            want = q.get("tag", [None])[0]
            with LOCK:
                rows = [r for r in STATE["log"] if want is None or r["tag"] == want]
            return self._send_json(rows)
        if path == "/_ctl/clear":
            with LOCK:
                STATE["log"].clear()
            return self._send_json({"cleared": True})
        t0 = time.monotonic()
        self._record(
            {"tag": tag or STATE["tag"], "t_recv": t0, "t_done": t0, "method": "GET", "path": path, "api": "get"}
        )
        if path.endswith("/models"):
            return self._send_json(
                {
                    "object": "list",
                    "data": [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}],
                    "models": [{"slug": "fake-model", "name": "models/fake-model"}],
                }
            )
        return self._send_json({"error": {"message": f"no GET {path}"}}, 404)

    # ---- POST
    def do_POST(self):
        t_recv = time.monotonic()
        path, q, tag = self._route()
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding") == "zstd" or self.headers.get("content-encoding") == "gzip":
            import gzip

            try:
                raw = gzip.decompress(raw)
            except Exception:
                pass
        tag = tag or STATE["tag"]
        try:
            body = json.loads(raw or b"{}")
        except Exception:
            body = {}
        api, view = None, None
        if path.endswith("/messages/count_tokens"):
            api = "anthropic-count"
        elif path.endswith("/messages"):
            api, view = "anthropic", view_anthropic
        elif path.endswith("/chat/completions"):
            api, view = "chat", view_chat
        elif path.endswith("/responses"):
            api, view = "responses", view_responses
        elif ":streamGenerateContent" in path:
            api, view = "gemini-stream", view_gemini
        elif ":generateContent" in path:
            api, view = "gemini", view_gemini
        elif ":countTokens" in path:
            api = "gemini-count"
        rec = {
            "tag": tag,
            "t_recv": t_recv,
            "method": "POST",
            "path": path,
            "api": api,
            "bytes": len(raw),
            "model": body.get("model") or path.rsplit("/", 1)[-1].split(":")[0],
        }
        if ARGS.bodies and tag not in STATE["bodies_seen"] and api and view:
            with LOCK:
                STATE["bodies_seen"].add(tag)
            os.makedirs(ARGS.bodies, exist_ok=True)
            with open(os.path.join(ARGS.bodies, f"{tag}.json"), "wb") as f:
                f.write(raw)
        if view is None:
            if api == "anthropic-count":
                self._send_json({"input_tokens": max(1, len(raw) // 4)})
            elif api == "gemini-count":
                self._send_json({"totalTokens": max(1, len(raw) // 4)})
            else:
                self._send_json({"error": {"message": f"fake model: no POST {path}"}}, 404)
            rec["t_done"] = time.monotonic()
            rec["action"] = "none"
            return self._record(rec)
        events, tools, sys_size, tools_size = view(body)
        action = decide(events, tools)
        # a request with no tools (title, summary, classifier) gets plain "ok"
        if action[0] == "tool" and not tools:
            action = ("text", "ok")
        schema = _json_schema(body)
        if schema is not None and action[0] == "text":
            action = ("text", json.dumps(_fill(schema)))
        stream = bool(body.get("stream")) or api == "gemini-stream"
        results = [t for k, t in events if k == "result"]
        if results:
            rec["results"] = len(results)
            rec["last_result"] = results[-1][:600]
            rec["last_result_tail"] = results[-1][-400:]
            rec["last_result_len"] = len(results[-1])
        rec.update(
            {
                "n_tools": len(tools),
                "tools_bytes": tools_size,
                "system_bytes": sys_size,
                "n_events": len(events),
                "stream": stream,
                "action": action[0],
                "tool": action[1] if action[0] == "tool" else None,
                "call_index": action[3] if action[0] == "tool" else None,
            }
        )
        if action[0] == "tool" and action[3] > 1 and action[5]:
            time.sleep(action[5])  # "wait=": the model thinks before every call after the first
        in_tok = max(1, len(raw) // 4)
        try:
            getattr(self, "_reply_" + api.replace("-", "_"))(body, action, stream, in_tok)
            self._sse_end()
        except (BrokenPipeError, ConnectionResetError):
            rec["broken"] = True
        rec["t_done"] = time.monotonic()
        self._record(rec)

    # ---- Anthropic
    def _reply_anthropic(self, body, action, stream, in_tok):
        model = body.get("model", "fake-model")
        mid = _id("msg_")
        usage = {
            "input_tokens": in_tok,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if action[0] == "tool":
            block = {"type": "tool_use", "id": _id("toolu_"), "name": action[1], "input": action[2]}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": action[1]}
            stop = "end_turn"
        if not stream:
            return self._send_json(
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [block],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
        self._sse_start()
        self._sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": dict(usage, output_tokens=1),
                },
            },
        )
        if block["type"] == "text":
            self._sse(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            )
            self._sse("ping", {"type": "ping"})
            self._sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": block["text"]}},
            )
        else:
            self._sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
                },
            )
            self._sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                },
            )
        self._sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
        self._sse("message_stop", {"type": "message_stop"})
        self.wfile.flush()

    # ---- OpenAI Chat Completions
    def _reply_chat(self, body, action, stream, in_tok):
        model = body.get("model", "fake-model")
        cid, created = _id("chatcmpl-"), int(time.time())
        usage = {"prompt_tokens": in_tok, "completion_tokens": 5, "total_tokens": in_tok + 5}
        if action[0] == "tool":
            call = {
                "id": _id("call_"),
                "type": "function",
                "function": {"name": action[1], "arguments": json.dumps(action[2])},
            }
            msg, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            msg, finish = {"role": "assistant", "content": action[1]}, "stop"
        if not stream:
            return self._send_json(
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                    "usage": usage,
                }
            )
        base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}

        def chunk(delta, fin=None, **extra):
            self._sse(None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": fin}], **extra))

        self._sse_start()
        chunk({"role": "assistant", "content": ""})
        if action[0] == "tool":
            c = msg["tool_calls"][0]
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": c["function"]["arguments"]}}]})
        else:
            chunk({"content": action[1]})
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            self._sse(None, dict(base, choices=[], usage=usage))
        self._sse(None, "[DONE]")
        self.wfile.flush()

    # ---- OpenAI Responses
    def _reply_responses(self, body, action, stream, in_tok):
        model = body.get("model", "fake-model")
        rid, created = _id("resp_"), int(time.time())
        usage = {
            "input_tokens": in_tok,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": in_tok + 5,
        }
        if action[0] == "tool":
            item = {
                "id": _id("fc_"),
                "type": "function_call",
                "status": "completed",
                "call_id": _id("call_"),
                "name": action[1],
                "arguments": json.dumps(action[2]),
            }
            if NS_SEP in action[1]:
                item["namespace"], item["name"] = action[1].split(NS_SEP, 1)
        else:
            item = {
                "id": _id("msg_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": action[1], "annotations": []}],
            }
        resp = {
            "id": rid,
            "object": "response",
            "created_at": created,
            "status": "completed",
            "model": model,
            "output": [item],
            "usage": usage,
            "error": None,
            "incomplete_details": None,
        }
        if not stream:
            return self._send_json(resp)
        self._sse_start()
        seq = iter(range(10_000))
        progress = dict(resp, status="in_progress", output=[], usage=None)
        self._sse("response.created", {"type": "response.created", "sequence_number": next(seq), "response": progress})
        self._sse(
            "response.in_progress", {"type": "response.in_progress", "sequence_number": next(seq), "response": progress}
        )
        if item["type"] == "message":
            added = dict(item, status="in_progress", content=[])
            self._sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": 0, "item": added},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            self._sse(
                "response.content_part.added",
                {
                    "type": "response.content_part.added",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "part": part,
                },
            )
            self._sse(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": action[1],
                },
            )
            self._sse(
                "response.output_text.done",
                {
                    "type": "response.output_text.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "text": action[1],
                },
            )
            self._sse(
                "response.content_part.done",
                {
                    "type": "response.content_part.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "part": item["content"][0],
                },
            )
        else:
            added = dict(item, status="in_progress", arguments="")
            self._sse(
                "response.output_item.added",
                {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": 0, "item": added},
            )
            self._sse(
                "response.function_call_arguments.delta",
                {
                    "type": "response.function_call_arguments.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "delta": item["arguments"],
                },
            )
            self._sse(
                "response.function_call_arguments.done",
                {
                    "type": "response.function_call_arguments.done",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": 0,
                    "arguments": item["arguments"],
                },
            )
        self._sse(
            "response.output_item.done",
            {"type": "response.output_item.done", "sequence_number": next(seq), "output_index": 0, "item": item},
        )
        self._sse("response.completed", {"type": "response.completed", "sequence_number": next(seq), "response": resp})
        self.wfile.flush()

    # ---- Gemini
    def _gemini_payload(self, body, action, in_tok):
        if action[0] == "tool":
            part = {"functionCall": {"name": action[1], "args": action[2]}}
        else:
            part = {"text": action[1]}
        return {
            "candidates": [{"content": {"parts": [part], "role": "model"}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": in_tok, "candidatesTokenCount": 5, "totalTokenCount": in_tok + 5},
            "modelVersion": "fake-model",
            "responseId": _id(""),
        }

    def _reply_gemini(self, body, action, stream, in_tok):
        self._send_json(self._gemini_payload(body, action, in_tok))

    def _reply_gemini_stream(self, body, action, stream, in_tok):
        self._sse_start()
        self._sse(None, self._gemini_payload(body, action, in_tok))
        self.wfile.flush()


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=int(os.environ.get("FAKE_PORT", "0")))
    ap.add_argument("--log", default=os.environ.get("FAKE_LOG"))
    ap.add_argument("--bodies", default=os.environ.get("FAKE_BODIES"))
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument(
        "--close",
        action="store_true",
        default=bool(os.environ.get("FAKE_CLOSE")),
        help="end every stream by closing its connection (HTTP/1.0 style), where by default a "
        "stream is chunked on a kept connection as the real APIs send it",
    )
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    port = srv.server_address[1]
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    print(f"fake model on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
