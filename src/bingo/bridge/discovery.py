"""Discovery: which plugins are installed, in which layer, and how to start one.

Owns the two install layers (`<home>/plugins/<name>/`, yours in every project, and
`<project>/.bingo/plugins/<name>/`, the repository's, which wins the name), the record of
what was found (`PluginSource`, with the reason when a plugin is refused), and the expansion
of a manifest's entry into an argv and an environment. It does not start processes, trust
project plugins or say notices: a refused plugin is a value with a `problem`, and the host
decides what to say about it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from ..kernel.errors import PluginError
from .manifest import PLUGIN_ROOT, Manifest, read_manifest

__all__ = ["Layer", "PluginSource", "discover", "entry_command"]

Layer = Literal["user", "project"]


class PluginSource(msgspec.Struct, frozen=True):
    """One installed plugin. `name` is its directory's name; `root` is that directory,
    absolute. When the plugin is refused, `manifest` is None and `problem` says why, in one
    line. `overrides` is the user-layer directory a project plugin hides, if any."""

    name: str
    layer: Layer
    root: Path
    manifest: Manifest | None
    problem: str | None
    overrides: Path | None = None


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


def _source(directory: Path, layer: Layer) -> PluginSource:
    root = directory.absolute()
    try:
        manifest = read_manifest(root)
    except PluginError as exc:
        return PluginSource(
            name=directory.name, layer=layer, root=root, manifest=None, problem=exc.line()
        )
    return PluginSource(
        name=directory.name, layer=layer, root=root, manifest=manifest, problem=None
    )


def discover(*, home: Path, project: Path) -> list[PluginSource]:
    """Every plugin of both layers, sorted by name; of two with one name, the project's.

    `home` is the user layer (`$BINGO_HOME`, or `~/.bingo`), whose plugins are in
    `home/plugins/`; the project's are in `project/.bingo/plugins/`. When both are the same
    directory (the project's `.bingo` is the user layer), each plugin is listed once, as the
    user's. A project plugin that hides a user one says so in `overrides`.
    """
    user_dir = home / "plugins"
    project_dir = project / ".bingo" / "plugins"
    found: dict[str, PluginSource] = {}
    for directory in _plugin_dirs(user_dir):
        found[directory.name] = _source(directory, "user")
    if not _same_directory(user_dir, project_dir):
        for directory in _plugin_dirs(project_dir):
            source = _source(directory, "project")
            hidden = found.get(directory.name)
            if hidden is not None:
                source = PluginSource(
                    name=source.name,
                    layer=source.layer,
                    root=source.root,
                    manifest=source.manifest,
                    problem=source.problem,
                    overrides=hidden.root,
                )
            found[directory.name] = source
    return [found[name] for name in sorted(found)]


def _expand(text: str, root: str) -> str:
    return text.replace(PLUGIN_ROOT, root)


def entry_command(
    manifest: Manifest, root: Path, environ: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
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
