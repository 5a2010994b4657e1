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


def test_a_json_string_in_a_packages_file_is_a_value_not_a_reason(tmp_path: Path) -> None:
    """One reader (bridge/_jsonfile.py) for a package's files and a project's .mcp.json: a
    file holding a JSON string is read as that value, and said to be the wrong shape; it is
    never passed off as why the file could not be read (issue 26, D2)."""
    manifest = tmp_path / "stringy" / ".claude-plugin" / "plugin.json"
    _write(manifest, '"all is well, install me"')
    assert read_package(tmp_path / "stringy", tmp_path / "data") == f"{manifest} is not a JSON object"

    root = tmp_path / "kit"
    _write(root / ".claude-plugin" / "plugin.json", {"name": "kit", "mcpServers": "./servers.json"})
    _write(root / "servers.json", '"ok"')
    _write(root / "hooks" / "hooks.json", '"fine"')
    package = read_package(root, tmp_path / "data")
    assert not isinstance(package, str)
    assert package.problems == ("mcpServers: mcpServers is not an object", 'hooks/hooks.json: has no "hooks" object')


def test_the_one_reader_says_why_a_file_gives_no_value(tmp_path: Path) -> None:
    from bingo.bridge._jsonfile import Unreadable, read_json
    from bingo.bridge.discovery import read_mcp_json

    assert read_json(tmp_path / "none.json", 100) == Unreadable(
        "cannot be read (No such file or directory)", missing=True
    )
    assert read_mcp_json(tmp_path / "none.json") is None
    _write(tmp_path / "big.json", "[" + "1," * 100 + "1]")
    assert read_json(tmp_path / "big.json", 100) == Unreadable("is larger than 100 bytes")
    _write(tmp_path / "deep.json", "[" * 200 + "]" * 200)
    assert read_json(tmp_path / "deep.json", 1000) == Unreadable("is nested too deeply (more than 128 levels)")
    _write(tmp_path / "bad.json", '{"a": }')
    bad = read_json(tmp_path / "bad.json", 100)
    assert bad == Unreadable("is not JSON at line 1, column 7: Expecting value", "fix the file")
    assert read_mcp_json(tmp_path / "bad.json") == "is not JSON at line 1, column 7: Expecting value: fix the file"
    (tmp_path / "latin.json").write_bytes(b'"caf\xe9"')
    latin = read_json(tmp_path / "latin.json", 100)
    assert isinstance(latin, Unreadable) and latin.fix == "save it as UTF-8 JSON"
    _write(tmp_path / "string.json", '"is larger than 100 bytes"')
    assert read_json(tmp_path / "string.json", 100) == "is larger than 100 bytes"  # a value, not a reason
    assert read_mcp_json(tmp_path / "string.json") == (
        'has no "mcpServers" object: write {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}'
    )


def test_a_servers_relative_path_to_a_file_of_the_package_is_warned_of_before_install(tmp_path: Path) -> None:
    """A server runs where bingo runs (the project), as Claude Code runs it: `node
    dist/index.js` is looked for there, not in the package, and never starts. `add` says so,
    naming what the author meant; a path through ${CLAUDE_PLUGIN_ROOT}, a flag, `.` and a word
    naming nothing in the package are not warned of."""
    root = tmp_path / "kit"
    servers = {
        "broken": {"command": "node", "args": ["dist/index.js"]},
        "dotted": {"command": "python", "args": ["./server.py", "--repository", "."]},
        "fine": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/dist/index.js", "--flag"]},
        "runner": {"command": "uvx", "args": ["mcp-server-git"]},
    }
    _write(root / ".claude-plugin" / "plugin.json", {"name": "kit", "mcpServers": servers})
    _write(root / "dist" / "index.js", "")
    _write(root / "server.py", "")
    package = read_package(root, tmp_path / "data")
    assert not isinstance(package, str)
    assert package.warnings == (
        "MCP server broken: dist/index.js is looked for in the directory bingo runs in, not in the package, "
        "so the server will not start there; its author meant ${CLAUDE_PLUGIN_ROOT}/dist/index.js",
        "MCP server dotted: ./server.py is looked for in the directory bingo runs in, not in the package, "
        "so the server will not start there; its author meant ${CLAUDE_PLUGIN_ROOT}/server.py",
    )
    assert "  warning: MCP server broken: dist/index.js is looked for" in _show(package, "x")


def test_mcp_servers_named_by_a_path_are_read_in_mcp_json_form_and_only_inside_the_package(tmp_path: Path) -> None:
    """`"mcpServers": "./.mcp.json"` (as published plugins write it) names a file in `.mcp.json`'s
    own form, `{"mcpServers": {...}}`, or the servers object itself; a path out of the package
    is not read (its bytes are no part of what `add` shows and pins)."""
    root = tmp_path / "kit"
    _write(root / ".claude-plugin" / "plugin.json", {"name": "kit", "mcpServers": "./config/servers.json"})
    _write(root / "config" / "servers.json", {"mcpServers": {"calc": {"command": "node", "args": ["x.js"]}}})
    package = read_package(root, tmp_path / "data")
    assert not isinstance(package, str) and package.problems == ()
    assert [name for name, _ in package.servers] == ["calc"]

    _write(root / "config" / "servers.json", {"calc": {"command": "node"}})
    package = read_package(root, tmp_path / "data")
    assert not isinstance(package, str) and [name for name, _ in package.servers] == ["calc"]

    _write(tmp_path / "secret.json", {"token": {"command": "leak"}})
    _write(root / ".claude-plugin" / "plugin.json", {"name": "kit", "mcpServers": "../secret.json"})
    package = read_package(root, tmp_path / "data")
    assert not isinstance(package, str) and package.servers == ()
    assert package.problems == (f"{root / '../secret.json'} is outside the package: not read",)
