"""A plugin or MCP server whose command cannot be run is one notice naming the command and
what to do, never an errno's bare words ("[Errno 2] No such file or directory: 'x'"); one that
dies at its start because an argument names its own file relatively says so, with the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback


def _plugin(box: Sandbox, command: str) -> None:
    root = box.bingo_home / "plugins" / "tool"
    root.mkdir(parents=True)
    (root / "plugin.json").write_text(
        json.dumps({"name": "tool", "version": "1", "entry": {"command": command}}), encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "no-such-program-anywhere",
            "its command 'no-such-program-anywhere' is not on PATH: install it, or write the program's absolute path as the command",
        ),
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
    (box.project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"files": {"command": "no-such-mcp-server"}}}), encoding="utf-8"
    )
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "/tools")
    assert result.returncode == 0, result.stderr
    assert (
        "files: stopped: could not be started: its command 'no-such-mcp-server' is not on PATH: install it"
        in result.stderr
    )


def test_a_plugin_that_dies_at_start_over_a_relative_argument_is_told_the_fix(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "mistakes" / "relative-args")
    result = box.run("-p", "/plugins")
    [notice] = [line for line in result.stderr.splitlines() if line.startswith("relative-args: stopped: ")]
    assert (
        "exited with code 2: `entry.args[0]` 'main.py' names a file of the plugin's directory by a relative path, "
        "which the process reads from the project's directory (its working directory): write ${PLUGIN_ROOT}/main.py; "
        "its last stderr line: "
    ) in notice, notice
    # A project that has a main.py of its own runs that one: the fault is then not said to be this.
    (box.project / "main.py").write_text("import sys; sys.exit(3)\n", encoding="utf-8")
    again = box.run("-p", "/plugins")
    assert "relative-args: stopped: plugin relative-args exited with code 3" in again.stderr
    assert "relative path" not in again.stderr
