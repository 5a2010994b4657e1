"""Real published Claude Code plugins nobody here wrote, installed from npm by `bingo plugin
add npm:…` through the binary (INTERFACE.md §12, issue 30), by their authors on the npm
registry (a version's contents never change there; nothing of them is committed here):

- selfish-pipeline 1.3.0 (MIT): its markdown command is submitted as the prompt, and its own
  PreToolUse guard (`scripts/selfish-bash-guard.sh`, which refuses `git clean -f` while its
  pipeline is active) blocks the scripted model's bash call: the file the command would have
  removed is kept.
- claude-dev-environment-setup 1.4.0 (MIT; plugin `dev-environment-setup`): its skill
  `environment-check` is listed and read by the model through the `skill` tool, and its
  command is run by Claude Code's namespaced name `/dev-environment-setup:dev-environment-setup`
  and by its bare name (no other command has it).
- ECC 2.0.0 (MIT; npm `ecc-universal`, plugin `ecc`), unpacked once per machine and made a
  local git repository in the test, added by `file://`: its own config-protection hook blocks
  an edit, its empty `mcpServers` opts out of its `.mcp.json`, its command runs as `/ecc:NAME`.

- gemini-mcp-connect 1.0.0 (MIT, PyPI sdist; plugin `gemini-bridge`), made a local git
  repository: installed elsewhere its `python ./gemini_bridge_mcp.py` finds no file (warned
  of, said not to start); with the project being that repository, its developer's set-up (a
  virtualenv with mcp 1.x first on PATH, its `.env`), its own server starts and its
  `query_gemini` tool, called by the scripted model, reaches a stand-in Gemini API on loopback
  that the person grants it in settings."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from ._bingo import Sandbox
from ._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

PACKAGE = "selfish-pipeline@1.3.0"


def test_a_published_claude_code_plugin_from_npm_runs_its_command_and_its_guard_blocks(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    box = Sandbox(tmp_path)
    shutil.rmtree(box.project / ".git")
    subprocess.run(["git", "init", "-q"], cwd=box.project, check=True, timeout=30)  # git clean would work
    (box.project / ".claude").mkdir()
    (box.project / ".claude" / ".selfish-active").write_text("demo\n", encoding="utf-8")  # its pipeline is on
    untracked = box.project / "untracked.txt"
    untracked.write_text("keep me\n", encoding="utf-8")
    use_scripted_model(box, [[tool("b1", "bash", {"command": f"cd {box.project} && git clean -f"})], [text("ok")]])

    added = box.run("plugin", "add", f"npm:{PACKAGE}", "--yes", timeout=180)
    assert added.returncode == 0, added.stderr
    assert "(Claude Code plugin)" in added.stdout and "command /doctor" in added.stdout
    assert "hook PreToolUse [Bash]:" in added.stdout and "selfish-bash-guard.sh" in added.stdout
    assert "agent selfish-architect" in added.stdout

    ran = box.run("-p", "/doctor", "--allow", "bash", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    requests = model_requests(box)
    assert "Project Health Diagnosis" in str(requests[0])  # the package's command was the prompt
    # Its agent file, as its author wrote it for Claude Code, loads as a subagent (§15).
    assert "- selfish-architect: " in requests[0]["request"]["system"]
    assert "selfish-architect" not in ran.stderr, ran.stderr
    [refused] = [block for block in tool_results(requests[1]) if block["toolUseId"] == "b1"]
    assert refused["isError"] and "SELFISH GUARD" in result_text(refused)
    assert untracked.read_text(encoding="utf-8") == "keep me\n"


SETUP = "claude-dev-environment-setup@1.4.0"


def test_a_published_plugins_skill_is_listed_and_used_and_its_command_runs_by_both_names(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[tool("s1", "skill", {"name": "environment-check"})], [text("checked")], [text("again")]])

    added = box.run("plugin", "add", f"npm:{SETUP}", "--yes", timeout=180)
    assert added.returncode == 0, added.stderr
    assert "dev-environment-setup 1.1.0 (Claude Code plugin)" in added.stdout
    assert "skill environment-check" in added.stdout
    assert "command /dev-environment-setup (or /dev-environment-setup:dev-environment-setup)" in added.stdout

    listed = box.run("-p", "/skills", cwd=box.project)
    assert "environment-check" in listed.stdout, listed.stderr

    ran = box.run("-p", "/dev-environment-setup:dev-environment-setup", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    requests = model_requests(box)
    assert "Project Environment Setup" in str(requests[0])  # the package's command was the prompt
    [read] = tool_results(requests[1])
    assert not read.get("isError") and "Environment Check & Recovery" in result_text(read)  # its skill's body

    bare = box.run("-p", "/dev-environment-setup", cwd=box.project)
    assert bare.returncode == 0, bare.stderr
    assert "Project Environment Setup" in str(model_requests(box)[2])


def _ecc_repository(tmp_path: Path) -> Path:
    """ECC 2.0.0 (MIT; npm `ecc-universal`) as its authors published it, made a local git
    repository here: what `bingo plugin add file://…` takes."""
    from tests.support import installs

    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm and node are needed: ECC is fetched from the npm registry, its hooks are node")
    made = installs.npm_unpacked(installs.NPM_PLUGINS, *installs.ECC_PACKAGE)
    assert not isinstance(made, str), made
    repository = tmp_path / "ecc"
    shutil.copytree(made / "package", repository, ignore=shutil.ignore_patterns(".unpacked"))
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "ecc-universal 2.0.0 as published"]):
        subprocess.run(["git", *args], cwd=repository, check=True, timeout=60, env={**os.environ, **env})
    return repository


def test_a_published_plugin_as_a_git_repository_its_hook_blocks_and_its_empty_mcp_servers_start_none(
    tmp_path: Path,
) -> None:
    """ECC's own config-protection PreToolUse hook refuses the scripted model's edit of an
    existing `.eslintrc.json` (the file is unchanged); its manifest's `"mcpServers": {}` opts
    out of the six servers its `.mcp.json` lists, as its notes say Claude Code reads it, so
    none is shown or started; its command runs as `/ecc:NAME`."""
    repository = _ecc_repository(tmp_path)
    box = Sandbox(tmp_path)
    config = box.project / ".eslintrc.json"
    config.write_text('{"rules": {"no-console": "error"}}\n', encoding="utf-8")
    weaken = {"path": str(config), "oldString": '"error"', "newString": '"off"'}
    use_scripted_model(box, [[tool("e1", "edit", weaken)], [text("left it")]])

    added = box.run("plugin", "add", f"file://{repository}", "--yes", timeout=120)
    assert added.returncode == 0, added.stderr
    shown = added.stdout
    assert "ecc 2.0.0 (Claude Code plugin)" in shown and "MCP server" not in shown
    assert "skill tdd-workflow" in shown and "command /code-review (or /ecc:code-review)" in shown
    assert "config-protection.js" in shown  # each hook's command is shown

    ran = box.run("-p", "/ecc:code-review", "--allow", "edit", cwd=box.project, timeout=120)
    assert ran.returncode == 0, ran.stderr
    requests = model_requests(box)
    assert "# Code Review" in str(requests[0])  # its command was the prompt
    [refused] = tool_results(requests[1])
    assert refused["isError"] and "Modifying .eslintrc.json is not allowed" in result_text(refused)
    assert config.read_text(encoding="utf-8") == '{"rules": {"no-console": "error"}}\n'  # not weakened


def _git_repository(files: Path, repository: Path, message: str) -> Path:
    """`files` made a local git repository at `repository`, one commit."""
    shutil.copytree(files, repository, ignore=shutil.ignore_patterns(".unpacked"))
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run(["git", *args], cwd=repository, check=True, timeout=60, env={**os.environ, **env})
    return repository


def test_a_published_plugins_mcp_server_named_by_a_relative_path_is_warned_of_and_said_not_to_start(
    tmp_path: Path,
) -> None:
    """gemini-mcp-connect 1.0.0 (MIT, PyPI; plugin `gemini-bridge`), its source distribution
    made a local git repository: its `.mcp.json` starts `python ./gemini_bridge_mcp.py`, which
    the host looks for where it runs (the project), as Claude Code does. `add` shows the server
    and warns, naming what its author meant; at the run its command is the prompt, and the
    server's failure to start is said, naming it, while the turn goes on."""
    from tests.support import installs

    made = installs.pypi_unpacked(installs.PYPI_PLUGINS, *installs.GEMINI_PACKAGE)
    assert not isinstance(made, str), made
    [files] = [path for path in made.iterdir() if path.is_dir()]
    repository = _git_repository(files, tmp_path / "gemini", "gemini-mcp-connect 1.0.0 as published")
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[text("noted")]])

    added = box.run("plugin", "add", f"file://{repository}", "--yes", timeout=120)
    assert added.returncode == 0, added.stderr
    shown = added.stdout
    assert "gemini-bridge 1.0.0 (Claude Code plugin)" in shown
    assert "MCP server gemini-mcp-connect: python ./gemini_bridge_mcp.py" in shown
    assert (
        "warning: MCP server gemini-mcp-connect: ./gemini_bridge_mcp.py is looked for in the directory bingo runs in"
        in shown
    )
    assert "its author meant ${CLAUDE_PLUGIN_ROOT}/gemini_bridge_mcp.py" in shown
    assert "command /gemini-status (or /gemini-bridge:gemini-status)" in shown

    ran = box.run("-p", "/gemini-bridge:gemini-status", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    assert "gemini_bridge.py" in str(model_requests(box)[0]) and "--status" in str(model_requests(box)[0])
    [said] = [line for line in ran.stderr.splitlines() if line.startswith("gemini-mcp-connect: stopped")]
    assert "'./gemini_bridge_mcp.py' names a file of the plugin's directory by a relative path" in said
    assert "can't open file" in said  # python's own words: the process ran and found nothing there
    # Its skills/ holds plain .md files, which are no skills (a skill is a directory): nothing to say.
    assert "is not loaded" not in ran.stderr


class _StandInGemini(http.server.BaseHTTPRequestHandler):
    """Gemini's API as gemini-mcp-connect calls it (google-genai's `generateContent`), on this
    machine's loopback: it keeps each request it is sent and answers with its own words."""

    ANSWER = "stand-in Gemini says: no issues found"
    received: list[tuple[str, dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append((self.path, body))
        candidate = {"content": {"role": "model", "parts": [{"text": self.ANSWER}]}, "finishReason": "STOP"}
        answer = json.dumps({"candidates": [candidate]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_published_plugins_own_python_mcp_server_is_started_and_its_tool_called_by_the_model(
    tmp_path: Path,
) -> None:
    """gemini-mcp-connect 1.0.0 (MIT, PyPI; plugin `gemini-bridge`), byte for byte as
    published, run where its `.mcp.json`'s `python ./gemini_bridge_mcp.py` finds its file: the
    project is the plugin's own git repository (its developer at work), added from there with
    `bingo plugin add .`. Its `python` is a virtualenv with what the server imports (mcp 1.x,
    whose `mcp.server.fastmcp` 2.x removed, and google-genai), first on bingo's PATH. The
    scripted model calls its `query_gemini` tool by its bingo name; the server sends the
    prompt to Gemini's API, here a stand-in on loopback that the person grants the server in
    settings (`plugins.gemini-mcp-connect.sandbox.network`), as its README's API would be. The
    evidence is the stand-in's: the prompt it received, and its answer in the tool result."""
    from tests.support import installs

    made = installs.pypi_unpacked(installs.PYPI_PLUGINS, *installs.GEMINI_PACKAGE)
    assert not isinstance(made, str), made
    python = installs.venv(installs.GEMINI_VENV, installs.GEMINI_SERVER_NEEDS)
    assert not isinstance(python, str), python
    [files] = [path for path in made.iterdir() if path.is_dir()]
    box = Sandbox(tmp_path)
    shutil.rmtree(box.project)
    _git_repository(files, box.project, "gemini-mcp-connect 1.0.0 as published")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _StandInGemini)
    _StandInGemini.received = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        port = server.server_address[1]
        box.env["PATH"] = f"{python / 'bin'}{os.pathsep}{box.env['PATH']}"
        # Its README's set-up: the key in `.env` beside the server (git ignores it; bingo keeps
        # API keys out of a server's environment), here with the address of Gemini's API.
        key = f"GEMINI_API_KEY=stand-in-key\nGOOGLE_GEMINI_BASE_URL=http://127.0.0.1:{port}\n"
        (box.project / ".env").write_text(key, encoding="utf-8")
        prompt = "Is `rm -rf /` a safe cleanup step? Answer in one line."
        call = tool("g1", "plugin__gemini-mcp-connect__query_gemini", {"prompt": prompt, "tier": "lite"})
        use_scripted_model(
            box,
            [[call], [text("Gemini agrees")]],
            plugins={"gemini-mcp-connect": {"sandbox": {"network": ["127.0.0.1"]}}},
        )
        added = box.run("plugin", "add", ".", "--yes", cwd=box.project, timeout=120)
        assert added.returncode == 0, added.stderr
        assert "MCP server gemini-mcp-connect: python ./gemini_bridge_mcp.py" in added.stdout

        ran = box.run("-p", "ask gemini", "--allow", "plugin__gemini-mcp-connect__query_gemini", cwd=box.project)
        assert ran.returncode == 0, ran.stderr
        # The project's own `.mcp.json` (the same server) waits for `bingo --trust`: what runs
        # is the installed package's server, in the project, where its relative path resolves.
        assert "left out what it brings: .mcp.json: servers gemini-mcp-connect" in ran.stderr
    finally:
        server.shutdown()
        server.server_close()
    [(path, sent)] = _StandInGemini.received
    assert path.endswith("/models/gemini-3.1-flash-lite-preview:generateContent")  # the server's own tier table
    assert prompt in json.dumps(sent)
    [result] = tool_results(model_requests(box)[1])
    assert not result.get("isError"), result
    assert _StandInGemini.ANSWER in result_text(result)
