"""Issue 13, item 1: a `command.before` hook's `ask` and `redirect` are honoured, as a tool
hook's are. Before, both were ignored: a guard that asked before `/deploy` ran let it run
unasked, and a redirect to another command ran the one it meant to replace. Non-interactive,
an `ask` with nobody to ask refuses the command, with a line naming the hook that asked; a
`prompt.submit` hook's `ask` is the same, for the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import decided, install_declaring
from tests.e2e._scripted import model_requests, text, use_scripted_model

COMMAND_HOOK = [{"name": "guard", "site": "command", "points": ["before"]}]


def _box(tmp_path: Path, answer: dict[str, Any]) -> Sandbox:
    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    box.settings(
        {
            "plugins": {
                "zguard": {"hooks": COMMAND_HOOK, "commands": ["deploy", "dry-run"], "answers": {"guard": answer}}
            }
        }
    )
    return box


def test_a_command_hook_that_asks_with_nobody_to_ask_refuses_the_command_naming_the_hook(tmp_path: Path) -> None:
    box = _box(tmp_path, {"outcome": "ask"})

    result = box.run("-p", "/deploy now")

    assert result.returncode == 1, result.stderr
    assert no_traceback(result)
    assert result.stdout == ""
    assert (
        result.stderr == "/deploy was refused: hook guard (zguard) asked to confirm it, and there is no person to ask\n"
    )
    assert [d["payload"] for d in decided(box, "zguard")] == [{"name": "deploy", "args": "now"}]


def test_a_command_hook_that_redirects_runs_the_command_it_names(tmp_path: Path) -> None:
    box = _box(tmp_path, {"outcome": "redirect", "value": {"name": "dry-run", "args": "now"}})

    result = box.run("-p", "/deploy now")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert result.stdout == "zguard's own /dry-run\n"


def test_a_redirect_to_a_builtin_command_runs_it(tmp_path: Path) -> None:
    box = _box(tmp_path, {"outcome": "redirect", "value": {"name": "help", "args": ""}})

    result = box.run("-p", "/deploy now")

    assert result.returncode == 0, result.stderr
    assert "zguard's own" not in result.stdout
    assert "list every command" in result.stdout


def test_a_redirect_to_no_command_is_the_usual_error(tmp_path: Path) -> None:
    box = _box(tmp_path, {"outcome": "redirect", "value": {"name": "nope", "args": ""}})

    result = box.run("-p", "/deploy now")

    assert result.returncode == 2
    assert no_traceback(result)
    assert result.stdout == ""
    assert result.stderr == "bingo: there is no command /nope: bingo -p /help lists them\n"


def test_a_prompt_hook_that_asks_with_nobody_to_ask_sends_nothing_to_the_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    use_scripted_model(
        box,
        [[text("should not be asked")]],
        plugins={
            "zguard": {
                "hooks": [{"name": "careful", "site": "prompt", "points": ["submit"]}],
                "answers": {"careful": {"outcome": "ask"}},
            }
        },
    )

    result = box.run("-p", "hello")

    assert result.returncode == 1
    assert no_traceback(result)
    assert "should not be asked" not in result.stdout
    assert model_requests(box) == []
    assert (
        "bingo: the prompt was not sent: hook careful (zguard) asked to confirm it, and there is no person to ask"
        in result.stderr.splitlines()
    )
