#!/usr/bin/env python3
"""wordcount: a bingo plugin in one file, Python 3 standard library only.

It counts the words, lines and characters in a file: as a tool the model can call
(`count`, which bingo names `plugin__wordcount__count`) and as a slash command a person
types (`/wordcount notes.txt`), with file names completed as they are typed.

The whole contract is in this file. bingo starts the process and writes one JSON-RPC 2.0
message per line to its stdin; the plugin answers one message per line on stdout. Stdout
carries messages and nothing else: anything else goes to stderr, which bingo appends to
~/.bingo/data/logs/plugin-wordcount.log. When stdin closes, the plugin exits.
"""

import json
import os
import sys
import traceback

PROTOCOL = 5

# JSON-RPC error codes this plugin answers with.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603


# --- the wire: one JSON object per line ---------------------------------------------


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id, result):
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def fail(request_id, code, message):
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})


def log(text):
    """Anything that is not a message goes to stderr: bingo keeps it in the plugin's log."""
    print("wordcount: " + text, file=sys.stderr, flush=True)


# --- what this plugin is ------------------------------------------------------------


def handshake():
    return {
        "protocol": PROTOCOL,
        "name": "wordcount",
        "version": "0.1.0",
        "tools": [
            {
                "name": "count",
                "description": "Counts the words, lines and characters in a file.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"path": {"type": "string", "description": "The file to count."}},
                    "required": ["path"],
                },
            }
        ],
        "commands": [
            {
                "name": "wordcount",
                "hint": "count the words in a file",
                "args": {"kind": "free", "hint": "<path>"},
                "instant": True,
                "family": "plugin",
            }
        ],
    }


# --- counting -----------------------------------------------------------------------


# The person's settings for this plugin: `plugins.wordcount` in a settings file reaches the
# plugin, as it is, as initialize's `config` (plugin.json's `config` schema is documentation).
settings = {}


def count(cwd, path):
    """The counts of one file; OSError when it cannot be read or is past maxBytes."""
    limit = settings.get("maxBytes")
    with open(os.path.join(cwd, path), encoding="utf-8", errors="replace") as file:
        if isinstance(limit, int) and os.fstat(file.fileno()).st_size > limit:
            raise OSError("it is larger than maxBytes (%d bytes, in the plugins.wordcount settings)" % limit)
        text = file.read()
    return {"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}


def table(path, counts):
    """A table View: the terminal draws it, --print folds it to aligned text."""
    return {
        "type": "table",
        "title": path,
        "columns": ["what", "count"],
        "rows": [[what, n] for what, n in counts.items()],
    }


def unreadable(path, error):
    return "cannot read %s: %s" % (path, error.strerror or error)


# --- the methods --------------------------------------------------------------------


def failed(text):
    """A tool output the model reads as a failure."""
    return {"output": {"parts": [{"type": "text", "text": text}], "isError": True}}


def tool_call(params):
    path = (params.get("input") or {}).get("path")
    if not isinstance(path, str) or not path:
        return failed("count needs a path")
    notify("tool/progress", {"callId": params["callId"], "tail": "reading %s" % path})
    try:
        counts = count(params["cwd"], path)
    except OSError as error:
        return failed(unreadable(path, error))
    said = "%s: %d words, %d lines, %d characters" % (path, counts["words"], counts["lines"], counts["characters"])
    # Two things at once: text for the model, and a View for the person.
    return {"output": {"parts": [{"type": "text", "text": said}], "display": table(path, counts)}}


def command_run(params):
    path = params.get("args", "").strip()
    if not path:
        return {"outcome": {"kind": "error", "message": "usage: /wordcount <path>"}}
    try:
        counts = count(params["cwd"], path)
    except OSError as error:
        return {"outcome": {"kind": "error", "message": unreadable(path, error)}}
    return {"outcome": {"kind": "view", "view": table(path, counts)}}


def command_complete(params):
    """The files in the working directory whose names start with what has been typed."""
    partial = params.get("partial", "")
    folder, start = os.path.split(partial)
    try:
        names = sorted(os.listdir(os.path.join(params["cwd"], folder)))
    except OSError:
        names = []
    completions = []
    for name in names:
        if not name.startswith(start) or (name.startswith(".") and not start.startswith(".")):
            continue
        value = os.path.join(folder, name)
        if os.path.isdir(os.path.join(params["cwd"], value)):
            value += "/"
        completions.append({"value": value})
    return {"completions": completions}


def initialize(params):
    config = params.get("config")
    settings.update(config if isinstance(config, dict) else {})
    return handshake()


HANDLERS = {
    "initialize": initialize,
    "tool/call": tool_call,
    "command/run": command_run,
    "command/complete": command_complete,
}


def handle(message):
    if "method" not in message:
        return  # a response: this plugin never asks the host anything
    if "id" not in message:
        return  # a notification (tool/cancel, hook/observe...): counting is quick, none matter
    request_id, handler = message["id"], HANDLERS.get(message["method"])
    if handler is None:
        return fail(request_id, METHOD_NOT_FOUND, "no method %s" % message["method"])
    try:
        answer(request_id, handler(message.get("params") or {}))
    except Exception as error:  # a bug here must cost one answer, not the plugin
        log(traceback.format_exc())
        fail(request_id, INTERNAL_ERROR, str(error))


def main():
    sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            fail(None, PARSE_ERROR, "not JSON")
            continue
        if not isinstance(message, dict):
            fail(None, INVALID_REQUEST, "not a JSON-RPC message")
            continue
        handle(message)


if __name__ == "__main__":
    main()
