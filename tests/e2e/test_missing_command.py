"""A plugin or MCP server whose command cannot be run is one notice naming the command and
what to do, never an errno's bare words ("[Errno 2] No such file or directory: 'x'")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e._bingo import Sandbox, no_traceback


def _plugin(box: Sandbox, command: str) -> None:
    root = box.bingo_home / "plugins" / "tool"
    root.mkdir(parents=True)
    (root / "plugin.json").write_text(json.dumps({"name": "tool", "version": "1", "entry": {"command": command}}), encoding="utf-8")


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("no-such-program-anywhere", "its command 'no-such-program-anywhere' is not on PATH: install it, or write the program's absolute path as the command"),
        ("/nonexistent/bin/server", "its command '/nonexistent/bin/server' does not exist: correct the command's path"),
    ],
)
def test_a_command_that_is_not_there_is_one_notice_saying_what_to_do(tmp_path: Path, command: str, said: str) -> None:
    box = Sandbox(tmp_path)
    _plugin(box, command)
    result = box.run("-p", "/plugins")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [f"tool: stopped: could not be started: {said}"]
    assert no_traceback(result)


def test_a_command_that_is_not_executable_says_to_make_it_so(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o644)
    _plugin(box, str(script))
    result = box.run("-p", "/plugins")
    assert result.stderr.splitlines() == [
        f"tool: stopped: could not be started: its command '{script}' cannot be run (permission denied): "
        "make it executable (chmod +x), or name its interpreter as the command"
    ]


def test_an_mcp_json_server_whose_command_is_missing_says_the_same(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / ".mcp.json").write_text(json.dumps({"mcpServers": {"files": {"command": "no-such-mcp-server"}}}), encoding="utf-8")
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "/tools")
    assert result.returncode == 0, result.stderr
    assert "files: stopped: could not be started: its command 'no-such-mcp-server' is not on PATH: install it" in result.stderr
