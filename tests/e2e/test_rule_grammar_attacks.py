"""The rule grammar against an attacker, through the real binary (issue 23 items 1, 2, 3 and
14; INTERFACE.md §3, ADR-0018 as amended). Each test takes its evidence from the attacked
side: the file a hidden command would have made does not exist, `../victim` is still there,
the marker `core.fsmonitor` would have written is not, `.git/config` is unchanged.

1. A comment does not hide a newline: under `bash(ls*)`, `ls #'⏎touch pwned #'` is asked
   about (refused under -p), and the terminal's question shows the newline as ⏎.
2. "Yes, always" to `rm -rf build/*` saves `bash(rm -rf build/\\*)`, whose `*` is the
   character: `rm -rf build/ ../victim` is asked about again.
3. A `*` glued to a word never extends it: `bash(ls*)` allows `ls -la`, not
   `lsx=1 touch x` nor `lsd/../run.sh`.
14. `git status` under its "always" rule runs none of the repository's `core.fsmonitor`, and
   `write(*)` or a bare `write` does not reach `.git/config` or `.git/hooks/`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model
from tests.e2e.test_terminal import terminal
from tests.support.model_server import ModelServer, Reply


def _results(box: Sandbox) -> dict[str, dict[str, Any]]:
    return {block["toolUseId"]: block for block in tool_results(model_requests(box)[-1])}


def _errors(box: Sandbox, *ids: str) -> list[bool]:
    results = _results(box)
    return [bool(results[i].get("isError", False)) for i in ids]


# --- item 1: comments ----------------------------------------------------------------


def test_a_comment_does_not_hide_a_newline_from_a_prefix_rule(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    calls = [
        tool("c1", "bash", {"command": "ls #'\ntouch pwned #'"}),
        tool("c2", "bash", {"command": "ls -la # and nothing else; touch also-pwned"}),
    ]
    use_scripted_model(box, [calls, [text("done.")]])

    result = box.run("-p", "--no-sandbox", "--allow", "bash(ls*)", "list")  # without a sandbox, where rules decide bash

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert _errors(box, "c1", "c2") == [True, False]
    assert result_text(_results(box)["c1"]).startswith("bash is not allowed here: this call does not match 'bash(ls*)'")
    assert not (box.project / "pwned").exists()
    assert not (box.project / "also-pwned").exists()  # the comment's words were not run


def test_the_terminal_question_shows_a_commands_newline(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})  # without a sandbox, where rules and questions decide bash
    served: list[ModelServer] = []
    replies: list[Reply] = [[("tool", "t1", "bash", {"command": "ls -la #'\ntouch pwned #'"})], [("text", "Not run.")]]
    with terminal(box, replies, server=served) as screen:
        screen.child.send("list\r")
        screen.expect(
            r"bingo wants to run bash\n +ls -la #'\n +touch pwned #'\n +\[y\] yes, once +\[a\] yes, always: bash\(ls -la #'⏎touch pwned #'\)"
        )
        screen.child.send("n")
        screen.expect("declined bash")
        screen.expect(r"Not run\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert not (box.project / "pwned").exists()


def test_the_terminal_question_shows_the_tail_of_a_long_command(tmp_path: Path) -> None:
    # Past the 300 characters a question used to show, a newline was out of sight.
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})  # without a sandbox, where rules and questions decide bash
    command = "echo " + "a" * 400 + "\ntouch pwned"
    replies: list[Reply] = [[("tool", "t1", "bash", {"command": command})], [("text", "Not run.")]]
    with terminal(box, replies) as screen:
        screen.child.send("echo\r")
        screen.expect(r"bingo wants to run bash\n +echo ?(?:\n +)?a+(?:\n +a+)*\n +touch pwned\n")  # wrapped, not cut
        screen.child.send("n")
        screen.expect(r"Not run\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert not (box.project / "pwned").exists()


# --- item 2: "always" saves an exact rule -----------------------------------------------


def test_always_to_a_command_with_a_star_saves_the_star_as_a_character(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})  # without a sandbox, where rules and questions decide bash
    (box.project / "build").mkdir()
    (box.project / "build" / "out.o").write_text("x", encoding="utf-8")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me\n", encoding="utf-8")
    replies: list[Reply] = [
        [("tool", "t1", "bash", {"command": "rm -rf build/*"})],
        [("tool", "t2", "bash", {"command": "rm -rf build/ ../victim"})],
        [("text", "Cleaned.")],
    ]
    with terminal(box, replies) as screen:
        screen.child.send("clean the build\r")
        screen.expect(
            r"bingo wants to run bash\n +rm -rf build/\*\n +\[y\] yes, once +\[a\] yes, always: bash\(rm -rf build/\\\*\) +\[n\] no"
        )
        screen.child.send("a")
        saved = box.project / ".bingo" / "settings.local.json"
        screen.expect(rf"bingo: allowed bash\(rm -rf build/\\\*\) from now on: saved in {re.escape(str(saved))}\n")
        # The rule saved allows its text alone: the next command is asked about.
        screen.expect(r"bingo wants to run bash\n +rm -rf build/ \.\./victim\n")
        screen.child.send("n")
        screen.expect("declined bash")
        screen.expect(r"Cleaned\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert json.loads(saved.read_text(encoding="utf-8")) == {"permissions": {"allow": ["bash(rm -rf build/\\*)"]}}
    assert list((box.project / "build").iterdir()) == []  # the command answered ran
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "keep me\n"


def test_an_exact_rule_with_an_escaped_star_runs_its_command_and_nothing_wider(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "build").mkdir()
    (box.project / "build" / "out.o").write_text("x", encoding="utf-8")
    victim = tmp_path / "victim"
    victim.mkdir()
    calls = [
        tool("c1", "bash", {"command": "rm -rf build/*"}),
        tool("c2", "bash", {"command": "rm -rf build/ ../victim"}),
    ]
    use_scripted_model(box, [calls, [text("done.")]])

    result = box.run(
        "-p", "--no-sandbox", "--allow", "bash(rm -rf build/\\*)", "clean"
    )  # without a sandbox, where rules decide bash

    assert result.returncode == 0, result.stderr
    assert _errors(box, "c1", "c2") == [False, True]
    assert list((box.project / "build").iterdir()) == []
    assert victim.is_dir()


# --- item 3: a star glued to a word ---------------------------------------------------------


def test_a_star_glued_to_a_word_allows_that_word_alone(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "lsd").mkdir()
    script = box.project / "run.sh"
    script.write_text(f"#!/bin/sh\ntouch {tmp_path / 'script-ran'}\n", encoding="utf-8")
    script.chmod(0o755)
    calls = [
        tool("c1", "bash", {"command": "ls -la"}),
        tool("c2", "bash", {"command": "lsx=1 touch x"}),
        tool("c3", "bash", {"command": "lsd/../run.sh"}),
        tool("c4", "bash", {"command": "ls"}),
    ]
    use_scripted_model(box, [calls, [text("done.")]])

    result = box.run("-p", "--no-sandbox", "--allow", "bash(ls*)", "list")  # without a sandbox, where rules decide bash

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert _errors(box, "c1", "c2", "c3", "c4") == [False, True, True, False]
    assert "run.sh" in result_text(_results(box)["c1"])
    assert not (box.project / "x").exists()
    assert not (tmp_path / "script-ran").exists()


# --- item 14: git's own programs, and write into .git ------------------------------------


def _repository_that_runs_a_monitor(box: Sandbox, marker: Path) -> None:
    (box.project / ".git").rmdir()
    subprocess.run(["git", "init", "-q", str(box.project)], check=True, env=box.env, timeout=30)
    monitor = box.root / "fsmonitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    monitor.chmod(0o755)
    subprocess.run(
        ["git", "-C", str(box.project), "config", "core.fsmonitor", str(monitor)], check=True, env=box.env, timeout=30
    )
    subprocess.run(
        ["git", "-C", str(box.project), "config", "alias.st", f"!touch {marker}.alias"],
        check=True,
        env=box.env,
        timeout=30,
    )


def test_git_under_its_always_rule_runs_none_of_the_repositorys_programs(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marker = tmp_path / "monitor-ran"
    _repository_that_runs_a_monitor(box, marker)
    (box.project / "notes.md").write_text("hello\n", encoding="utf-8")
    calls = [tool("c1", "bash", {"command": "git status"}), tool("c2", "bash", {"command": "git st"})]
    use_scripted_model(box, [calls, [text("done.")]], permissions={"allow": ["bash(git status*)", "bash(git st*)"]})

    result = box.run("-p", "--no-sandbox", "status please")  # without a sandbox, where a rule lets git run unseen

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    results = _results(box)
    assert not results["c1"].get("isError", False), result_text(results["c1"])
    assert "notes.md" in result_text(results["c1"])  # git ran, and saw the project
    assert not marker.exists()
    assert not Path(f"{marker}.alias").exists()
    # The same command, asked about and answered by a person, is not changed: proof the
    # repository really does run the monitor.
    subprocess.run(["git", "status"], cwd=box.project, env=box.env, capture_output=True, timeout=30)
    assert marker.exists()


@pytest.mark.parametrize("rule", ["write(*)", "write"])
def test_a_write_rule_that_does_not_name_git_does_not_reach_its_config_or_hooks(tmp_path: Path, rule: str) -> None:
    box = Sandbox(tmp_path)
    (box.project / ".git" / "hooks").mkdir()
    config = box.project / ".git" / "config"
    config.write_text("[core]\n\tbare = false\n", encoding="utf-8")
    calls = [
        tool("c1", "read", {"path": ".git/config"}),
        tool("c2", "write", {"path": ".git/config", "content": "[core]\n\tfsmonitor = /tmp/x\n"}),
        tool("c3", "write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        tool("c4", "write", {"path": "notes.md", "content": "fine\n"}),
    ]
    use_scripted_model(box, [calls, [text("done.")]])

    result = box.run("-p", "--allow", rule, "write")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert _errors(box, "c1", "c2", "c3", "c4") == [False, True, True, False]
    assert "one inside a .git directory only by a rule that names .git" in result_text(_results(box)["c2"])
    assert config.read_text(encoding="utf-8") == "[core]\n\tbare = false\n"
    assert not (box.project / ".git" / "hooks" / "pre-commit").exists()
    assert (box.project / "notes.md").read_text(encoding="utf-8") == "fine\n"
