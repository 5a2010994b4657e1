"""A project's `.mcp.json` (the file other agent hosts read) is project-layer plugins under
the project's trust (INTERFACE.md §1 and §6): until trusted none of its servers starts, and
once trusted each runs as a plugin named by its key."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._mcp import python_server
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

SERVER = TEST_PLUGINS / "mcp-sdk" / "server.py"


def _mcp_json(box: Sandbox, marks: Path, **servers: Mapping[str, object]) -> None:
    box.env["MCP_SDK_MARKS"] = str(marks)
    (box.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def _sdk(marker_env: dict[str, str] | None = None) -> dict[str, object]:
    return {"command": sys.executable, "args": [str(SERVER)], "env": marker_env or {}}


def test_an_untrusted_mcp_json_starts_none_of_its_servers_and_says_so_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    _mcp_json(box, marks, calc=_sdk())
    use_scripted_model(
        box, [[tool("a1", "plugin__calc__pid", {})], [text("done")]], permissions={"allow": ["plugin__calc__*"]}
    )
    result = box.run("-p", "what is your pid?")
    assert no_traceback(result)
    project = box.project.resolve()
    lines = [line for line in result.stderr.splitlines() if line.startswith("bingo: ")]
    assert lines[0] == (
        f"bingo: {project} is not a trusted project, so bingo left out what it brings: .mcp.json: servers calc; "
        f"run bingo --trust in {project} to trust it as it is now"
    )
    [refused] = tool_results(model_requests(box)[1])
    assert refused["isError"] is True  # no such tool: the server never started
    listing = box.run("-p", "/plugins")
    assert "calc" in listing.stdout and "not started" in listing.stdout
    log = box.logs / "plugin-calc.log"
    assert not log.exists() or "shouting" not in log.read_text(encoding="utf-8")


def test_a_trusted_mcp_json_runs_each_server_as_a_plugin_named_by_its_key(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    _mcp_json(box, marks, calc=_sdk())
    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert ".mcp.json" in trusted.stdout
    use_scripted_model(
        box,
        [[tool("a1", "plugin__calc__add", {"a": 40, "b": 2})], [text("done")]],
        permissions={"allow": ["plugin__calc__*"]},
    )
    result = box.run("-p", "add")
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("bingo: ")] == []
    [added] = tool_results(model_requests(box)[1])
    assert result_text(added) == "40 + 2 = 42"
    # A change to the file is a change to what the project brings: untrusted again.
    _mcp_json(box, marks, calc=_sdk({"EXTRA": "1"}))
    again = box.run("-p", "/plugins")
    assert "changed since you trusted it (.mcp.json)" in again.stderr


def test_an_untrusted_mcp_json_server_hides_nothing_the_user_has(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    python_server(box, "mcp-sdk")  # the user's own mcp-sdk
    _mcp_json(box, marks, **{"mcp-sdk": {"command": "false"}})
    listing = box.run("-p", "/tools")
    assert "plugin__mcp-sdk__add" in listing.stdout  # the user's own runs


def test_a_bad_mcp_json_entry_is_named_and_the_others_run(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    _mcp_json(box, marks, calc=_sdk(), Bad={"command": "x"}, old={"type": "sse", "url": "http://127.0.0.1:1/sse"})
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "/tools")
    assert result.returncode == 0, result.stderr
    assert "plugin__calc__add" in result.stdout
    assert "mcpServers.Bad" in result.stderr and "rename the key" in result.stderr
    assert "sse, the transport MCP deprecated" in result.stderr


def test_a_misspelled_server_key_or_broken_mcp_json_says_what_to_fix(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    mcp_json = box.project / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"files": {"comand": "npx", "args": ["-y", "x"]}}}), encoding="utf-8")
    assert box.run("--trust").returncode == 0
    typo = box.run("-p", "/help")
    assert typo.returncode == 0, typo.stderr
    assert typo.stderr.splitlines() == [
        f"files: refused: {mcp_json}: `mcpServers.files` has neither `command` (stdio) nor `url` (Streamable HTTP) (it has key 'comand': did you mean 'command'?)"
    ]
    mcp_json.write_text('{"mcpServers": {"files": {"command": "npx",}}}', encoding="utf-8")
    assert box.run("--trust").returncode == 0
    broken = box.run("-p", "/help")
    assert broken.stderr.splitlines() == [
        f".mcp.json: refused: {mcp_json}: is not JSON at line 1, column 44: Expecting property name enclosed in double quotes: fix the file"
    ]
    assert no_traceback(broken)


def test_a_script_in_the_project_that_a_trusted_mcp_json_runs_is_pinned_with_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    script = box.project / "tools" / "server.py"
    script.parent.mkdir()
    script.write_bytes(SERVER.read_bytes())
    _mcp_json(box, marks, calc={"command": sys.executable, "args": ["tools/server.py"]})
    assert box.run("--trust").returncode == 0
    assert "plugin__calc__add" in box.run("-p", "/tools").stdout
    script.write_text(script.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    changed = box.run("-p", "/tools")
    assert "plugin__calc__add" not in changed.stdout
    assert "changed since you trusted it (tools/server.py)" in changed.stderr  # the script, not .mcp.json, changed
