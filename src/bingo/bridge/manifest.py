"""The plugin manifest: `plugin.json`, what it may hold, and reading it from a directory.

Owns the manifest's shape (`Manifest`, `Entry`, and `McpServer` for a Model Context Protocol
server declared with `mcp` in place of `entry`, INTERFACE.md §6), the rule for a plugin's
name, and the one function that turns a directory into a Manifest or a PluginError whose one
line says exactly what is wrong with it. A stdio MCP server's `command`, `args` and `env`
become the manifest's `entry`, so everything that starts, hashes or keys a plugin by its entry
treats it as any other. It does not look for plugins (that is `discovery.py`), expand
`${PLUGIN_ROOT}` or start anything.

A plugin's name is lowercase letters and digits, in runs joined by single `-` or `_`
(`wordcount`, `echo-node`, `scripted_model`), at most 64 characters. It becomes part of tool
names (`plugin__<name>__<tool>`), which model APIs restrict to `[a-zA-Z0-9_-]`; a `.` or an
upper-case letter would make names that differ only on case-insensitive file systems; and a
`__` inside a name would make `plugin__<name>__<tool>` ambiguous.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

import msgspec

from ..kernel.errors import PluginError
from ..kernel.files import read_regular
from ..kernel.registry import BUILTIN
from ..wire import MAX_DEPTH, Json, Wire, too_deep
from . import _problems as P

__all__ = [
    "MANIFEST_FILE",
    "PLUGIN_ROOT",
    "Entry",
    "Manifest",
    "McpServer",
    "check_name",
    "mcp_manifest",
    "mcp_problem",
    "read_manifest",
]

MANIFEST_FILE: Final = "plugin.json"
"""The file that makes a directory a plugin."""

PLUGIN_ROOT: Final = "${PLUGIN_ROOT}"
"""Replaced, in the entry's command, arguments and env values, by the plugin's directory."""

_NAME = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")
_NAME_MAX: Final = 64
# A manifest is a few hundred bytes; anything this big is not one.
_MANIFEST_MAX_BYTES: Final = 1_000_000
_HINT: Final = "see docs/plugins.md, section 'The manifest'"


class Entry(Wire, frozen=True):
    """How to start the plugin's process. `${PLUGIN_ROOT}` may appear in `command`, any
    argument and any env value; a bare command is looked up on PATH."""

    command: str
    args: list[str] = []
    env: dict[str, str] = {}


class McpServer(Wire, frozen=True):
    """An MCP server: stdio (`command`, `args`, `env`, as `entry`'s) or Streamable HTTP
    (`url`, `headers`). `type` is `.mcp.json`'s (`stdio`, `http`), optional."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    url: str | None = None
    headers: dict[str, str] = {}
    type: str | None = None


class Manifest(Wire, frozen=True):
    """`plugin.json`. `config` is a JSON Schema for the plugin's `plugins.<name>` settings:
    documentation for the person writing them, never validated against. A manifest with
    `mcp` declares an MCP server; a stdio one's `entry` is made from it (an HTTP one's is
    empty: nothing is spawned)."""

    name: str
    version: str
    entry: Entry
    description: str = ""
    config: dict[str, Json] | None = None
    mcp: McpServer | None = None


class _File(Wire, frozen=True):
    """`plugin.json` as written: `entry` or `mcp`."""

    name: str
    version: str
    entry: Entry | None = None
    description: str = ""
    config: dict[str, Json] | None = None
    mcp: McpServer | None = None


def mcp_problem(server: McpServer, where: str, *, mcp_json: bool = False) -> str | None:
    """Why `server` (at `where`, e.g. `mcp`) cannot be started, or None. A `.mcp.json`
    server's (`mcp_json`) has no plugin directory: no fix names `${PLUGIN_ROOT}`."""
    kind = server.type
    if kind is not None and kind not in ("stdio", "http", "streamable-http"):
        if kind == "sse":
            return f'`{where}.type` is sse, the transport MCP deprecated: bingo speaks stdio and Streamable HTTP (`"type": "http"`)'
        return f"`{where}.type` is {kind!r}: use stdio or http"
    if server.url is not None:
        if server.command is not None:
            return f"`{where}` has both `command` and `url`: a server is one or the other"
        if not server.url.startswith(("http://", "https://")):
            return f"`{where}.url` {server.url!r} is not an http:// or https:// URL"
        return None
    if server.command is None:
        return f"`{where}` has neither `command` (stdio) nor `url` (Streamable HTTP)"
    if mcp_json and "/" in server.command and not server.command.startswith(("/", PLUGIN_ROOT)):
        return P.MCP_JSON_RELATIVE_COMMAND.words(where=f"{where}.command", command=server.command)
    return _check_command(server.command, f"{where}.command")


def mcp_manifest(
    name: str, server: McpServer, *, version: str = "", description: str = "", config: dict[str, Json] | None = None
) -> Manifest:
    """The manifest of MCP server `server` named `name` (its entry made from it)."""
    entry = (
        Entry(command=server.command or "", args=server.args, env=server.env)
        if server.url is None
        else Entry(command="")
    )
    return Manifest(name=name, version=version, entry=entry, description=description, config=config, mcp=server)


_RESERVED = frozenset({"bingo", BUILTIN})
"""Names that would be mistaken for the host's own voice in notices and listings."""


def check_name(name: str) -> str | None:
    """Why `name` cannot be a plugin's name, or None when it can."""
    if len(name) > _NAME_MAX:
        return f"name {name!r} is longer than {_NAME_MAX} characters"
    if _NAME.fullmatch(name) is None:
        return f"name {name!r} is not a plugin name: use lowercase letters and digits, joined by single - or _"
    if name in _RESERVED:
        return f"name {name!r} is reserved: notices and tools of the host itself speak under it"
    return None


def _explain(exc: msgspec.ValidationError) -> str:
    """msgspec's `Expected X, got Y - at `$.a.b`` as one line a plugin author reads."""
    text = str(exc)
    what, sep, where = text.rpartition(" - at ")
    if not sep:
        what, where = text, "$"
    where = where.strip("`")
    missing = re.fullmatch(r"Object missing required field `(\w+)`", what)
    if missing is not None:
        field = missing.group(1) if where == "$" else f"{where[2:]}.{missing.group(1)}"
        return f"`{field}` is missing"
    if what.startswith("Expected"):
        return f"wrong type at `{where}`: {what[0].lower()}{what[1:]}"
    return f"{what} at `{where}`"


def _check_command(command: str, where: str) -> str | None:
    if not command.strip():
        return f"`{where}` is empty"
    if "/" in command and not command.startswith(("/", PLUGIN_ROOT)):
        return P.RELATIVE_COMMAND.words(where=where, command=command, rest=command.removeprefix("./"))
    return None


def _check_entry(entry: Entry) -> str | None:
    return _check_command(entry.command, "entry.command")


def _manifest(written: _File) -> Manifest | str:
    """The manifest `written` declares, or why it is none."""
    if written.mcp is not None:
        if written.entry is not None:
            return "it has both `entry` and `mcp`: a plugin is started one way"
        problem = mcp_problem(written.mcp, "mcp")
        if problem is not None:
            return problem
        return mcp_manifest(
            written.name, written.mcp, version=written.version, description=written.description, config=written.config
        )
    if written.entry is None:
        return "`entry` is missing (or `mcp`, for an MCP server)"
    problem = _check_entry(written.entry)
    if problem is not None:
        return problem
    return Manifest(
        name=written.name,
        version=written.version,
        entry=written.entry,
        description=written.description,
        config=written.config,
    )


def read_manifest(directory: Path) -> Manifest:
    """Read `<directory>/plugin.json`.

    Raises:
        PluginError: the file is missing, unreadable, not JSON, nested too deeply, not a
            manifest, or names a plugin other than the directory's name; its message says
            which, in one line.
    """
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise PluginError(
            f"no {MANIFEST_FILE} in {directory}",
            "a plugin is a directory holding a plugin.json",
        )
    try:
        data = read_regular(path, _MANIFEST_MAX_BYTES)
    except OSError as exc:
        raise PluginError(f"cannot read {path}: {exc.strerror}", "check its permissions") from exc
    if len(data) > _MANIFEST_MAX_BYTES:
        raise PluginError(f"{path} is larger than {_MANIFEST_MAX_BYTES} bytes", _HINT)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PluginError(f"{path} is not UTF-8 at line {line}", _HINT) from exc
    if too_deep(data):
        # Before json.loads, which would recurse until RecursionError (and beneath its
        # limit leave a value too deep for what walks it next).
        raise PluginError(f"{path} is nested too deeply (more than {MAX_DEPTH} levels)", _HINT)
    try:
        value: Json = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PluginError(f"{path} is not JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", _HINT) from exc
    try:
        written = msgspec.convert(value, _File)
    except msgspec.ValidationError as exc:
        raise PluginError(f"{path}: {_explain(exc)}", _HINT) from exc
    problem = check_name(written.name)
    if problem is not None:
        raise PluginError(f"{path}: {problem}", _HINT)
    manifest = _manifest(written)
    if isinstance(manifest, str):
        raise PluginError(f"{path}: {manifest}", _HINT)
    if manifest.name != directory.name:
        raise PluginError(
            f"{path}: {P.DIRECTORY_NAME.said(directory=directory.name, name=manifest.name)}",
            P.DIRECTORY_NAME.fix,
        )
    return manifest
