"""Plugin packages installed by `bingo plugin add` (INTERFACE.md §12; ADR-0048): reading the
three formats, and the record that pins each installed package to a content hash.

A package is a bingo plugin (root `plugin.json` with `entry` or `mcp`), a Claude Code plugin
(`.claude-plugin/plugin.json`, with `skills/`, `commands/`, `agents/`, `hooks/hooks.json` and
`.mcp.json` or `mcpServers`) or an Agent Plugins package (a root `plugin.json` without
`entry`/`mcp`, `skills/`, `mcp.json`). `read_package` says what one brings, each part by
kind, with `${PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_ROOT}`, `${PLUGIN_DATA}` and
`${CLAUDE_PLUGIN_DATA}` expanded; a part that cannot be read is a line in `problems` (the
rest is read). The record (`<layer>/plugins/.packages.json`, a dot-file discovery skips) holds
each package's source and the digest `fingerprint` gave its directory at `add`; `pin_problem`
says when the bytes are no longer those. It fetches and installs nothing (`bingo.packages`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Literal, cast

import msgspec

from ..kernel.settings import COMMAND_HOOK_EVENTS
from ..wire import Json, is_object
from ._jsonfile import Unreadable, read_json
from .manifest import McpServer, check_name

__all__ = [
    "RECORD",
    "as_array",
    "as_object",
    "Installed",
    "Package",
    "digest_of",
    "files_of",
    "package_parts",
    "pin_problem",
    "read_package",
    "read_record",
    "write_record",
]

RECORD: Final = ".packages.json"
"""The record of what `bingo plugin add` installed, in a layer's `plugins/` directory."""
_JSON_MAX: Final = 1_000_000
"""A package's JSON file larger than this is refused (a manifest is a few hundred bytes)."""
_PARTS_MAX: Final = 500
"""Parts of one kind listed per package: past it, the rest are counted, not named."""

Kind = Literal["bingo", "claude", "agent"]


class Hooked(msgspec.Struct, frozen=True):
    """One command hook a package brings: its event, matcher and command (expanded)."""

    event: str
    matcher: str
    command: str
    timeout: float | None = None


class Package(msgspec.Struct, frozen=True):
    """What a package brings, read from its directory."""

    name: str
    version: str
    kind: Kind
    description: str = ""
    skills: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    hooks: tuple[Hooked, ...] = ()
    servers: tuple[tuple[str, McpServer], ...] = ()
    entry: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    """What is loaded but will likely fail, said before it is installed (a server's path
    relative to where bingo runs that names a file of the package)."""


class Installed(msgspec.Struct, frozen=True):
    """One package as `add` installed it: where from, what it was, and its pinned digest."""

    source: str
    version: str
    kind: str
    digest: str
    ref: str | None = None
    commit: str | None = None


def as_object(value: Json) -> dict[str, Json] | None:
    return value if is_object(value) else None


def as_array(value: Json) -> list[Json] | None:
    return cast("list[Json]", value) if isinstance(value, list) else None


def _read(path: Path) -> Json | Unreadable:
    return read_json(path, _JSON_MAX)


def expand(text: str, root: Path, data: Path) -> str:
    """`text` with the package's four variables replaced by its directory and data directory."""
    for name, value in (
        ("${CLAUDE_PLUGIN_ROOT}", root),
        ("${PLUGIN_ROOT}", root),
        ("${CLAUDE_PLUGIN_DATA}", data),
        ("${PLUGIN_DATA}", data),
    ):
        text = text.replace(name, str(value))
    return text


def _names(directory: Path, *, skills: bool = False) -> tuple[str, ...]:
    """The skills (directories holding SKILL.md) or markdown files (`sub/NAME.md` is
    `sub:NAME`) under `directory`, sorted."""
    found: list[str] = []
    if not directory.is_dir():
        return ()
    if skills:
        for entry in sorted(directory.iterdir()):
            if (entry / "SKILL.md").is_file():
                found.append(entry.name)
        return tuple(found[:_PARTS_MAX])
    for path in sorted(directory.rglob("*.md")):
        rel = path.relative_to(directory).with_suffix("")
        found.append(":".join(rel.parts))
    return tuple(found[:_PARTS_MAX])


def _servers(value: Json, root: Path, data: Path, where: str, problems: list[str]) -> list[tuple[str, McpServer]]:
    servers = as_object(value)
    if servers is None:
        problems.append(f"{where}: mcpServers is not an object")
        return []
    out: list[tuple[str, McpServer]] = []
    for name in sorted(servers):
        try:
            server = msgspec.convert(servers[name], McpServer)
        except msgspec.ValidationError as exc:
            problems.append(f"{where}: mcpServers.{name}: {exc}")
            continue
        out.append(
            (
                name,
                msgspec.structs.replace(
                    server,
                    command=None if server.command is None else expand(server.command, root, data),
                    args=[expand(arg, root, data) for arg in server.args],
                    env={key: expand(text, root, data) for key, text in server.env.items()},
                    url=None if server.url is None else expand(server.url, root, data),
                    headers={key: expand(text, root, data) for key, text in server.headers.items()},
                ),
            )
        )
    return out


def _relative(servers: list[tuple[str, McpServer]], where: Path) -> list[str]:
    """For each stdio server, a word of its command line that is a relative path naming a
    file or directory of the package: a server runs where bingo runs (the project), as
    Claude Code runs it, so the path is looked for there and the server will not start."""
    out: list[str] = []
    for name, server in servers:
        for word in [server.command or "", *server.args] if server.url is None else []:
            if not word or word.startswith("-") or word in (".", "./") or Path(word).is_absolute():
                continue
            try:
                inside = (where / word).exists() and (where / word).resolve().is_relative_to(where.resolve())
            except (OSError, ValueError):
                continue
            if inside:
                out.append(
                    f"MCP server {name}: {word} is looked for in the directory bingo runs in, not in the "
                    f"package, so the server will not start there; its author meant "
                    f"${{CLAUDE_PLUGIN_ROOT}}/{word.removeprefix('./')}"
                )
                break
    return out


def _hooks(value: Json, root: Path, data: Path, where: str, problems: list[str]) -> list[Hooked]:
    document = as_object(value)
    events = as_object(document.get("hooks")) if document is not None else None
    if events is None:
        problems.append(f'{where}: has no "hooks" object')
        return []
    out: list[Hooked] = []
    for event in sorted(events):
        if event not in COMMAND_HOOK_EVENTS:
            problems.append(f"{where}: hook event {event[:40]!r} is not one bingo runs: its hooks are not run")
            continue
        for entry in as_array(events[event]) or []:
            entry_object = as_object(entry) or {}
            matcher = entry_object.get("matcher")
            for hook in as_array(entry_object.get("hooks")) or []:
                hook_object = as_object(hook) or {}
                command = hook_object.get("command")
                timeout = hook_object.get("timeout")
                if hook_object.get("type") != "command" or not isinstance(command, str):
                    problems.append(f"{where}: a {event} hook is not of type command with a command: not run")
                    continue
                out.append(
                    Hooked(
                        event,
                        matcher if isinstance(matcher, str) else "",
                        expand(command, root, data),
                        float(timeout) if isinstance(timeout, (int, float)) else None,
                    )
                )
    return out


def read_package(root: Path, data: Path, at: Path | None = None) -> Package | str:
    """What the package in directory `root` brings (`data` is its data directory, `at` where
    it will be installed, `root` by default: what the variables become), or why it is no
    package (one line)."""
    problems: list[str] = []
    where = root
    root = at or root
    claude = where / ".claude-plugin" / "plugin.json"
    own = where / "plugin.json"
    if claude.is_file():
        kind: Kind = "claude"
        manifest = _read(claude)
    elif own.is_file():
        manifest = _read(own)
        kind = "bingo" if is_object(manifest) and ("entry" in manifest or "mcp" in manifest) else "agent"
    else:
        return f"{where} holds no plugin: no plugin.json, no .claude-plugin/plugin.json"
    if isinstance(manifest, Unreadable):
        return manifest.line(claude if kind == "claude" else own)
    if not is_object(manifest):
        return f"{claude if kind == 'claude' else own} is not a JSON object"
    name = manifest.get("name")
    if not isinstance(name, str):
        return f"{claude if kind == 'claude' else own} has no name"
    problem = check_name(name)
    if problem is not None:
        return f"{claude if kind == 'claude' else own}: {problem}"
    version = manifest.get("version")
    description = manifest.get("description")
    servers: list[tuple[str, McpServer]] = []
    entry: tuple[str, ...] = ()
    hooks: list[Hooked] = []
    warnings: list[str] = []
    if kind == "bingo":
        written = as_object(manifest.get("entry")) or as_object(manifest.get("mcp")) or {}
        command = written.get("command") or written.get("url")
        args = as_array(written.get("args")) or []
        entry = tuple(expand(str(word), root, data) for word in [command or "", *args])
    else:
        declared: Json | Unreadable = manifest.get("mcpServers")
        if isinstance(declared, str):
            path = where / declared
            inside = path.resolve().is_relative_to(where.resolve())
            declared = _read(path) if inside else Unreadable("is outside the package: not read")
        elif declared is None:
            path = where / (".mcp.json" if kind == "claude" else "mcp.json")
            if not path.is_file() and (where / ".mcp.json").is_file():
                path = where / ".mcp.json"
            declared = _read(path) if path.is_file() else None
        else:
            path = where
        if is_object(declared) and "mcpServers" in declared and path != where:
            declared = declared["mcpServers"]  # a file in .mcp.json's own form
        if isinstance(declared, Unreadable):
            problems.append(declared.line(path))
        elif declared is not None:
            servers = _servers(declared, root, data, "mcpServers", problems)
            warnings = _relative(servers, where)
        hook_file = where / "hooks" / "hooks.json"
        if hook_file.is_file():
            value = _read(hook_file)
            if isinstance(value, Unreadable):
                problems.append(value.line(hook_file))
            else:
                hooks = _hooks(value, root, data, "hooks/hooks.json", problems)
    return Package(
        name=name,
        version=version if isinstance(version, str) else "",
        kind=kind,
        description=description if isinstance(description, str) else "",
        skills=_names(where / "skills", skills=True),
        commands=() if kind == "bingo" else _names(where / "commands"),
        agents=() if kind == "bingo" else _names(where / "agents"),
        hooks=tuple(hooks),
        servers=tuple(servers),
        entry=entry,
        problems=tuple(problems),
        warnings=tuple(warnings),
    )


def digest_of(root: Path) -> str | None:
    """The digest trust's `fingerprint` gives the directory `root` (every byte under it), or
    None when it cannot be pinned."""
    return _fingerprint(root)[0]


def files_of(root: Path) -> dict[str, str]:
    """Each path under `root` (`./main.py`) with a short digest of its bytes: what `update`
    compares to say which files changed (it decides nothing; the digest does)."""
    return _fingerprint(root)[1]


def _fingerprint(root: Path) -> tuple[str | None, dict[str, str]]:
    from .discovery import PluginSource
    from .fingerprint import fingerprint

    absolute = root.absolute()
    source = PluginSource(absolute.name, "user", absolute, None, None, absolute)
    printed = fingerprint(source, absolute)
    return printed.digest, dict(printed.files)


def read_record(plugins: Path) -> dict[str, Installed]:
    """The record of the layer whose plugins directory is `plugins` ({} when none or bad)."""
    value = _read(plugins / RECORD)
    if not is_object(value):
        return {}
    try:
        return msgspec.convert(value, dict[str, Installed])
    except msgspec.ValidationError:
        return {}


def write_record(plugins: Path, record: dict[str, Installed]) -> None:
    """Replace the record at once (a temporary file renamed over it)."""
    plugins.mkdir(parents=True, exist_ok=True)
    temporary = plugins / f"{RECORD}.{os.getpid()}.tmp"
    temporary.write_bytes(msgspec.json.encode(record))
    os.replace(temporary, plugins / RECORD)


_verdicts: dict[Path, tuple[str, bool]] = {}
"""What discovery found of each recorded package this start: its directory, the digest its
record pins and whether its bytes were those. `package_parts` takes it (once) rather than
hashing the package a second time in the same start (ADR-0048)."""


def pin_problem(directory: Path) -> str | None:
    """Why the installed package in `directory` may not start (its bytes are not those
    `add` pinned), or None when it was not installed by `add` or is as pinned. Each call
    hashes every byte (nothing cached across calls but the one verdict `package_parts`
    takes)."""
    installed = read_record(directory.parent).get(directory.name)
    if installed is None:
        return None
    pinned = digest_of(directory) == installed.digest
    _verdicts[directory.absolute()] = (installed.digest, pinned)
    return None if pinned else _changed(directory.name, installed)


def _changed(name: str, installed: Installed) -> str:
    return (
        f"plugin {name}'s files changed since `bingo plugin add` pinned them: not started; "
        f"run bingo plugin add {installed.source} again if you trust it as it is now"
    )


def _as_pinned(root: Path, installed: Installed) -> bool:
    """Whether the package in `root` is as pinned: the verdict discovery reached this start
    (taken, so a later start, or a later call in a long-lived process, hashes again), or a
    hash taken now when there is none."""
    verdict = _verdicts.pop(root, None)
    if verdict is not None and verdict[0] == installed.digest:
        return verdict[1]
    return digest_of(root) == installed.digest


def package_parts(home: Path, project: Path | None) -> list[tuple[Path, Package]]:
    """Each package `add` installed in the user layer (`home`) and, when `project` is given (a
    trusted project's root), the project's, whose bytes are as pinned, with what it brings
    (its variables expanded): what `bring` loads its skills, commands and hooks from. A
    package not as pinned is left out; discovery's refused source is its one notice."""
    layers = [home / "plugins"] + ([project / ".bingo" / "plugins"] if project is not None else [])
    found: list[tuple[Path, Package]] = []
    for plugins in layers:
        for name, installed in sorted(read_record(plugins).items()):
            root = (plugins / name).absolute()
            if not root.is_dir() or not _as_pinned(root, installed):
                continue
            package = read_package(root, home / "data" / "plugins" / name)
            if not isinstance(package, str) and package.kind != "bingo":
                found.append((root, package))
    return found
