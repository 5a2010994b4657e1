"""One settings document: its shape (`Layer`), reading it from a file (`read_layer`), and
the one-line SettingsError for a document that is not UTF-8, not JSON, nested too deeply,
or holds a known key of the wrong type — naming the file, the line and the key, found key
by key against the layer's own fields (never read back out of a library's error wording).
Unknown keys do not stop a run, so a newer file works with an older host, but each is named
(`Source.unknown`, with a "did you mean" when a known key is close: a typo in a deny rule's
key must not pass in silence). It does not merge layers or decide what a project may give
(settings.py does).

It runs past ~480 lines because the layer's shape (one Struct per settings section, the
sections of INTERFACE.md 2–15 each adding theirs) and the walk that finds the first wrong or
unknown key against that shape and its line in the file belong together: the walk reads
the shape's own fields.
"""

from __future__ import annotations

import bisect
import difflib
import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Literal, TypeAlias, get_args, get_origin

import msgspec

from ..wire import DEFAULT_DEADLINES, MAX_DEPTH, Json, too_deep
from .errors import SettingsError
from .files import NotRegular, read_regular

__all__ = [
    "COMMAND_HOOK_EVENTS",
    "HOST_DEADLINES",
    "CommandHookLayer",
    "KeyPath",
    "Layer",
    "MatcherLayer",
    "PluginSandboxLayer",
    "SandboxLayer",
    "Source",
    "as_array",
    "as_object",
    "read_layer",
]

# --- finding and saying where a key is ----------------------------------------------

HOST_DEADLINES: Mapping[str, float] = MappingProxyType({"packageInstall": 300.0})
"""The `deadlines` that are not a wire method's, with their defaults: `packageInstall`, the
seconds the first start of a server started through a package runner (`npx`, `uvx`) may take
to complete its handshake, installing included (ADR-0036)."""

KeyPath: TypeAlias = tuple[str | int, ...]
"""A place in a JSON document: object keys and list indexes, from the root."""

_WHITESPACE = " \t\n\r"
_LONGEST_SHOWN = 40


def _key_lines(text: str) -> dict[KeyPath, int]:
    """The line of every key (and list item) of the valid JSON document `text`."""
    newlines = [i for i, char in enumerate(text) if char == "\n"]
    decoder = json.JSONDecoder()
    lines: dict[KeyPath, int] = {}

    def line(i: int) -> int:
        return bisect.bisect_left(newlines, i) + 1

    def skip(i: int) -> int:
        while i < len(text) and text[i] in _WHITESPACE:
            i += 1
        return i

    def value(i: int, path: KeyPath) -> int:
        i = skip(i)
        lines.setdefault(path, line(i))
        if text[i] not in "{[":
            return decoder.raw_decode(text, i)[1]
        closing = "}" if text[i] == "{" else "]"
        i = skip(i + 1)
        index = 0
        while text[i] != closing:
            if closing == "}":
                key, after = decoder.raw_decode(text, i)
                if not isinstance(key, str):
                    raise ValueError("an object key that is not a string")
                here: KeyPath = (*path, key)
                lines[here] = line(i)  # a repeated key: the last one is the one that counts
                i = value(skip(after) + 1, here)
            else:
                here = (*path, index)
                lines[here] = line(i)
                i = value(i, here)
                index += 1
            i = skip(i)
            if text[i] == ",":
                i = skip(i + 1)
        return i + 1

    try:
        value(0, ())
    except (ValueError, IndexError, RecursionError):
        # Only reached for text json.loads refused; the caller falls back to line 1.
        pass
    return lines


def _describe(value: Json) -> str:
    """What a value is, in words, for an error line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= _LONGEST_SHOWN else value[:_LONGEST_SHOWN] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _dotted(path: KeyPath) -> str:
    """`permissions.allow[1]`: a key path as a person writes it."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


# --- the shape of one layer ----------------------------------------------------------

_Positive = Annotated[int, msgspec.Meta(ge=1)]
_Seconds = Annotated[float, msgspec.Meta(gt=0)]


class _PermissionsLayer(msgspec.Struct, kw_only=True):
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class CommandHookLayer(msgspec.Struct, kw_only=True, rename="camel"):
    """One hook of a Claude Code-shaped entry (INTERFACE.md §11): a command, as written."""

    type: str = "command"
    """Only `command` hooks run; another type (Claude Code's `prompt`) is one notice."""
    command: str = ""
    timeout: _Seconds | None = None
    fail_closed: bool = False


class MatcherLayer(msgspec.Struct, kw_only=True, rename="camel"):
    """One entry of an event's list: a matcher over tool names and its hooks."""

    matcher: str = ""
    hooks: list[CommandHookLayer] = []
    fail_closed: bool = False


COMMAND_HOOK_EVENTS: tuple[str, ...] = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
    "SessionEnd",
)
"""Claude Code's hook events bingo runs command hooks at (bring/hooks.py maps each)."""


def _no_entries() -> list[MatcherLayer]:
    return []


class _HooksLayer(msgspec.Struct, kw_only=True, rename="camel"):
    fail_closed: list[str] = []
    pre_tool_use: list[MatcherLayer] = msgspec.field(default_factory=_no_entries, name="PreToolUse")
    post_tool_use: list[MatcherLayer] = msgspec.field(default_factory=_no_entries, name="PostToolUse")
    user_prompt_submit: list[MatcherLayer] = msgspec.field(default_factory=_no_entries, name="UserPromptSubmit")
    stop: list[MatcherLayer] = msgspec.field(default_factory=_no_entries, name="Stop")
    session_start: list[MatcherLayer] = msgspec.field(default_factory=_no_entries, name="SessionStart")
    session_end: list[MatcherLayer] = msgspec.field(default_factory=_no_entries, name="SessionEnd")


class _MatrixLayer(msgspec.Struct, kw_only=True, rename="camel"):
    homeserver: str | None = None
    user_id: str | None = None
    access_token_env: str | None = None
    rooms: list[str] = []
    allowed_users: list[str] = []
    cwd: str | None = None
    question_seconds: _Seconds | None = None
    shared_rooms: bool | None = None


class _ChannelsLayer(msgspec.Struct, kw_only=True):
    matrix: _MatrixLayer = msgspec.field(default_factory=_MatrixLayer)


class _SandboxNetworkLayer(msgspec.Struct, kw_only=True):
    allow: list[str] = []


class _SandboxEnvLayer(msgspec.Struct, kw_only=True):
    keep: list[str] = []


class SandboxLayer(msgspec.Struct, kw_only=True):
    """`sandbox` of one layer (INTERFACE.md §9), as written; who may widen is settings.py's."""

    mode: Literal["on", "off", "required"] | None = None
    network: _SandboxNetworkLayer = msgspec.field(default_factory=_SandboxNetworkLayer)
    write: list[str] = []
    deny: list[str] = []
    env: _SandboxEnvLayer = msgspec.field(default_factory=_SandboxEnvLayer)


class PluginSandboxLayer(msgspec.Struct, kw_only=True):
    """`plugins.<name>.sandbox` of one layer, as written."""

    network: list[str] = []
    write: list[str] = []
    mode: Literal["on", "off"] | None = None


class _CheckpointsLayer(msgspec.Struct, kw_only=True, rename="camel"):
    max_bytes: _Positive = 2 << 30
    max_file_bytes: _Positive = 50 << 20


class _AgentsLayer(msgspec.Struct, kw_only=True, rename="camel"):
    max_concurrent: _Positive = 4


class Layer(msgspec.Struct, kw_only=True, rename="camel"):
    """One settings document. Unknown keys are ignored by the decode (msgspec's default) and
    named by `Source.unknown`."""

    provider: str | None = None
    model: str | None = None
    max_tokens: _Positive = 4096
    model_attempts: _Positive = 4
    model_stall_seconds: _Seconds = 300.0
    mcp_variables: list[str] = []
    context_window: _Positive | None = None
    context_budget: _Positive | None = None
    tool_result_budget: _Positive | None = None
    compactor: str | None = None
    permissions: _PermissionsLayer = msgspec.field(default_factory=_PermissionsLayer)
    hooks: _HooksLayer = msgspec.field(default_factory=_HooksLayer)
    # Mapping values are checked one by one below: msgspec's error path does not name the
    # key of a dict entry, and the key is what a person needs to find the mistake.
    deadlines: dict[str, Json] = {}
    plugins: dict[str, Json] = {}
    channels: _ChannelsLayer = msgspec.field(default_factory=_ChannelsLayer)
    """The IM channels (INTERFACE.md §7b), read from the user's own settings only."""
    sandbox: SandboxLayer = msgspec.field(default_factory=SandboxLayer)
    """What the processes bingo starts may reach (INTERFACE.md §9)."""
    checkpoints: _CheckpointsLayer = msgspec.field(default_factory=_CheckpointsLayer)
    """The bounds of checkpoints (INTERFACE.md §10)."""
    agents: _AgentsLayer = msgspec.field(default_factory=_AgentsLayer)
    """Subagents (INTERFACE.md §15): how many child conversations run at once."""


# What each known key must be, for the hint. Dict entries use "*" for the entry's key.
_EXPECTED: dict[KeyPath, str] = {
    (): "a JSON object",
    ("provider",): "a string (a provider id)",
    ("model",): "a string (a model name)",
    ("maxTokens",): "a positive whole number",
    ("modelAttempts",): "a positive whole number (tries of one model request; 1: no retry)",
    ("modelStallSeconds",): "a positive number of seconds (how long a model's answer may go without content)",
    ("mcpVariables",): "a list of environment variable names a project's .mcp.json may read",
    ("mcpVariables", 0): "an environment variable name (a string)",
    ("contextWindow",): "a positive whole number",
    ("contextBudget",): "a positive whole number",
    ("toolResultBudget",): "a positive whole number",
    ("compactor",): "a string (a compactor name)",
    ("permissions",): "an object with allow, ask and deny lists",
    ("permissions", "allow"): "a list of tool rules (strings)",
    ("permissions", "ask"): "a list of tool rules (strings)",
    ("permissions", "deny"): "a list of tool rules (strings)",
    ("permissions", "allow", 0): "a tool rule (a string)",
    ("permissions", "ask", 0): "a tool rule (a string)",
    ("permissions", "deny", 0): "a tool rule (a string)",
    ("hooks",): "an object with a failClosed list",
    ("hooks", "failClosed"): "a list of plugin names (strings)",
    ("hooks", "failClosed", 0): "a plugin name (a string)",
    ("hooks", "PreToolUse"): "a list of {matcher, hooks: [{type: command, command, timeout}]} entries",
    (
        "hooks",
        "PreToolUse",
        0,
    ): 'an object {matcher: a regular expression, hooks: [{type: "command", command: a string, timeout: seconds}]}',
    ("hooks", "PostToolUse"): "a list of {matcher, hooks: [{type: command, command, timeout}]} entries",
    (
        "hooks",
        "PostToolUse",
        0,
    ): 'an object {matcher: a regular expression, hooks: [{type: "command", command: a string, timeout: seconds}]}',
    ("hooks", "UserPromptSubmit"): "a list of {matcher, hooks: [{type: command, command, timeout}]} entries",
    (
        "hooks",
        "UserPromptSubmit",
        0,
    ): 'an object {matcher: a regular expression, hooks: [{type: "command", command: a string, timeout: seconds}]}',
    ("hooks", "Stop"): "a list of {matcher, hooks: [{type: command, command, timeout}]} entries",
    (
        "hooks",
        "Stop",
        0,
    ): 'an object {matcher: a regular expression, hooks: [{type: "command", command: a string, timeout: seconds}]}',
    ("hooks", "SessionStart"): "a list of {matcher, hooks: [{type: command, command, timeout}]} entries",
    (
        "hooks",
        "SessionStart",
        0,
    ): 'an object {matcher: a regular expression, hooks: [{type: "command", command: a string, timeout: seconds}]}',
    ("hooks", "SessionEnd"): "a list of {matcher, hooks: [{type: command, command, timeout}]} entries",
    (
        "hooks",
        "SessionEnd",
        0,
    ): 'an object {matcher: a regular expression, hooks: [{type: "command", command: a string, timeout: seconds}]}',
    ("deadlines",): "an object mapping wire methods (and packageInstall) to seconds",
    ("deadlines", "*"): "a positive number of seconds",
    ("plugins",): "an object mapping plugin names to their settings",
    ("plugins", "*"): "an object (the plugin's settings)",
    ("channels",): "an object with a matrix object",
    ("channels", "matrix"): "an object (homeserver, userId, accessTokenEnv, rooms, allowedUsers, cwd)",
    ("channels", "matrix", "homeserver"): "a string (the homeserver's URL, https://matrix.example.org)",
    ("channels", "matrix", "userId"): "a string (the bot's Matrix id, @bingo:example.org)",
    ("channels", "matrix", "accessTokenEnv"): "a string (the environment variable holding the bot's access token)",
    ("channels", "matrix", "rooms"): "a list of room ids (strings, !room:example.org)",
    ("channels", "matrix", "rooms", 0): "a room id (a string)",
    ("channels", "matrix", "allowedUsers"): "a list of Matrix user ids (strings)",
    ("channels", "matrix", "allowedUsers", 0): "a Matrix user id (a string)",
    ("channels", "matrix", "cwd"): "a string (the directory bingo works in)",
    ("channels", "matrix", "questionSeconds"): "a positive number of seconds",
    ("sandbox",): "an object (mode, network, write, deny, env)",
    ("sandbox", "mode"): '"on", "off" or "required"',
    ("sandbox", "network"): "an object with an allow list",
    ("sandbox", "network", "allow"): 'a list of hosts (strings, "pypi.org" or "*.npmjs.org")',
    ("sandbox", "network", "allow", 0): 'a host (a string, "pypi.org" or "*.npmjs.org")',
    ("sandbox", "write"): "a list of paths (strings)",
    ("sandbox", "write", 0): "a path (a string)",
    ("sandbox", "deny"): "a list of paths (strings)",
    ("sandbox", "deny", 0): "a path (a string)",
    ("sandbox", "env"): "an object with a keep list",
    ("sandbox", "env", "keep"): "a list of environment variable names (strings)",
    ("sandbox", "env", "keep", 0): "an environment variable name (a string)",
    ("plugins", "*", "sandbox"): "an object (network, write, mode)",
    ("plugins", "*", "sandbox", "network"): 'a list of hosts (strings, "pypi.org" or "*.npmjs.org")',
    ("plugins", "*", "sandbox", "network", 0): 'a host (a string, "pypi.org" or "*.npmjs.org")',
    ("plugins", "*", "sandbox", "write"): "a list of paths (strings)",
    ("plugins", "*", "sandbox", "write", 0): "a path (a string)",
    ("plugins", "*", "sandbox", "mode"): '"off" (or "on")',
    ("checkpoints",): "an object (maxBytes, maxFileBytes)",
    ("checkpoints", "maxBytes"): "a positive whole number of bytes (what every checkpoint may keep)",
    ("checkpoints", "maxFileBytes"): "a positive whole number of bytes (a bigger file is not recorded)",
    ("agents",): "an object (maxConcurrent)",
    ("agents", "maxConcurrent"): "a positive whole number (child conversations that run at once)",
}


def _first_wrong(data: Json, shape: type[msgspec.Struct], path: KeyPath) -> KeyPath | None:
    """The path of the first known key of `data` (a document of `shape`) whose value has the
    wrong type, found key by key (so the path is known, not read back out of a library's
    error wording); None when every known key is right. Unknown keys are not looked at."""
    fields = as_object(data)
    if fields is None:
        return path
    for field in msgspec.structs.fields(shape):
        if field.encode_name not in fields:
            continue
        value, here = fields[field.encode_name], (*path, field.encode_name)
        kind: object = field.type
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            found = _first_wrong(value, kind, here)
            if found is not None:
                return found
            continue
        if get_origin(kind) is list:
            items = as_array(value)
            if items is None:
                return here
            [item_type] = get_args(kind)
            for index, item in enumerate(items):
                if not _fits(item, item_type):
                    return (*here, index)
            continue
        if not _fits(value, field.type):
            return here
    return None


# The known keys of each mapping whose keys are not fields: None when they are not checked
# (a plugin's slice is the plugin's own).
_OPEN_KEYS: dict[KeyPath, tuple[str, ...] | None] = {
    ("deadlines",): (*DEFAULT_DEADLINES, *HOST_DEADLINES),
    ("plugins",): None,
}


def _unknown(data: Json, shape: type[msgspec.Struct], path: KeyPath) -> list[tuple[KeyPath, list[str]]]:
    """Each unknown key of `data` (a document of `shape`), walked key by key as
    `_first_wrong` walks the known ones, with the known keys of its level."""
    fields = as_object(data)
    if fields is None:
        return []
    known = {field.encode_name: field for field in msgspec.structs.fields(shape)}
    found: list[tuple[KeyPath, list[str]]] = []
    for key, value in fields.items():
        here = (*path, key)
        field = known.get(key)
        if field is None:
            found.append((here, list(known)))
            continue
        kind: object = field.type
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            found += _unknown(value, kind, here)
        elif here in _OPEN_KEYS:
            names = _OPEN_KEYS[here]
            entries = as_object(value)
            if names is None or entries is None:
                continue
            found += [((*here, name), list(names)) for name in entries if name not in names]
    return found


def _fits(value: Json, kind: object) -> bool:
    """Whether `value` converts to the type `kind` (an annotation msgspec understands)."""
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return False
    return True


def _expected(path: KeyPath) -> str:
    general = tuple(0 if isinstance(step, int) else step for step in path)
    if general[:1] == ("plugins",) and len(general) > 2:
        general = ("plugins", "*", *general[2:])  # inside a plugin's slice, whatever its name
    if general in _EXPECTED:
        return _EXPECTED[general]
    return _EXPECTED.get((*path[:1], "*"), "a different type")


def as_object(value: Json) -> dict[str, Json] | None:
    """`value` as a JSON object (a copy), or None when it is not one."""
    try:
        return msgspec.convert(value, dict[str, Json])
    except msgspec.ValidationError:
        return None


def as_array(value: Json) -> list[Json] | None:
    """`value` as a JSON array (a copy), or None when it is not one."""
    try:
        return msgspec.convert(value, list[Json])
    except msgspec.ValidationError:
        return None


def _value_at(data: Json, path: KeyPath) -> Json:
    value: Json = data
    for step in path:
        if isinstance(step, int):
            items = as_array(value)
            if items is None or step >= len(items):
                return None
            value = items[step]
        else:
            fields = as_object(value)
            if fields is None or step not in fields:
                return None
            value = fields[step]
    return value


class Source:
    """One layer's document and where it came from, for the error line."""

    def __init__(self, label: str, data: Json, text: str | None) -> None:
        self.label = label
        self.data = data
        self.text = text

    def wrong(self, path: KeyPath) -> SettingsError:
        """The error for a known key of the wrong type at `path`."""
        got = _describe(_value_at(self.data, path))
        hint = f"expected {_expected(path)}"
        if self.text is None:
            where = f"{_dotted(path)} from the command line" if path else "the command line"
            return SettingsError(f"{where} is {got}", hint)
        line = _key_lines(self.text).get(path, 1)
        if not path:
            return SettingsError(f"{self.label} (line {line}) holds {got}", hint)
        return SettingsError(f"{_dotted(path)} in {self.label} (line {line}) is {got}", hint)

    def unknown(self) -> tuple[str, ...]:
        """One finished line per unknown key of the document (`plugins.<name>` slices are
        the plugins' own: not looked into, but for their `sandbox`, which is bingo's), with
        the closest known key of its level."""
        where = "the command line" if self.text is None else self.label
        lines: list[str] = []
        found = _unknown(self.data, Layer, ())
        plugins = as_object((as_object(self.data) or {}).get("plugins")) or {}
        for name, slice_ in plugins.items():
            sandbox = (as_object(slice_) or {}).get("sandbox")
            if sandbox is not None:
                found += _unknown(sandbox, PluginSandboxLayer, ("plugins", name, "sandbox"))
        for path, known in found:
            line = f"{where}: unknown key {_dotted(path)}"
            close = difflib.get_close_matches(str(path[-1]), known, n=1)
            if close:
                line += f" (did you mean {_dotted((*path[:-1], close[0]))}?)"
            lines.append(line)
        return tuple(lines)

    def check(self) -> Layer:
        """Validate the document; SettingsError naming the first key of the wrong type."""
        wrong = _first_wrong(self.data, Layer, ())
        if wrong is not None:
            raise self.wrong(wrong)
        try:
            layer = msgspec.convert(self.data, Layer)
        except msgspec.ValidationError as exc:  # not reached: every known key was checked
            raise self.wrong(()) from exc
        for name, seconds in layer.deadlines.items():
            try:
                msgspec.convert(seconds, _Seconds)
            except msgspec.ValidationError as exc:
                raise self.wrong(("deadlines", name)) from exc
        for name, slice_ in layer.plugins.items():
            fields = as_object(slice_)
            if fields is None:
                raise self.wrong(("plugins", name))
            if "sandbox" in fields:  # the one key of a plugin's slice that is bingo's, not the plugin's
                wrong = _first_wrong(fields["sandbox"], PluginSandboxLayer, ("plugins", name, "sandbox"))
                if wrong is not None:
                    raise self.wrong(wrong)
        return layer


_SETTINGS_MAX = 4 << 20
"""Bytes a settings file may hold: a person's, with every rule they ever wrote, is a few kB."""


def read_layer(path: Path) -> Source | None:
    """The document at `path`, or None when there is no file. Read as `kernel.files` reads
    what someone else may have put there: a FIFO in its place is refused, never waited on."""
    try:
        data = read_regular(path, _SETTINGS_MAX)
    except FileNotFoundError:
        return None
    except NotRegular as exc:
        raise SettingsError(str(exc), "put a JSON file there, or remove it") from exc
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SettingsError(f"cannot read {path} ({reason})", "fix it or remove it") from exc
    if len(data) > _SETTINGS_MAX:
        raise SettingsError(f"{path} is larger than {_SETTINGS_MAX} bytes", "fix the file or remove it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path} is not UTF-8 text", "save it as UTF-8 JSON") from exc
    if too_deep(text):
        # Before json.loads, which would recurse until RecursionError; and the merge, the
        # key locator and the layer check all walk the document recursively after it.
        raise SettingsError(
            f"{path} is nested too deeply (more than {MAX_DEPTH} levels)",
            "fix the file or remove it",
        )
    try:
        data: Json = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            "fix the file or remove it",
        ) from exc
    return Source(str(path), data, text)
