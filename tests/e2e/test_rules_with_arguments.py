"""Rules with arguments through the real binary (issue 15 item 2, INTERFACE.md §3, ADR-0018):
`bash(git status*)` lets `git status` run and not `git status && touch X`, which is asked
about and, under -p with nobody to ask, refused in one line naming the rule it missed; a
path rule is matched after `..` is folded, so `write(src/*)` does not reach out of src."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def _results(box: Sandbox) -> dict[str, dict[str, Any]]:
    return {block["toolUseId"]: block for block in tool_results(model_requests(box)[-1])}


def _bingo_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("bingo: ")]


def _git_project(box: Sandbox) -> None:
    (box.project / ".git").rmdir()
    subprocess.run(["git", "init", "-q", str(box.project)], check=True, env=box.env, timeout=30)


def test_a_prefix_rule_runs_its_command_and_refuses_it_chained_with_another(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _git_project(box)
    marker = box.project / "X"
    calls = [tool("c1", "bash", {"command": "git status"}), tool("c2", "bash", {"command": "git status && touch X"})]
    use_scripted_model(box, [calls, [text("done.")]], permissions={"allow": ["bash(git status*)"]})

    result = box.run("-p", "--no-sandbox", "status please")  # without a sandbox, where rules decide bash

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    results = _results(box)
    assert not results["c1"].get("isError", False), result_text(results["c1"])
    assert "No commits yet" in result_text(results["c1"])
    line = (
        "bash is not allowed here: this call does not match 'bash(git status*)' (a pattern allows a command only "
        "when each part between ;, &, |, && or || matches one, with no $( ), backticks, parentheses or "
        "redirections): add a rule to permissions.allow or pass --allow"
    )
    assert results["c2"].get("isError", False)
    assert result_text(results["c2"]) == line
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert not marker.exists()


def test_a_prefix_rule_from_the_command_line_refuses_a_substitution_and_a_redirection(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    calls = [
        tool("c1", "bash", {"command": "echo hi $(touch X)"}),
        tool("c2", "bash", {"command": "echo hi > X"}),
        tool("c3", "bash", {"command": "echo hi\ntouch X"}),
        tool("c4", "bash", {"command": "echo hi 2>&1"}),
    ]
    use_scripted_model(box, [calls, [text("done.")]])

    result = box.run(
        "-p", "--no-sandbox", "--allow", "bash(echo hi*)", "go"
    )  # without a sandbox, where rules decide bash

    assert result.returncode == 0, result.stderr
    results = _results(box)
    assert [results[c].get("isError", False) for c in ("c1", "c2", "c3", "c4")] == [True, True, True, False]
    assert result_text(results["c4"]).startswith("hi\n")
    assert not (box.project / "X").exists()


def test_a_path_rule_is_matched_after_dot_dot_is_folded(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "src").mkdir()
    calls = [
        tool("c1", "write", {"path": "src/ok.txt", "content": "inside\n"}),
        tool("c2", "write", {"path": "src/../outside.txt", "content": "escaped\n"}),
        tool("c3", "write", {"path": f"{box.project}/src/../../escaped.txt", "content": "escaped\n"}),
    ]
    use_scripted_model(box, [calls, [text("done.")]], permissions={"allow": ["write(src/*)"]})

    result = box.run("-p", "write them")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    results = _results(box)
    assert not results["c1"].get("isError", False), result_text(results["c1"])
    assert (box.project / "src" / "ok.txt").read_text(encoding="utf-8") == "inside\n"
    assert results["c2"].get("isError", False) and results["c3"].get("isError", False)
    assert result_text(results["c2"]).startswith("write is not allowed here: this call does not match 'write(src/*)'")
    assert not (box.project / "outside.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()


def test_a_path_deny_rule_refuses_a_read_spelled_with_dot_dot(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "secret").mkdir()
    (box.project / "secret" / "key.txt").write_text("hunter2\n", encoding="utf-8")
    (box.project / "src").mkdir()
    calls = [tool("c1", "read", {"path": "src/../secret/key.txt"})]
    use_scripted_model(box, [calls, [text("done.")]], permissions={"deny": ["read(secret/*)"]})

    result = box.run("-p", "read it")

    assert result.returncode == 0, result.stderr
    [block] = tool_results(model_requests(box)[-1])
    assert block.get("isError", False)
    assert result_text(block) == "read is denied by the rule 'read(secret/*)' in permissions.deny"
    assert "hunter2" not in result.stdout + result.stderr


def test_tools_names_the_pattern_rules_that_decide_some_calls(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"permissions": {"allow": ["bash(git status*)"], "deny": ["read(secret/*)"]}})
    result = box.run("-p", "--no-sandbox", "/tools")  # without a sandbox, where rules decide bash

    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.split()}
    assert "asks; some calls allowed by bash(git status*)" in rows["bash"]
    assert "runs; some calls denied by read(secret/*)" in rows["read"]
    assert "some calls" not in rows["grep"]
