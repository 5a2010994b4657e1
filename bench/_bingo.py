"""bingo's side of the comparison: the bench child installed as a plugin and reached through
the real path: PluginHost.start (spawn, `initialize`, registration), then the registered
`plugin__bench__count` tool's `call` (the Plugin link, BridgedTool, Connection, msgspec).

It builds plugin directories (a plugin.json beside a copy of the child) and nothing else;
it does not time anything itself.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from bingo.bridge import PluginHost, PluginSource, read_manifest
from bingo.kernel.interfaces import Tool, ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings

__all__ = ["TOOL", "call_of", "install", "install_mcp", "running", "started"]

TOOL = "plugin__{name}__count"
"""The bridged name of a bench plugin's tool."""


def install(plugins: Path, name: str, child: Path, cpu: str) -> PluginSource:
    """Install the bench child as plugin `name` under `plugins/`; its source record."""
    root = plugins / name
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(child, root / "main.py")
    manifest = {
        "name": name,
        "version": "1",
        "entry": {"command": sys.executable, "args": ["${PLUGIN_ROOT}/main.py", name, cpu]},
    }
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    return PluginSource(
        name=name,
        layer="user",
        root=root.absolute(),
        manifest=read_manifest(root.absolute()),
        problem=None,
        base=root.parent.absolute(),
    )


def install_mcp(plugins: Path, name: str, server: Path, cpu: str, *, command: str = sys.executable) -> PluginSource:
    """Install MCP server script `server` as plugin `name`, run by `command` (with `cpu` as
    its argument, unless `-`): a plugin.json with `mcp` in place of `entry`; its source record."""
    root = plugins / name
    root.mkdir(parents=True, exist_ok=True)
    args = [str(server)] if cpu == "-" and command != sys.executable else [str(server), cpu]
    manifest = {"name": name, "version": "1", "mcp": {"command": command, "args": args}}
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    return PluginSource(
        name=name,
        layer="user",
        root=root.absolute(),
        manifest=read_manifest(root.absolute()),
        problem=None,
        base=root.parent.absolute(),
    )


@contextlib.asynccontextmanager
async def started(sources: Sequence[PluginSource], data_dir: Path) -> AsyncIterator[tuple[PluginHost, Registry]]:
    """A PluginHost over `sources`, entered but not started (the caller times `start`)."""
    notices = Notices()
    registry = Registry(notices)
    async with PluginHost(
        sources=sources, registry=registry, notices=notices, settings=Settings(), data_dir=data_dir, cwd=data_dir
    ) as host:
        yield host, registry


@contextlib.asynccontextmanager
async def running(source: PluginSource, data_dir: Path) -> AsyncIterator[Tool]:
    """One started bench plugin; its bridged `count` tool."""
    async with started([source], data_dir) as (host, registry):
        await host.start()
        yield registry.tools[TOOL.format(name=source.name)]


def call_of(n: int, text: str) -> ToolCall:
    """The kernel's ToolCall for the n-th call."""
    return ToolCall(f"c{n}", {"text": text}, "/", "bench", 1)
