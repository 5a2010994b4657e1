"""Discovery: which plugins are installed, in which layer, and how to start one.

Owns the two install layers (`<home>/plugins/<name>/`, yours in every project, and
`<project>/.bingo/plugins/<name>/`, the repository's, which wins the name), the record of
what was found (`PluginSource`, with the reason when a plugin is refused), and the expansion
of a manifest's entry into an argv and an environment. It does not start processes, trust
project plugins or say notices: a refused plugin is a value with a `problem`, and the host
decides what to say about it.

A project's `.mcp.json` (`{"mcpServers": {name: server}}`, the file other agent hosts read)
adds project-layer plugins named by its keys, each an MCP server (INTERFACE.md §6); a
`.bingo/plugins/` directory of the same name wins it. Whether they run is trust's to say,
as for any project plugin: the file is one of the project's trust items. Its `${VAR}` are
expanded here, only those the person's `mcpVariables` list (`_expand.py`, ADR-0028): a server
that reads another is a refused source saying which and where to list it.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Literal

import msgspec

from ..kernel.errors import PluginError
from ..kernel.settings import layer_problem
from ..wire import Json, is_object
from ._expand import expand_server
from ._jsonfile import Unreadable, read_json
from .manifest import PLUGIN_ROOT, Manifest, McpServer, check_name, mcp_manifest, mcp_problem, read_manifest

__all__ = ["MCP_JSON", "Layer", "PluginSource", "discover", "entry_command", "misspelled", "read_mcp_json", "workdir"]

MCP_JSON = ".mcp.json"
"""The MCP server list other agent hosts read, at the project's root."""
_MCP_JSON_MAX = 1_000_000
"""A `.mcp.json` larger than this declares nothing (a few servers are a few hundred bytes)."""

Layer = Literal["user", "project"]


class PluginSource(msgspec.Struct, frozen=True):
    """One installed plugin. `name` is its directory's name; `root` is that directory,
    absolute; `base` is what its layer belongs to (the project's root, or the user layer),
    which trust's fingerprint treats as inside. When the plugin is refused, `manifest` is
    None and `problem` says why, in one line. `overrides` is the user plugin of the same name
    a project plugin would hide, if any: it runs instead while the project is untrusted."""

    name: str
    layer: Layer
    root: Path
    manifest: Manifest | None
    problem: str | None
    base: Path
    overrides: PluginSource | None = None
    declared_in: Path | None = None
    """The `.mcp.json` that declares this plugin, if that is where it comes from: its trust
    is that file's, and its directory (`root`) is the project's."""
    package: str | None = None
    """The package `bingo plugin add` installed that declares this MCP server (ADR-0048): its
    data directory is the package's (`${CLAUDE_PLUGIN_DATA}`), shared by the package's servers."""


def workdir(source: PluginSource, cwd: Path) -> Path:
    """Where a plugin's process runs: a server a project's `.mcp.json` declares runs in the
    project's root (what its `.` and relative paths were written against, as the other hosts
    that read the file are started there), wherever in the project bingo was started; every
    other plugin runs in bingo's working directory, `cwd`."""
    return source.root if source.declared_in is not None else cwd


def _same_directory(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _plugin_dirs(plugins: Path) -> list[Path]:
    """The candidate plugin directories of one layer: directories, not hidden ones."""
    try:
        entries = list(plugins.iterdir())
    except OSError:
        # A layer that does not exist, or cannot be listed, holds no plugins.
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_dir():
                found.append(entry)
        except OSError:
            continue
    return found


def _source(directory: Path, layer: Layer, base: Path, overrides: PluginSource | None = None) -> PluginSource:
    root = directory.absolute()
    try:
        manifest, problem = read_manifest(root), None
    except PluginError as exc:
        manifest, problem = None, exc.line()
    return PluginSource(
        name=directory.name,
        layer=layer,
        root=root,
        manifest=manifest,
        problem=problem,
        base=base.absolute(),
        overrides=overrides,
    )


def discover(
    *, home: Path, project: Path, environ: Mapping[str, str] | None = None, variables: Collection[str] = ()
) -> list[PluginSource]:
    """Every plugin of both layers, sorted by name; of two with one name, the project's
    (whether it may run is trust's to say: `trust.admitted`).

    `home` is the user layer (`$BINGO_HOME`, or `~/.bingo`), whose plugins are in
    `home/plugins/`; the project's are in `project/.bingo/plugins/`, unless that `.bingo/`
    is one `layer_problem` refuses. When both are the same directory (the project's `.bingo`
    is the user layer), each plugin is listed once, as the user's. A project plugin that
    hides a user one carries it in `overrides`. A `.mcp.json` server's `${VAR}` are expanded
    from `environ`, only for the `variables` the person's own settings list.
    """
    user_dir = home / "plugins"
    project_dir = project / ".bingo" / "plugins"
    found: dict[str, PluginSource] = {}
    for directory in _plugin_dirs(user_dir):
        for source in _sources(directory, "user", home, home):
            found[source.name] = _one_name(found.get(source.name), source)
    if not _same_directory(user_dir, project_dir) and layer_problem(project) is None:
        for source in _mcp_json(project, found, environ or {}, variables, home / "settings.json"):
            found[source.name] = source
        for directory in _plugin_dirs(project_dir):
            for source in _sources(directory, "project", project, home, found):
                found[source.name] = _one_name(found.get(source.name), source)
    return [found[name] for name in sorted(found)]


def _sources(
    directory: Path, layer: Layer, base: Path, home: Path, found: Mapping[str, PluginSource] | None = None
) -> list[PluginSource]:
    """The plugins one directory of a layer makes: itself, or, for a package `bingo plugin
    add` installed in Claude Code's or Agent Plugins' format, one MCP server per source named
    by its key (ADR-0048); a package whose bytes are not as pinned is one refused source."""
    from ._package import pin_problem, read_package

    def overrides(name: str) -> PluginSource | None:
        return _user(found.get(name)) if found is not None else None

    root = directory.absolute()
    pinned = pin_problem(directory)
    if pinned is not None:
        return [PluginSource(directory.name, layer, root, None, pinned, base.absolute(), overrides(directory.name))]
    source = _source(directory, layer, base, overrides(directory.name))
    if source.manifest is not None or not (
        (directory / ".claude-plugin" / "plugin.json").is_file() or (directory / "plugin.json").is_file()
    ):
        return [source]
    package = read_package(root, home / "data" / "plugins" / directory.name)
    if isinstance(package, str) or package.kind == "bingo":
        return [source]
    data = str(home / "data" / "plugins" / directory.name)
    # Its four names in its environment too, as a package's hooks have them (its own env wins).
    given = {"CLAUDE_PLUGIN_ROOT": str(root), "PLUGIN_ROOT": str(root), "CLAUDE_PLUGIN_DATA": data, "PLUGIN_DATA": data}
    made: list[PluginSource] = []
    for name, server in package.servers:
        problem = check_name(name) or mcp_problem(server, f"{directory.name}: mcpServers.{name}")
        if server.url is None:
            server = msgspec.structs.replace(server, env={**given, **server.env})
        manifest = None if problem is not None else mcp_manifest(name, server, version=package.version)
        made.append(
            PluginSource(name, layer, root, manifest, problem, base.absolute(), overrides(name), package=directory.name)
        )
    return made


def _one_name(before: PluginSource | None, source: PluginSource) -> PluginSource:
    """`source`, or, when a plugin of its layer already has its name (a package's MCP server
    named as another plugin), `source` refused saying so: never one silently hiding the other.
    A project's `.mcp.json` server is hidden by its `.bingo/plugins/` directory, as documented."""
    if before is None or before.layer != source.layer or before.declared_in is not None:
        return source
    return msgspec.structs.replace(
        source,
        manifest=None,
        problem=f"two plugins are named {source.name} ({before.root} and {source.root}): remove one with bingo plugin remove",
    )


def _user(source: PluginSource | None) -> PluginSource | None:
    """The user plugin `source` is or hides (a `.mcp.json` server hides one too)."""
    if source is None or source.layer == "user":
        return source
    return source.overrides


_MCP_SERVER_KEYS = tuple(McpServer.__struct_fields__)
"""The keys of an `.mcp.json` server bingo reads."""


def misspelled(server: Json) -> str:
    """` (it has key comand: did you mean command?)` for a server's keys bingo does not read
    that are close to one it does, else ''."""
    import difflib

    if not is_object(server):
        return ""
    for key in server:
        if key not in _MCP_SERVER_KEYS:
            close = difflib.get_close_matches(key, _MCP_SERVER_KEYS, n=1, cutoff=0.6)
            if close:
                return f" (it has key {key!r}: did you mean {close[0]!r}?)"
    return ""


def read_mcp_json(path: Path) -> dict[str, Json] | str | None:
    """The `mcpServers` object of the `.mcp.json` at `path`, None when there is no such
    file, or why it cannot be read as one (one line, with what to do)."""
    value = read_json(path, _MCP_JSON_MAX)
    if isinstance(value, Unreadable):
        return None if value.missing else value.advice()
    servers = value.get("mcpServers") if is_object(value) else None
    if not is_object(servers):
        return 'has no "mcpServers" object: write {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}'
    return servers


def _mcp_json(
    project: Path,
    found: Mapping[str, PluginSource],
    environ: Mapping[str, str],
    variables: Collection[str],
    settings: Path,
) -> list[PluginSource]:
    """The servers `<project>/.mcp.json` declares, as project plugins, their `${VAR}` expanded
    from `environ` when `variables` lists them all; a file that cannot be read as one is a
    single refused source named after it, saying why."""
    path = project / MCP_JSON
    base = project.absolute()
    servers = read_mcp_json(path)
    if servers is None:
        return []
    if isinstance(servers, str):
        return [
            PluginSource(
                name=MCP_JSON,
                layer="project",
                root=base,
                manifest=None,
                problem=f"{path}: {servers}",
                base=base,
                declared_in=path,
            )
        ]
    sources: list[PluginSource] = []
    for name in sorted(servers):
        where = f"mcpServers.{name}"
        problem = check_name(name)
        manifest: Manifest | None = None
        if problem is None:
            try:
                server = msgspec.convert(servers[name], McpServer)
            except msgspec.ValidationError as exc:
                problem = f"`{where}`: {exc}"
            else:
                expanded = expand_server(server, environ, variables, settings=str(settings))
                if isinstance(expanded, str):
                    problem = f"`{where}`: {expanded}"
                else:
                    problem = mcp_problem(expanded, where, mcp_json=True)
                    if problem is None:
                        manifest = mcp_manifest(name, expanded)
                    else:
                        problem += misspelled(servers[name])
        else:
            problem = f"`{where}`: {problem} (rename the key)"
        sources.append(
            PluginSource(
                name=name,
                layer="project",
                root=base,
                manifest=manifest,
                problem=None if manifest is not None else f"{path}: {problem}",
                base=base,
                overrides=_user(found.get(name)),
                declared_in=path,
            )
        )
    return sources


def _expand(text: str, root: str) -> str:
    return text.replace(PLUGIN_ROOT, root)


def entry_command(manifest: Manifest, root: Path, environ: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The argv and the environment to start a plugin with.

    `${PLUGIN_ROOT}` becomes the absolute `root` in the command, every argument and every
    env value; nothing else is expanded. `entry.env` is added to `environ` (a key it names
    is replaced, every other one, PATH included, is kept). A bare command is left for the
    exec to look up on PATH.
    """
    absolute = os.path.abspath(root)
    entry = manifest.entry
    argv = [_expand(entry.command, absolute), *(_expand(arg, absolute) for arg in entry.args)]
    env = dict(environ)
    env.update({key: _expand(value, absolute) for key, value in entry.env.items()})
    return argv, env
