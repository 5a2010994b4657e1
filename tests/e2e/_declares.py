"""The `declares` test plugin, installed under any name: it declares the hooks and commands
its settings slice names and answers each hook as told (tests/plugins/declares/main.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e._bingo import TEST_PLUGINS, Sandbox


def install_declaring(box: Sandbox, name: str) -> Path:
    """Copy `declares` into the user layer as plugin `name` (directory and manifest)."""
    target = box.install(TEST_PLUGINS / "declares", name=name)
    manifest_path = target / "plugin.json"
    manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["name"] = name
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    return target


def decided(box: Sandbox, name: str) -> list[dict[str, Any]]:
    """The `hook/decide` params plugin `name` was sent, in order."""
    path = box.bingo_home / "data" / "plugins" / name / "decided.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
