"""A real published Claude Code plugin nobody here wrote, installed from npm by `bingo plugin
add npm:…` through the binary (INTERFACE.md §12, issue 30): selfish-pipeline 1.3.0 (MIT,
by its authors on the npm registry; a version's contents never change there). Its markdown
command is submitted as the prompt, and its own PreToolUse guard
(`scripts/selfish-bash-guard.sh`, which refuses `git clean -f` while its pipeline is active)
blocks the scripted model's bash call: the file the command would have removed is kept."""

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
    assert "agent selfish-architect (agents are not loaded yet)" in added.stdout

    ran = box.run("-p", "/doctor", "--allow", "bash", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    requests = model_requests(box)
    assert "Project Health Diagnosis" in str(requests[0])  # the package's command was the prompt
    [refused] = [block for block in tool_results(requests[1]) if block["toolUseId"] == "b1"]
    assert refused["isError"] and "SELFISH GUARD" in result_text(refused)
    assert untracked.read_text(encoding="utf-8") == "keep me\n"
