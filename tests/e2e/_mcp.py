"""MCP servers nobody here wrote, and the two written here with the Python SDK and fastmcp,
installed as bingo plugins in a Sandbox.

The npm servers are installed once per machine into `<repo>/.cache/npm-mcp` (gitignored) by
`npm install`, pinned, quietly, under a file lock so parallel test processes share one
install; a second run finds them and installs nothing. Without npm those tests are skipped
with the reason; every other missing piece fails.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import REPO, TEST_PLUGINS, Sandbox

NPM_DIR = REPO / ".cache" / "npm-mcp"
PACKAGES = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
}
"""The npm servers the tests run, pinned so a fresh machine runs what this one did."""


def _installed(package: str, version: str) -> bool:
    manifest = NPM_DIR / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("version") == version
    except (OSError, ValueError):
        return False


def npm_server(package: str) -> Path:
    """The entry script of npm package `package`, installed first if it is not yet."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm is not installed: the tests against MCP servers from npm need node and npm")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    with (NPM_DIR / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all(_installed(name, version) for name, version in PACKAGES.items()):
            wanted = [f"{name}@{version}" for name, version in PACKAGES.items()]
            done = subprocess.run(
                [npm, "install", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund", "--no-save", "--silent", *wanted],
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"npm install failed: {done.stderr[-2000:]}"
    bin_ = json.loads((NPM_DIR / "node_modules" / package / "package.json").read_text(encoding="utf-8"))["bin"]
    entry = next(iter(bin_.values())) if isinstance(bin_, dict) else bin_
    return NPM_DIR / "node_modules" / package / entry


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
