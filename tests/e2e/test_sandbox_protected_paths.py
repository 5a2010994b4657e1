"""Ordinary work beside the protected paths, through the real binary (INTERFACE.md §9; issue
24; ADR-0030's 2026-12-04 section): the scripted model's `bash` commands run in the sandbox
in a project with `.git/` (made by `git init`), `.bingo/` and `.mcp.json`. A new file at the
project's root, `node_modules/`, and `git add`/`git commit` work; writing `.git/config`,
planting `.git/hooks/pre-commit`, writing `.mcp.json` or `.bingo/settings.json`, moving or
removing `.git/hooks`, and `umount` are refused. The evidence is the project's own bytes
and git's own log, read from outside."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bingo.sandbox import probe
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

SUPPORT = probe()
pytestmark = [
    pytest.mark.skipif(not SUPPORT.confines, reason="this kernel cannot confine: " + "; ".join(SUPPORT.missing)),
    pytest.mark.skipif(
        not SUPPORT.userns, reason="no user namespaces here: the degraded path (tests/unit/sandbox/test_protected.py)"
    ),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]
GIT = "git -c user.name=Tester -c user.email=tester@example.invalid"


def test_ordinary_work_beside_the_protected_paths_through_the_binary(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    project = box.project
    (project / ".git").rmdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, env=box.env, timeout=30)
    (project / "README").write_text("readme\n")
    subprocess.run(["git", *GIT.split()[1:], "-C", str(project), "add", "README"], check=True, env=box.env, timeout=30)
    subprocess.run(
        ["git", *GIT.split()[1:], "-C", str(project), "commit", "-qm", "first"], check=True, env=box.env, timeout=30
    )
    (project / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (project / ".bingo").mkdir(exist_ok=True)
    (project / ".bingo" / "settings.json").write_text("{}\n")
    hooks = sorted(p.name for p in (project / ".git" / "hooks").iterdir())
    before = {name: (project / name).read_bytes() for name in (".git/config", ".mcp.json", ".bingo/settings.json")}
    work = f"touch new.py && mkdir node_modules && touch node_modules/x && git add . && {GIT} commit -qm inside && echo WORKED"
    attacks = (
        "echo evil >> .git/config; echo evil > .git/hooks/pre-commit; echo evil > .mcp.json; "
        "echo evil > .bingo/settings.json; mv .git/hooks .git/x; rm -rf .git/hooks; mv .git g; umount .git/hooks; "
        "echo ATTACKED"
    )
    use_scripted_model(
        box, [[tool("w", "bash", {"command": work}), tool("a", "bash", {"command": attacks})], [text("done")]]
    )

    result = box.run("-p", "work, then attack")  # no rule allows bash: the sandbox is its bound

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    told = {
        block["toolUseId"]: result_text(block) for request in model_requests(box) for block in tool_results(request)
    }
    assert "WORKED" in told["w"], told["w"]
    assert "ATTACKED" in told["a"], told["a"]  # it ran, and was refused at every step
    assert (project / "new.py").exists() and (project / "node_modules" / "x").exists()
    log = subprocess.run(
        ["git", "-C", str(project), "log", "--format=%s"], capture_output=True, text=True, env=box.env, timeout=30
    )
    assert log.stdout.split() == ["inside", "first"], told["w"]
    for name, data in before.items():
        assert (project / name).read_bytes() == data, (name, told["a"])
    assert sorted(p.name for p in (project / ".git" / "hooks").iterdir()) == hooks
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert not (project / "g").exists() and not (project / ".git" / "x").exists()
