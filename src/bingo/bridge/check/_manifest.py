"""The checker's manifest checks: `plugin.json` as bingo reads it, one line per rule.

Owns the checks of a manifest an author can get wrong (the file itself, the name's rules,
the directory's name, keys bingo does not know, the entry's command, `${PLUGIN_ROOT}`, and
relative paths in the arguments), each from the manifest's own rules (`manifest.py`,
`process.resolve`) and in the words of `_problems.py`. The verdict that decides whether the
plugin is started is `read_manifest`'s, the run-time reader's: when it refuses what no check
here caught, its words are a line of their own. It starts nothing.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from ...kernel.errors import PluginError
from ...kernel.files import read_regular
from ...wire import Json, is_array, is_object, too_deep
from .. import _problems as P
from ..discovery import entry_command
from ..manifest import MANIFEST_FILE, PLUGIN_ROOT, Entry, Manifest, McpServer, check_name, read_manifest
from ..process import resolve
from ._report import Check

__all__ = ["check_manifest"]

_MANIFEST_MAX = 1_000_000
"""The manifest reader's bound (a manifest is a few hundred bytes)."""
_KEYS = tuple(field.encode_name for field in msgspec.structs.fields(Manifest))
_ENTRY_KEYS = tuple(field.encode_name for field in msgspec.structs.fields(Entry))
_MCP_KEYS = tuple(field.encode_name for field in msgspec.structs.fields(McpServer))
_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\{[^}]*\}")
"""What looks like a variable: `$X`, `${X}`, `${X` (bingo expands only `${PLUGIN_ROOT}`)."""


def _check(id: str, title: str, problem: str | tuple[str, str] | None = None, *, ok: str = "", fix: str = "") -> Check:
    if problem is None:
        return Check(id=id, group="manifest", status="pass", title=title, detail=ok)
    if isinstance(problem, tuple):
        problem, fix = problem
    return Check(id=id, group="manifest", status="fail", title=title, detail=problem, fix=fix)


def _unknown_words(whose: str, found: list[str], known: Sequence[str]) -> str:
    return (
        P.UNKNOWN_KEYS.said(whose=whose, has="has", s="s" if len(found) > 1 else "", keys=", ".join(found))
        + f" (its keys are {', '.join(known)})"
    )


def _read(directory: Path) -> dict[str, Json] | str:
    """`plugin.json` as a JSON object, or why it is none in the manifest reader's words."""
    path = directory / MANIFEST_FILE
    try:
        data = read_regular(path, _MANIFEST_MAX)
        if len(data) > _MANIFEST_MAX or too_deep(data):
            raise ValueError
        value: Json = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        try:
            read_manifest(directory)
        except PluginError as exc:
            return exc.message  # its hint is the check's fix: said once, after "fix:"
        return f"{path} cannot be read"
    if not is_object(value):
        return f"{path} is not a JSON object"
    return value


def _strings(entry: Mapping[str, Json], key: str = "entry") -> list[tuple[str, str]]:
    """Every string of an entry (or a stdio `mcp`) bingo expands, with where it is
    (`entry.args[0]`)."""
    found: list[tuple[str, str]] = []
    command = entry.get("command")
    if isinstance(command, str):
        found.append((f"{key}.command", command))
    args = entry.get("args")
    if is_array(args):
        found.extend((f"{key}.args[{i}]", arg) for i, arg in enumerate(args) if isinstance(arg, str))
    env = entry.get("env")
    if is_object(env):
        found.extend((f"{key}.env.{name}", value) for name, value in env.items() if isinstance(value, str))
    return found


def _plugin_root(directory: Path, strings: list[tuple[str, str]]) -> tuple[str, str] | None:
    """A variable bingo would leave as it is (it expands `${PLUGIN_ROOT}` alone, and no shell
    runs the command), or a `${PLUGIN_ROOT}/path` that is not there."""
    for where, value in strings:
        for match in _VARIABLE.finditer(value):
            if match.group(0) != PLUGIN_ROOT:
                return P.PLUGIN_ROOT_SPELLED.said(
                    where=where, written=match.group(0)
                ), P.PLUGIN_ROOT_SPELLED.fix.format()
        if value.startswith(PLUGIN_ROOT + "/"):
            rest = value[len(PLUGIN_ROOT) + 1 :].split(" ")[0]
            if rest and not (directory / rest).exists():
                return P.PLUGIN_ROOT_MISSING.said(where=where, value=value), P.PLUGIN_ROOT_MISSING.fix
    return None


def _relative(directory: Path, strings: list[tuple[str, str]]) -> tuple[str, str] | None:
    """An argument or env value naming a file of the plugin's directory relatively (which the
    process would look for in its working directory, the project)."""
    for where, value in strings:
        if where.endswith(".command") or not value or value.startswith(("/", "$", "-")) or "=" in value:
            continue
        rest = value.removeprefix("./")
        try:
            # Wherever the project's own file of that name would be, it is not the plugin's.
            inside = bool(rest) and (directory / rest).is_file()
        except (OSError, ValueError):
            continue
        if inside:
            return P.RELATIVE_ARG.said(where=where, value=value), P.RELATIVE_ARG.fix.format(rest=rest)
    return None


def check_manifest(directory: Path, *, cwd: Path, environ: Mapping[str, str]) -> tuple[list[Check], Manifest | None]:
    """The manifest checks of the plugin in `directory`, and the Manifest bingo reads from it
    (None when bingo would refuse it, or it has no entry to start)."""
    checks: list[Check] = []
    value = _read(directory)
    title = f"{MANIFEST_FILE} is a JSON object"
    if isinstance(value, str):
        checks.append(_check("manifest.file", title, value, fix="see docs/plugins.md, section 'The manifest'"))
        return checks, None
    checks.append(_check("manifest.file", title, ok=str(directory / MANIFEST_FILE)))
    name = value.get("name")
    if isinstance(name, str):
        checks.append(_check("manifest.name", "the name follows the rules", check_name(name), ok=repr(name)))
        wrong = None if name == directory.name else P.DIRECTORY_NAME.said(directory=directory.name, name=name)
        fix = P.DIRECTORY_NAME.fix if wrong else ""
        checks.append(
            _check("manifest.directory", "the directory is named as the plugin", wrong, ok=directory.name, fix=fix)
        )
    else:
        checks.append(
            _check(
                "manifest.name",
                "the name follows the rules",
                "`name` is missing or not a string",
                fix='write "name": "<the directory\'s name>"',
            )
        )
    unknown = P.unknown_keys(list(value), _KEYS)
    entry = value.get("entry")
    mcp = value.get("mcp")
    words: list[str] = []
    if unknown:
        words.append(_unknown_words("the manifest", unknown, _KEYS))
    for key, sub, known in (("entry", entry, _ENTRY_KEYS), ("mcp", mcp, _MCP_KEYS)):
        if is_object(sub):
            strays = P.unknown_keys(list(sub), known)
            if strays:
                words.append(_unknown_words(f"`{key}`", strays, known))
    checks.append(
        _check(
            "manifest.keys",
            "every key is one bingo reads",
            "; ".join(words) or None,
            ok="none unknown",
            fix=P.UNKNOWN_KEYS.fix,
        )
    )
    manifest: Manifest | None = None
    refused: tuple[str, str] | None = None
    try:
        manifest = read_manifest(directory)
    except PluginError as exc:
        refused = (exc.message, exc.hint)
    if is_object(entry):
        strings = _strings(entry)
        checks.append(_command(directory, manifest, entry, cwd=cwd, environ=environ))
        checks.append(
            _check(
                "manifest.plugin-root",
                "only ${PLUGIN_ROOT} is used, for files that are there",
                _plugin_root(directory, strings),
                ok="every use expands to a file that is there",
            )
        )
        checks.append(
            _check(
                "manifest.paths",
                "no argument names a plugin file by a relative path",
                _relative(directory, strings),
                ok="none does",
            )
        )
    elif is_object(mcp) and isinstance(mcp.get("command"), str) and mcp.get("url") is None:
        # A stdio server's command, arguments and env are expanded as an entry's are.
        strings = _strings(mcp, "mcp")
        checks.append(
            _check(
                "manifest.plugin-root",
                "only ${PLUGIN_ROOT} is used, for files that are there",
                _plugin_root(directory, strings),
                ok="every use expands to a file that is there",
            )
        )
        checks.append(
            _check(
                "manifest.paths",
                "no argument names a plugin file by a relative path",
                _relative(directory, strings),
                ok="none does",
            )
        )
    elif mcp is None:
        checks.append(
            _check(
                "manifest.command",
                "the entry's command can be run",
                "`entry` is missing (or `mcp`, for an MCP server)",
                fix='add "entry": {"command": ..., "args": [...]}',
            )
        )
    if refused is not None and all(check.status == "pass" for check in checks):
        checks.append(_check("manifest.accepted", "bingo reads the manifest", refused))
    return checks, manifest


def _command(
    directory: Path, manifest: Manifest | None, entry: Mapping[str, Json], *, cwd: Path, environ: Mapping[str, str]
) -> Check:
    title = "the entry's command can be run"
    command = entry.get("command")
    if not isinstance(command, str):
        return _check(
            "manifest.command",
            title,
            "`entry.command` is missing or not a string",
            fix='write "command": "python3" (or a path under ${PLUGIN_ROOT})',
        )
    if not command.strip():
        return _check(
            "manifest.command",
            title,
            "`entry.command` is empty",
            fix='write "command": "python3" (or a path under ${PLUGIN_ROOT})',
        )
    if "/" in command and not command.startswith(("/", PLUGIN_ROOT)):
        rest = command.removeprefix("./")
        return _check(
            "manifest.command",
            title,
            P.RELATIVE_COMMAND.said(where="entry.command", command=command),
            fix=P.RELATIVE_COMMAND.fix.format(rest=rest),
        )
    if manifest is None:
        return _check("manifest.command", title, ok=f"{command} (not looked up: bingo refuses the manifest)")
    if manifest.mcp is not None and manifest.mcp.url is not None:
        return _check("manifest.command", title, ok=f"an MCP server at {manifest.mcp.url}")
    argv, env = entry_command(manifest, directory, environ)
    try:
        found = resolve(argv, env, cwd)
    except OSError as exc:
        why = "not found on PATH" if os.sep not in argv[0] else (exc.strerror or str(exc))
        return _check(
            "manifest.command",
            title,
            P.COMMAND_NOT_FOUND.said(command=command, why=why),
            fix=P.COMMAND_NOT_FOUND.fix.format(),
        )
    if os.sep in argv[0] and not os.access(found, os.X_OK):
        return _check(
            "manifest.command",
            title,
            P.COMMAND_NOT_FOUND.said(command=command, why="it is not executable"),
            fix="chmod +x it, or run it through its interpreter",
        )
    return _check("manifest.command", title, ok=found)
