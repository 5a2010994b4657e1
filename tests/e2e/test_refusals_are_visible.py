"""Issue 14, item 2: every decision the person did not see is one line they do see. Under
`-p` it is `bingo: <why>` on stderr, and the model is told the same words, which name the
real cause: the rule list, that no rule allows it, or the hook that asked or refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import install_declaring
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def _run(
    tmp_path: Path, *args: str, answer: Any = None, call: tuple[str, dict[str, Any]] | None = None, **settings: Any
) -> tuple[Sandbox, Any, Path]:
    box = Sandbox(tmp_path)
    marker = box.root / "bash-ran"
    name, input = call or ("bash", {"command": f"touch {marker}"})
    plugins: dict[str, Any] = {}
    if answer is not None:
        install_declaring(box, "zguard")
        plugins["zguard"] = {
            "hooks": [{"name": "guard", "site": "tool", "points": ["before"]}],
            "answers": {"guard": answer},
        }
    use_scripted_model(box, [[tool("c1", name, input)], [text("done.")]], plugins=plugins, **settings)
    result = box.run("-p", *args, "run it")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    return box, result, marker


def _told(box: Sandbox) -> str:
    [block] = tool_results(model_requests(box)[-1])
    assert block["isError"]
    return result_text(block)


def _bingo_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("bingo: ")]


def test_a_call_no_rule_allows_is_a_line_on_stderr(tmp_path: Path) -> None:
    box, result, marker = _run(tmp_path, "--no-sandbox")  # without a sandbox, bash needs a rule

    line = "bash is not allowed here: add it to permissions.allow or pass --allow"
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert _told(box) == line
    assert not marker.exists()
    assert result.stdout == "done.\n"


def test_a_call_a_deny_rule_refuses_names_the_rule(tmp_path: Path) -> None:
    box, result, marker = _run(tmp_path, "--allow", "bash", permissions={"deny": ["ba*"]})

    line = "bash is denied by the rule 'ba*' in permissions.deny"
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert _told(box) == line
    assert not marker.exists()


def test_a_call_an_ask_rule_asks_about_with_nobody_to_ask_names_the_rule(tmp_path: Path) -> None:
    box, result, marker = _run(tmp_path, "--allow", "bash", permissions={"ask": ["bash"]})

    line = "bash is asked about by the rule 'bash' in permissions.ask, and there is no person to ask"
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert _told(box) == line
    assert not marker.exists()


def test_a_hooks_ask_with_nobody_to_ask_names_the_hook_not_the_allow_list(tmp_path: Path) -> None:
    box, result, marker = _run(tmp_path, "--allow", "bash", answer={"outcome": "ask"})

    line = "hook guard (zguard) asked to confirm bash, and there is no person to ask"
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert _told(box) == line
    assert "permissions.allow" not in result.stderr
    assert not marker.exists()


def test_a_hooks_deny_names_the_hook_its_plugin_and_its_reason(tmp_path: Path) -> None:
    box, result, marker = _run(tmp_path, "--allow", "bash", answer="deny-bash")

    line = "bash was refused by hook guard (zguard): no shell here"
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert _told(box) == line
    assert not marker.exists()


def test_a_tool_that_fails_is_a_line_on_stderr(tmp_path: Path) -> None:
    box, result, _ = _run(tmp_path, call=("read", {"path": "no-such-file.txt"}))

    missing = box.project / "no-such-file.txt"
    why = f"{missing} does not exist. Check the path (relative paths start at the working directory), or use glob to find the file."
    assert _bingo_lines(result.stderr) == []  # a call that ran and failed is not bingo's refusal:
    assert "✗ read no-such-file.txt: " + why in result.stderr.splitlines()  # its own line, whole
    assert _told(box) == why


def test_in_the_terminal_a_call_a_hook_denied_is_a_drawn_line(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import terminal

    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    hook = {"name": "guard", "site": "tool", "points": ["before"]}
    box.settings({"plugins": {"zguard": {"hooks": [hook], "answers": {"guard": "deny-bash"}}}})
    with terminal(box, [[("tool", "t1", "bash", {"command": "echo hi"})], [("text", "It was refused.")]]) as screen:
        screen.child.send("run it\r")
        screen.expect(r"✗ bash was refused by hook guard \(zguard\): no shell here\n")
        screen.expect(r"It was refused\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_a_hooks_block_ends_the_turn_with_one_line_naming_the_hook(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marker = box.root / "bash-ran"
    install_declaring(box, "zguard")
    hook = {"name": "guard", "site": "tool", "points": ["before"]}
    plugins = {"zguard": {"hooks": [hook], "answers": {"guard": {"outcome": "block", "value": "stop everything"}}}}
    use_scripted_model(box, [[tool("c1", "bash", {"command": f"touch {marker}"})], [text("never.")]], plugins=plugins)
    result = box.run("-p", "--allow", "bash", "run it")

    assert result.returncode == 1, result.stderr
    assert no_traceback(result)
    assert _bingo_lines(result.stderr) == [
        "bingo: bash was blocked by hook guard (zguard), which ended the turn: stop everything"
    ]
    assert not marker.exists()
    assert "never." not in result.stdout


def test_a_call_of_a_tool_that_does_not_exist_is_a_line_on_stderr(tmp_path: Path) -> None:
    box, result, _ = _run(tmp_path, call=("plugin__nobody__nothing", {}))

    line = "there is no tool named plugin__nobody__nothing"
    assert _bingo_lines(result.stderr) == [f"bingo: {line}"]
    assert _told(box) == line


def test_in_the_terminal_calls_skipped_by_an_interrupt_are_drawn(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import terminal

    box = Sandbox(tmp_path)
    calls = [("tool", "t1", "bash", {"command": "sleep 30"}), ("tool", "t2", "bash", {"command": "echo second"})]
    with terminal(box, [calls, [("text", "Stopped.")]], "--allow", "bash") as screen:
        screen.expect(">")
        screen.child.send("run it\r")
        screen.expect(r"sleep 30")
        screen.child.sendcontrol("c")
        screen.expect(r"✗ bash was not run: the turn was interrupted\n")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
