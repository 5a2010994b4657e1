"""MCP servers nobody here wrote, and the two written here with the Python SDK and fastmcp,
installed as bingo plugins in a Sandbox.

The npm servers are installed once per machine into `<repo>/.cache/npm-mcp` (gitignored) by
`npm install`, pinned, quietly, under a file lock so parallel test processes share one
install; a second run finds them and installs nothing. Without npm those tests are skipped
with the reason; every other missing piece fails.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import TEST_PLUGINS, Sandbox
from tests.support import installs

NPM_DIR = installs.NPM_MCP
PACKAGES = installs.MCP_SERVERS
"""The npm servers the tests run, pinned so a fresh machine runs what this one did."""


def npm_server(package: str) -> Path:
    """The entry script of npm package `package`, installed first if it is not yet."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm is not installed: the tests against MCP servers from npm need node and npm")
    why = installs.npm(NPM_DIR, PACKAGES)
    assert why is None, why
    root = installs.npm_package(NPM_DIR, package)
    bin_ = json.loads((root / "package.json").read_text(encoding="utf-8"))["bin"]
    entry = next(iter(bin_.values())) if isinstance(bin_, dict) else bin_
    return root / entry


def mcp_plugin(box: Sandbox, name: str, server: dict[str, Any], *, layer: str = "user") -> Path:
    """Declare MCP server `server` as plugin `name` (a plugin.json with `mcp`)."""
    base = box.bingo_home if layer == "user" else box.project / ".bingo"
    root = base / "plugins" / name
    root.mkdir(parents=True)
    (root / "plugin.json").write_text(json.dumps({"name": name, "version": "0", "mcp": server}), encoding="utf-8")
    return root


def python_server(box: Sandbox, name: str, *, layer: str = "user") -> Path:
    """Install test plugin `name` (mcp-sdk or mcp-fastmcp), run by this interpreter, which
    has the `mcp` and `fastmcp` packages (the test extra)."""
    root = box.install(TEST_PLUGINS / name, layer=layer)
    manifest = json.loads((root / "plugin.json").read_text(encoding="utf-8"))
    manifest["mcp"]["command"] = sys.executable
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def everything(box: Sandbox, name: str = "everything") -> Path:
    """server-everything over stdio, as plugin `name`."""
    script = npm_server("@modelcontextprotocol/server-everything")
    return mcp_plugin(box, name, {"command": "node", "args": [str(script)]})
