"""Unknown settings keys, through the real binary: each is named once on stderr with the
closest known key, in every layer, and a trusted project (whose settings are read twice)
still names each once. A typo in a deny rule's key must not pass in silence."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import text, use_scripted_model


def _unknown(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": unknown key " in line]


def test_a_typo_in_the_users_settings_is_named_with_the_key_meant(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[text("done")]], permissions={"dney": ["read"]}, deadlines={"tool/cal": 3})
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    where = box.bingo_home / "settings.json"
    assert _unknown(result.stderr) == [
        f"bingo: {where}: unknown key permissions.dney (did you mean permissions.deny?)",
        f"bingo: {where}: unknown key deadlines.tool/cal (did you mean deadlines.tool/call?)",
    ]


def test_a_trusted_projects_typo_is_named_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[text("done")]])
    box.settings({"permisions": {"allow": ["read"]}, "model": "scripted"}, layer="project")
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    [line] = _unknown(result.stderr)
    assert line.endswith(".bingo/settings.json: unknown key permisions (did you mean permissions?)")


def test_an_mcp_servers_sampling_setting_that_is_not_a_boolean_is_named_not_ignored(tmp_path: Path) -> None:
    import json

    box = Sandbox(tmp_path)
    server = box.bingo_home / "plugins" / "srv"
    server.mkdir(parents=True)
    # A stdio MCP server that never answers: the setting is read as its connection is made.
    (server / "plugin.json").write_text(
        json.dumps(
            {
                "name": "srv",
                "version": "0",
                "mcp": {"command": "python3", "args": ["-c", "import sys; sys.stdin.read()"]},
            }
        ),
        encoding="utf-8",
    )
    box.settings({"plugins": {"srv": {"sampling": "yes"}}, "deadlines": {"initialize": 1}})
    result = box.run("-p", "/help")
    assert result.returncode == 0, result.stderr
    assert (
        'srv: plugins.srv.sampling is "yes", not true or false, so sampling stays off: write "sampling": true to let this server use the model'
        in result.stderr.splitlines()
    )
    box.settings({"plugins": {"srv": {"sampling": False}}, "deadlines": {"initialize": 1}})
    assert "plugins.srv.sampling" not in box.run("-p", "/help").stderr
