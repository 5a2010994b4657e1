"""What a project brings that trust is about: its items, each with a digest (ADR-0016, ADR-0028).

Owns reading a project into `Item`s: each project plugin by its fingerprint (`fingerprint.py`),
each of the two settings files by its bytes (it matters only when it gives more than what
tightens), and `.mcp.json` by its bytes and the code its servers run, with one line per server
(its command line or URL as written, and every `${VAR}` it reads) for the question. It also
owns each item's bounded list of paths with short digests, which says which file changed. It
does not read or write the record, nor decide anything (`trust.py` does both).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import msgspec

from ..kernel.files import read_regular
from ..kernel.settings import PROJECT_SETTINGS, Settings
from ..wire import Json, is_object
from ._expand import MCP_VARIABLES, variables_read
from .discovery import PluginSource
from .fingerprint import fingerprint
from .manifest import McpServer

__all__ = ["BROUGHT", "MCP_FILE", "SHORT", "Item", "ItemKind", "changed_files", "project_items"]

MCP_FILE: Final = ".mcp.json"
"""The MCP server list other agent hosts read, at the project's root."""
_MCP_MAX_BYTES: Final = 1_000_000
"""A `.mcp.json` larger than this is not read for its server names (it is still hashed)."""
_SHOWN_SERVERS: Final = 20
"""Servers of a `.mcp.json` described one by one in the question; the rest are counted."""
_SHOWN_CHARS: Final = 300
"""Characters of one server's line in the question (a command line is cut past it)."""
_FILES_KEPT: Final = 256
"""Paths the record keeps per item, each with a short digest, to say which file changed
(ADR-0033); an item with more is kept by directory (three levels, then two, then one), and
past that by its digest alone."""
_PATH_KEPT: Final = 512
"""Characters of a path the record keeps; a longer one is not kept (its change names the item)."""
SHORT: Final = 16
"""Hex digits of a settings file's or `.mcp.json`'s short digest in the item's `files`."""
ItemKind = Literal["plugin", "settings", "mcp", "bring"]
BROUGHT: Final = (
    ".bingo/skills",
    ".agents/skills",
    ".claude/skills",
    ".bingo/commands",
    ".claude/commands",
    ".bingo/agents",
    ".claude/agents",
)
"""The project's directories of skills, markdown commands (INTERFACE.md section 11) and
agents (section 15): what they hold goes before the model and can be run by it, so it is
pinned like a plugin."""
_BROUGHT_FILES: Final = 4_000
_BROUGHT_BYTES: Final = 64_000_000
"""Files and bytes of those directories hashed at most; past either, the item has no
digest and is never trusted (nothing is trusted by size or time)."""


class Item(msgspec.Struct, frozen=True):
    """One thing a project brings. `key` is its name in the record (`plugin:<name>`,
    `settings.json`, `settings.local.json`, `.mcp.json`); `label` is how a person is told of
    it; `digest` None means it cannot be trusted (`problem` says why); `matters` is whether
    trust changes anything about it (settings that only tighten do not need trust)."""

    key: str
    kind: ItemKind
    label: str
    digest: str | None
    matters: bool
    problem: str | None = None
    outside: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    """Lines that say what it does, shown under its label (`.mcp.json`: each server's
    command line or URL and the variables it reads)."""
    files: tuple[tuple[str, str], ...] = ()
    """Each path it is made of, relative to the project (`.bingo/plugins/p/main.py`,
    `srv/helper.py`, `.mcp.json`), with a short digest: what says which file changed. Bounded
    (`_bounded`); it decides nothing, `digest` does."""


def _bytes_digest(path: Path) -> tuple[bytes | None, str | None, str | None]:
    """The file's bytes, their digest, and why it has none; (None, None, None) if absent."""
    try:
        data = read_regular(path, _BROUGHT_BYTES)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, f"{path} cannot be read ({exc.strerror or exc})"
    if len(data) > _BROUGHT_BYTES:
        return None, None, f"{path} is larger than {_BROUGHT_BYTES // 1_000_000} MB"
    return data, hashlib.sha256(data).hexdigest(), None


def _mcp_servers(data: bytes) -> list[str]:
    """The server names a `.mcp.json` holds, for the question (never trusted for more)."""
    if len(data) > _MCP_MAX_BYTES:
        return []
    try:
        value: Json = json.loads(data)
    except (ValueError, RecursionError):
        return []
    servers = value.get("mcpServers") if is_object(value) else None
    return sorted(servers) if is_object(servers) else []


def _server_lines(data: bytes, listed: frozenset[str]) -> tuple[str, ...]:
    """One line per server of a `.mcp.json`: its command line or URL as written (never
    expanded: what the person reads is what the file says) and every `${VAR}` it reads, those
    the person's `mcpVariables` do not list marked as what leaves it out."""
    if len(data) > _MCP_MAX_BYTES:
        return ()
    try:
        value: Json = json.loads(data)
    except (ValueError, RecursionError):
        return ()
    servers = value.get("mcpServers") if is_object(value) else None
    if not is_object(servers):
        return ()
    lines: list[str] = []
    for name in sorted(servers)[:_SHOWN_SERVERS]:
        try:
            server = msgspec.convert(servers[name], McpServer)
        except msgspec.ValidationError:
            lines.append(f"{name}: (not a server bingo can read)")
            continue
        what = server.url if server.url is not None else shlex.join([server.command or "", *server.args])
        read = variables_read(server)
        if read:
            unlisted = [f"${{{v}}}" for v in read if v not in listed]
            what += "; reads " + ", ".join(f"${{{v}}}" for v in read)
            if unlisted:
                what += f" ({', '.join(unlisted)} not in your {MCP_VARIABLES}: left out until listed)"
        line = f"{name}: {what}"
        lines.append(line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1] + "…")
    if len(servers) > _SHOWN_SERVERS:
        lines.append(f"... and {len(servers) - _SHOWN_SERVERS} more servers")
    return tuple(lines)


def project_items(project: Path, cwd: Path, sources: Sequence[PluginSource], settings: Settings) -> list[Item]:
    items: list[Item] = []
    for source in sources:
        if source.layer != "project" or source.declared_in is not None:
            continue  # a `.mcp.json` server is that file's: its item is the file's bytes
        print_ = fingerprint(source, cwd)
        items.append(
            Item(
                key=f"plugin:{source.name}",
                kind="plugin",
                label=f"plugin {source.name}",
                digest=print_.digest,
                matters=True,
                problem=print_.problem,
                outside=print_.outside,
                files=_bounded(_shown_files(print_.files, project, source.root)),
            )
        )
    for name in PROJECT_SETTINGS:
        data, digest, problem = _bytes_digest(project / ".bingo" / name)
        if data is None and problem is None:
            continue
        keys = settings.left_out.get(name, ())
        label = f".bingo/{name}" + (f": {', '.join(keys)}" if keys else "")
        files = ((f".bingo/{name}", digest[:SHORT]),) if digest is not None else ()
        items.append(
            Item(
                key=name, kind="settings", label=label, digest=digest, matters=bool(keys), problem=problem, files=files
            )
        )
    brought = _brought_item(project)
    if brought is not None:
        items.append(brought)
    data, digest, problem = _bytes_digest(project / MCP_FILE)
    files: tuple[tuple[str, str], ...] = ()
    if digest is not None:
        # What its servers' commands and arguments name inside the project is pinned with
        # it, as a plugin's entry files are: a trusted `.mcp.json` runs no changed script.
        files = ((MCP_FILE, digest[:SHORT]),)
        digest, problem, outside, code = _with_entries(digest, [s for s in sources if s.declared_in is not None], cwd)
        files = _bounded(files + _shown_files(code, project, project))
    else:
        outside = ()
    if data is not None or problem is not None:
        servers = _mcp_servers(data or b"")
        label = MCP_FILE + (f": servers {', '.join(servers)}" if servers else "")
        details = _server_lines(data or b"", settings.mcp_variables)
        items.append(
            Item(
                key=MCP_FILE,
                kind="mcp",
                label=label,
                digest=digest,
                matters=True,
                problem=problem,
                outside=outside,
                details=details,
                files=files,
            )
        )
    return items


def _brought_item(project: Path) -> Item | None:
    """The project's skills and markdown commands as one item: every file below `BROUGHT`'s
    directories (links followed, their targets hashed; a link out of the project is named),
    by its path, bytes and executable bit; None when none of the directories is there."""
    if project.resolve() == Path.home().resolve():
        return None  # bingo started in the home directory: `~/.claude/skills` is the person's own
    whole = hashlib.sha256()
    files: list[tuple[str, str]] = []
    outside: list[str] = []
    present: list[str] = []
    count = size = 0
    for name in BROUGHT:
        top = project / name
        if not top.is_dir():
            continue
        present.append(name)
        for root, dirs, names in os.walk(top, followlinks=True):
            dirs.sort()
            for leaf in sorted(names):
                path = Path(root) / leaf
                rel = path.relative_to(project).as_posix()
                real = path.resolve()
                if not real.is_relative_to(project.resolve()):
                    outside.append(rel)
                count += 1
                try:
                    data = read_regular(real, _BROUGHT_BYTES)
                    mode = real.stat().st_mode
                except OSError as exc:
                    return Item(
                        "bring",
                        "bring",
                        _brought_label(present),
                        None,
                        True,
                        f"{rel} cannot be read ({exc.strerror or exc})",
                    )
                size += len(data)
                if count > _BROUGHT_FILES or size > _BROUGHT_BYTES:
                    problem = f"over {_BROUGHT_FILES} files or {_BROUGHT_BYTES // 1_000_000} MB"
                    return Item("bring", "bring", _brought_label(present), None, True, problem)
                digest = hashlib.sha256(data).hexdigest()
                executable = "x" if mode & 0o111 else "-"
                whole.update(f"{rel}\0{executable}{digest}\n".encode())
                files.append((rel, (digest + executable)[:SHORT]))
    if not present:
        return None
    return Item(
        "bring",
        "bring",
        _brought_label(present),
        whole.hexdigest(),
        True,
        outside=tuple(outside),
        files=_bounded(files),
    )


def _brought_label(present: Sequence[str]) -> str:
    agents = any(name.endswith("/agents") for name in present)
    return ("skills, commands and agents in " if agents else "skills and commands in ") + ", ".join(present)


def _with_entries(
    digest: str, servers: Sequence[PluginSource], cwd: Path
) -> tuple[str | None, str | None, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """`.mcp.json`'s digest with the files each of its `servers` names folded in (their
    fingerprints), why it has none, the links that lead out of the project, and the files
    (their walk's labels, `Fingerprint.files`) that pinned."""
    whole = hashlib.sha256(digest.encode())
    outside: list[str] = []
    code: dict[str, str] = {}
    for server in sorted(servers, key=lambda s: s.name):
        if server.manifest is None:
            continue
        print_ = fingerprint(server, cwd)
        if print_.digest is None:
            return None, f"server {server.name}: {print_.problem}", tuple(outside), ()
        outside += print_.outside
        code.update(print_.files)
        whole.update(f"\n{server.name}:{print_.digest}".encode())
    return whole.hexdigest(), None, tuple(outside), tuple(sorted(code.items()))


def _shown_files(files: Sequence[tuple[str, str]], project: Path, root: Path) -> tuple[tuple[str, str], ...]:
    """A walk's labels (`Fingerprint.files`: `./x` under the plugin's `root`, `entry:p` for
    a path relative to the project, or absolute) as paths a person reads, relative to the
    project where they lie in it."""
    try:
        base = os.path.relpath(root, project)
    except ValueError:
        base = str(root)
    shown: list[tuple[str, str]] = []
    for label, short in files:
        if label.startswith("entry:"):
            path = os.path.normpath(label.removeprefix("entry:"))
        elif label == ".":
            path = base
        else:
            path = os.path.normpath(os.path.join(base, label.removeprefix("./")))
        # A name that is not UTF-8 (held by Python as surrogates) is kept with its bytes as
        # `\xff`: the record is JSON, which has no way to say them.
        shown.append((path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"), short))
    return tuple(shown)


def _bounded(files: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """At most `_FILES_KEPT` paths: past it, what lies below the third level of directories
    (counted from the directory all the paths share: a plugin's own) is kept as one entry per
    directory there (then the second, the first), and past that nothing: the item is then
    named whole when it changes."""
    files = [(path, short) for path, short in files if len(path) <= _PATH_KEPT]
    if len(files) <= _FILES_KEPT:
        return tuple(files)
    try:
        common = os.path.commonpath([path for path, _ in files])
    except ValueError:  # absolute and relative paths both: no common directory
        common = ""
    below = len(common.split("/")) if common else 0
    for depth in (3, 2, 1):
        grouped: dict[str, list[str]] = {}
        for path, short in files:
            grouped.setdefault("/".join(path.split("/")[: below + depth]), []).append(f"{path}\0{short}")
        if len(grouped) <= _FILES_KEPT:
            return tuple(
                (path, hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:SHORT])
                for path, parts in sorted(grouped.items())
            )
    return ()


def changed_files(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The paths that differ between two of an item's `files` (changed, new or gone); a
    directory is left out when a path below it is named."""
    differ = sorted(path for path in {*before, *now} if before.get(path) != now.get(path))
    return [path for path in differ if not any(other.startswith(path + "/") for other in differ)]
