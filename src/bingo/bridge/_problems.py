"""The problems a plugin can have, each in the words bingo says it in, with its fix.

Owns one table (`PROBLEMS`) of what a plugin author can get wrong and the one sentence that
says how to put it right. The run-time refusals and notices (the manifest's reader, the
handshake's validator, the plugin handle's stray-line and unexpected-id notices, the tool
proxy's declaration and display notices, the process's stop and stderr faults) and the
checker (`bingo --check-plugin`, `check/`) both take their words from here, so what an
author reads in a notice and in the check agree. One notice is written for the person
instead: a stray stdout line (a server's banner) is said as what happened and where it is
kept (`_plugin.py`); STRAY_STDOUT is the check's. It decides nothing and does no I/O: each
entry is words with named blanks (`str.format` fields).

What the kernel itself refuses (a hook's site and points, bingo's own names, reserved
service keys) is in the kernel's part of the table (`kernel/problems.py`, where the record
`Problem` is too: the kernel does not import the bridge); this table holds it as well, so it
is the whole of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ..kernel.problems import HOOK_REFUSED, KERNEL_PROBLEMS, RESERVED_NAME, RESERVED_SERVICE, Problem

__all__ = [
    "BAD_PROGRESS",
    "CANCEL_IGNORED",
    "COMMAND_NOT_FOUND",
    "COMPLETE_LATE",
    "DIRECTORY_NAME",
    "DISPLAY_DROPPED",
    "DUPLICATE_NAME",
    "EXTRA_PARAMS",
    "HANDSHAKE_NAME",
    "HOOK_ANSWER",
    "HOOK_REFUSED",
    "IGNORES_STOP_KILLED",
    "IGNORES_STOP_TERM",
    "INPUT_SCHEMA",
    "MCP_JSON_RELATIVE_COMMAND",
    "NOTICE_FLOOD",
    "NO_INPUT_SCHEMA",
    "PLUGIN_ROOT_MISSING",
    "PLUGIN_ROOT_SPELLED",
    "PRETTY_JSON",
    "PROBLEMS",
    "PROGRESS_FLOOD",
    "PROTOCOL",
    "RELATIVE_ARG",
    "RELATIVE_COMMAND",
    "RESERVED_NAME",
    "RESERVED_SERVICE",
    "STDERR_FLOOD",
    "STDOUT_BEFORE_INITIALIZE",
    "STRAY_STDOUT",
    "TOOL_NAME",
    "UNEXPECTED_ID",
    "UNEXPECTED_STRING_ID",
    "UNKNOWN_KEYS",
    "UNKNOWN_METHOD",
    "UNKNOWN_NOTIFICATION",
    "Problem",
    "unknown_keys",
]


# --- the manifest ------------------------------------------------------------------

DIRECTORY_NAME: Final = Problem(
    "directory-name",
    "the directory is named {directory!r} but the manifest's name is {name!r}",
    "rename one of them so that they agree",
)
RELATIVE_COMMAND: Final = Problem(
    "relative-command",
    "`{where}` {command!r} is a relative path",
    "write ${{PLUGIN_ROOT}}/{rest} for a file in the plugin's directory",
)
MCP_JSON_RELATIVE_COMMAND: Final = Problem(
    "mcp-json-relative-command",
    "`{where}` {command!r} is a relative path",
    "write its absolute path, or a command found on PATH: a relative one would depend on the "
    "directory bingo is started in (a .mcp.json server has no directory of its own)",
)
RELATIVE_ARG: Final = Problem(
    "relative-arg",
    "`{where}` {value!r} names a file of the plugin's directory by a relative path, which the "
    "process reads from the project's directory (its working directory)",
    "write ${{PLUGIN_ROOT}}/{rest}",
)
COMMAND_NOT_FOUND: Final = Problem(
    "command-not-found",
    "`entry.command` {command!r} cannot be run: {why}",
    "install it, or name it by its full path (or ${{PLUGIN_ROOT}}/... for a file of the plugin)",
)
PLUGIN_ROOT_SPELLED: Final = Problem(
    "plugin-root-spelled",
    "`{where}` holds {written!r}, which bingo does not expand",
    "bingo replaces only ${{PLUGIN_ROOT}} (braces, capitals) and runs no shell: put other "
    "values in its env (entry.env, or mcp.env), or read the variable in the plugin",
)
PLUGIN_ROOT_MISSING: Final = Problem(
    "plugin-root-missing",
    "`{where}` names {value!r}, and the plugin's directory holds no such file",
    "name a file that is there, or add it",
)
UNKNOWN_KEYS: Final = Problem(
    "unknown-keys",
    "{whose} {has} unknown key{s} {keys}",
    "bingo ignores a key it does not know (a default stands in for the one meant): rename it",
)

# --- the handshake -----------------------------------------------------------------

PROTOCOL: Final = Problem(
    "protocol",
    "it speaks protocol {theirs}, but this host speaks only protocol {ours}",
    'answer initialize with "protocol": {ours}',
)
HANDSHAKE_NAME: Final = Problem(
    "handshake-name",
    "its handshake says it is {theirs!r}, but its manifest says {ours!r}",
    "answer initialize with the manifest's name",
)
STDOUT_BEFORE_INITIALIZE: Final = Problem(
    "stdout-before-initialize",
    "wrote {lines} to stdout before it answered initialize (first: {first!r})",
    "write nothing to stdout until initialize comes, and then only JSON-RPC; a banner or a log line goes to stderr",
)

# --- declarations ------------------------------------------------------------------

NO_INPUT_SCHEMA: Final = Problem(
    "no-input-schema",
    "no {key}",
    "so the model is told it takes no input",
    join=", ",
)
INPUT_SCHEMA: Final = Problem(
    "input-schema",
    "tool {name}'s inputSchema {why}",
    'make it a JSON Schema object: {{"type": "object", "properties": {{...}}, "required": [...]}}',
)
TOOL_NAME: Final = Problem(
    "tool-name",
    "tool name {name!r} becomes {bridged!r}, which model APIs refuse as it is (it is sent "
    "renamed, with a hash the model sees)",
    "use only letters, digits, _ and - (no __), in at most {room} characters",
)
DUPLICATE_NAME: Final = Problem(
    "duplicate-name",
    "{kind} {name!r} is declared {times} times; only the first is used",
    "give each its own name",
)

# --- the wire ----------------------------------------------------------------------

STRAY_STDOUT: Final = Problem(
    "stray-stdout",
    "wrote a line to stdout that is not JSON-RPC (kept in {log})",
    "write each message as one line of JSON, never pretty-printed, and diagnostics to stderr",
)
PRETTY_JSON: Final = Problem(
    "pretty-json",
    "wrote one JSON message over {lines} lines (pretty-printed), which bingo reads as that many "
    "lines that are not JSON-RPC",
    "write each message as one line of JSON (in Python json.dumps(message) with no indent; in "
    "Node JSON.stringify(message); with jq, jq -c)",
)
UNEXPECTED_ID: Final = Problem(
    "unexpected-id",
    "answered id {said}, which the host never asked or already had an answer for; ignored",
    "answer each request once, with its own id; see {log}",
    join=" (",
)
UNEXPECTED_STRING_ID: Final = Problem(
    "unexpected-id",
    "answered id {said}, which the host never asked or already had an answer for; ignored",
    "bingo's request ids are integers: answer with the id exactly as it came; see {log}",
    join=" (",
)
UNKNOWN_METHOD: Final = Problem(
    "unknown-method",
    "answered {method}, a method it does not have, with {got}",
    "answer a method you do not implement with error -32601 (method not found), so the host knows it is not offered",
)
UNKNOWN_NOTIFICATION: Final = Problem(
    "unknown-notification",
    "sent {what}, which is no message a plugin sends ({count} time{s})",
    "a plugin sends tool/progress, provider/delta and service/call requests only (see schema/plugin.json)",
)
EXTRA_PARAMS: Final = Problem(
    "extra-params",
    "answered {method} with Invalid params (-32602) when its params held a field it does not know ({field})",
    "ignore fields you do not know, as newer hosts send more (in Python take **_ too; in a "
    "schema, do not set additionalProperties false)",
)
HOOK_ANSWER: Final = Problem(
    "hook-answer",
    "hook {name} answered hook/decide with {got}, which decides nothing",
    'answer {{"outcome": "continue"}} (or deny, ask, block, redirect with a whole payload): a hook has no allow',
)
COMPLETE_LATE: Final = Problem(
    "complete-late",
    "did not answer command/complete for /{name} within {seconds:g} s",
    "answer completions at once (the person is typing), or answer -32601 to offer none",
)
IGNORES_STOP_TERM: Final = Problem(
    "ignores-stop",
    "did not exit within {grace:g} s of its stdin closing; it was stopped with SIGTERM",
    "exit when stdin reaches its end (the loop over stdin ends: return from main)",
    join=" (",
)
IGNORES_STOP_KILLED: Final = Problem(
    "ignores-stop",
    "did not exit {closing}on SIGTERM; it was killed",
    "exit when stdin reaches its end, and on SIGTERM",
    join=" (",
)
STDERR_FLOOD: Final = Problem(
    "stderr-flood",
    "wrote more than {mib} MiB to stderr; its log keeps only the latest",
    "log less: the log is for what went wrong",
    join=" (",
)

# --- calls -------------------------------------------------------------------------

DISPLAY_DROPPED: Final = Problem(
    "display-dropped",
    "tool {name}: its display was dropped, the parts were kept: {error}",
    'a display is one View: {{"type": "text", "text": ...}}, markdown, code, table, or a '
    "list or stack whose items are Views themselves, never bare strings",
    join=" (",
)
CANCEL_IGNORED: Final = Problem(
    "cancel-ignored",
    "tool {name} {how} after tool/cancel",
    "stop the call when tool/cancel names its callId and answer it then: the host waits for "
    "the answer, so a person's interrupt waits as long",
)
BAD_PROGRESS: Final = Problem(
    "bad-progress",
    "sent tool/progress {why}",
    'send {{"callId": <the call\'s callId>, "tail": "<one line>"}} while that call runs',
)
PROGRESS_FLOOD: Final = Problem(
    "progress-flood",
    "sends more than {per_second} tool/progress lines a second; the rest of each second is dropped",
    "send a live line when it changes, a few a second at most",
    join=" (",
)
NOTICE_FLOOD: Final = Problem(
    "notice-flood",
    "said {count} bingo.host notices during one call; bingo shows {burst} at once and then "
    "{per_second:g} a second, and keeps the rest in its log",
    "say a notice when a person must know something, not for every step",
)

PROBLEMS: Final[tuple[Problem, ...]] = (
    *KERNEL_PROBLEMS,
    DIRECTORY_NAME,
    RELATIVE_COMMAND,
    MCP_JSON_RELATIVE_COMMAND,
    RELATIVE_ARG,
    COMMAND_NOT_FOUND,
    PLUGIN_ROOT_SPELLED,
    PLUGIN_ROOT_MISSING,
    UNKNOWN_KEYS,
    PROTOCOL,
    HANDSHAKE_NAME,
    STDOUT_BEFORE_INITIALIZE,
    NO_INPUT_SCHEMA,
    INPUT_SCHEMA,
    TOOL_NAME,
    DUPLICATE_NAME,
    STRAY_STDOUT,
    PRETTY_JSON,
    UNEXPECTED_ID,
    UNEXPECTED_STRING_ID,
    UNKNOWN_METHOD,
    UNKNOWN_NOTIFICATION,
    EXTRA_PARAMS,
    HOOK_ANSWER,
    COMPLETE_LATE,
    IGNORES_STOP_TERM,
    IGNORES_STOP_KILLED,
    STDERR_FLOOD,
    DISPLAY_DROPPED,
    CANCEL_IGNORED,
    BAD_PROGRESS,
    PROGRESS_FLOOD,
    NOTICE_FLOOD,
)
"""Every problem, in the order a check meets them."""


def unknown_keys(keys: Sequence[str], known: Sequence[str]) -> list[str]:
    """Each of `keys` that is not one of `known`, with the known key it is closest to: the
    keys UNKNOWN_KEYS names, as a notice and the check both say them."""
    import difflib  # only when a key is wrong is it needed at all

    found: list[str] = []
    for key in keys:
        if key in known:
            continue
        close = difflib.get_close_matches(key, known, n=1)
        found.append(f"{key} (did you mean {close[0]}?)" if close else key)
    return found
