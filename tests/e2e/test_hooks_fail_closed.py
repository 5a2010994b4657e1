"""Issue 11, item 4 (INTERFACE.md §5): `hooks.failClosed` in the user's own settings lists
plugins whose hooks answer `ask` when they err or miss their deadline, instead of deciding
nothing. Non-interactive, an `ask` with nobody to ask is a no: the call does not run. Without
it (or with it only in a project's settings) a late guard decides nothing and the call runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import decided, install_declaring
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model

DEADLINE = 0.5
"""hook/decide's deadline here, in seconds: the guard never answers, so each run waits it once."""


def _box(tmp_path: Path, **settings: Any) -> tuple[Sandbox, Path]:
    box = Sandbox(tmp_path)
    marker = box.root / "bash-ran"  # outside the project: the world without a sandbox, where bash writes it
    settings.setdefault("sandbox", {"mode": "off"})
    install_declaring(box, "zguard")
    use_scripted_model(
        box,
        [[tool("c1", "bash", {"command": f"touch {marker}"})], [text("done.")]],
        plugins={
            "zguard": {
                "hooks": [{"name": "guard", "site": "tool", "points": ["before"]}],
                "answers": {"guard": "silent"},
            }
        },
        deadlines={"hook/decide": DEADLINE},
        **settings,
    )
    return box, marker


def test_a_late_guard_that_fails_closed_asks_and_with_nobody_to_ask_the_call_is_refused(tmp_path: Path) -> None:
    box, marker = _box(tmp_path, hooks={"failClosed": ["zguard"]})

    result = box.run("-p", "--allow", "bash", "run it")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert len(decided(box, "zguard")) == 1  # it was asked, and said nothing in time
    assert not marker.exists()
    [refused] = tool_results(model_requests(box)[-1])
    line = "hook guard (zguard) asked to confirm bash, and there is no person to ask"
    assert refused["isError"] and result_text(refused) == line
    assert f"bingo: {line}" in result.stderr.splitlines()
    assert notices(result.stderr, "zguard") == [
        "zguard: hook guard missed its deadline (0.5 s: deadlines.hook/decide in settings) and is treated as ask (hooks.failClosed)"
    ]


def test_a_late_guard_that_does_not_fail_closed_decides_nothing_and_the_call_runs(tmp_path: Path) -> None:
    box, marker = _box(tmp_path)

    result = box.run("-p", "--allow", "bash", "run it")

    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert notices(result.stderr, "zguard") == [
        "zguard: hook guard missed its deadline (0.5 s: deadlines.hook/decide in settings) and decides nothing"
    ]


def test_fail_closed_in_a_projects_settings_is_not_the_users_word(tmp_path: Path) -> None:
    box, marker = _box(tmp_path)
    box.settings({"hooks": {"failClosed": ["zguard"]}}, layer="project")

    result = box.run("-p", "--allow", "bash", "run it")

    assert result.returncode == 0, result.stderr
    assert marker.exists()
    assert (
        "zguard: hook guard missed its deadline (0.5 s: deadlines.hook/decide in settings) and decides nothing"
        in notices(result.stderr, "zguard")
    )


def test_fail_closed_of_the_wrong_type_is_bad_settings_naming_the_file_and_key(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"hooks": {"failClosed": "zguard"}})

    result = box.run("-p", "/tools")

    assert result.returncode == 2
    assert no_traceback(result)
    path = box.bingo_home / "settings.json"
    assert result.stderr.strip() == (
        f'bingo: hooks.failClosed in {path} (line 1) is the string "zguard": expected a list of plugin names (strings)'
    )
