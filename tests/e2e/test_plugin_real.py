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
  and by its bare name (no other command has it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

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
