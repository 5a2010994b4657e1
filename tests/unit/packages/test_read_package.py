"""Reading the three package formats (bridge/_package.py) and what `add` shows: each part by
kind, the four variables expanded, a malformed part named while the rest is read, foreign bytes
escaped, and two plugins of one name refused rather than one hiding the other."""

from __future__ import annotations

import json
from pathlib import Path

from bingo.bridge import discover
from bingo.bridge._package import Installed, read_package, write_record
from bingo.packages._cli import _show


def _write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")


def test_a_claude_code_plugin_is_read_part_by_part_with_its_variables_expanded(tmp_path: Path) -> None:
    root, data = tmp_path / "kit", tmp_path / "data" / "kit"
    server = {"command": "${CLAUDE_PLUGIN_ROOT}/bin/s", "args": ["--db", "${CLAUDE_PLUGIN_DATA}/db"], "env": {}}
    _write(root / ".claude-plugin" / "plugin.json", {"name": "kit", "version": "2", "mcpServers": {"s": server}})
    _write(root / "skills" / "a" / "SKILL.md", "---\nname: a\ndescription: A.\n---\nA\n")
    _write(root / "commands" / "sub" / "go.md", "Go\n")
    _write(root / "agents" / "r.md", "R\n")
    hook = {"type": "command", "command": "${PLUGIN_ROOT}/h.sh ${PLUGIN_DATA}"}
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}], "Notification": [{"hooks": [hook]}]}}
    _write(root / "hooks" / "hooks.json", hooks)
    package = read_package(root, data)
    assert not isinstance(package, str)
    assert package.kind == "claude" and package.version == "2"
    assert package.skills == ("a",) and package.commands == ("sub:go",) and package.agents == ("r",)
    [(name, mcp)] = package.servers
    assert name == "s" and mcp.command == f"{root}/bin/s" and mcp.args == ["--db", f"{data}/db"]
    [guard] = package.hooks
    assert guard.event == "PreToolUse" and guard.command == f"{root}/h.sh {data}"
    assert any("Notification" in line for line in package.problems)  # named, not run, the rest read


def test_agent_plugins_and_bingo_formats_and_what_is_no_package(tmp_path: Path) -> None:
    agent = tmp_path / "ap"
    _write(agent / "plugin.json", {"name": "ap", "version": "1"})
    _write(agent / "mcp.json", {"mcpServers": {"x": {"command": "${PLUGIN_ROOT}/x"}, "bad": {"args": 3}}})
    package = read_package(agent, tmp_path / "d")
    assert not isinstance(package, str) and package.kind == "agent"
    assert [name for name, _ in package.servers] == ["x"] and any("bad" in line for line in package.problems)
    own = tmp_path / "own"
    _write(own / "plugin.json", {"name": "own", "version": "1", "entry": {"command": "${PLUGIN_ROOT}/run"}})
    bingo = read_package(own, tmp_path / "d", tmp_path / "installed")
    assert not isinstance(bingo, str) and bingo.kind == "bingo" and bingo.entry == (f"{tmp_path}/installed/run",)
    assert "holds no plugin" in str(read_package(tmp_path / "empty", tmp_path / "d"))
    _write(tmp_path / "Bad" / "plugin.json", {"name": "Bad Name", "version": "1"})
    assert "not a plugin name" in str(read_package(tmp_path / "Bad", tmp_path / "d"))


def test_what_add_shows_is_escaped(tmp_path: Path) -> None:
    root = tmp_path / "evil"
    server = {"command": "run\x1b]0;owned\x07", "args": ["\x1b[2J"]}
    _write(
        root / ".claude-plugin" / "plugin.json",
        {"name": "evil", "description": "\x1b[31mred", "mcpServers": {"s": server}},
    )
    package = read_package(root, tmp_path / "d")
    assert not isinstance(package, str)
    shown = _show(package, "src\x1b[1m")
    assert "\x1b" not in shown and "\x07" not in shown and "MCP server s" in shown


def test_a_packages_server_named_as_another_plugin_is_refused_not_hiding_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    plugins = home / "plugins"
    _write(plugins / "calc" / "plugin.json", {"name": "calc", "version": "1", "entry": {"command": "true"}})
    kit = plugins / "zkit"
    _write(kit / ".claude-plugin" / "plugin.json", {"name": "zkit", "mcpServers": {"calc": {"command": "true"}}})
    from bingo.bridge._package import digest_of

    digest = digest_of(kit)
    assert digest is not None
    write_record(plugins, {"zkit": Installed(source="x", version="", kind="claude", digest=digest)})
    [source] = discover(home=home, project=tmp_path / "project")
    assert source.name == "calc" and source.manifest is None
    assert source.problem is not None and "two plugins are named calc" in source.problem
