"""Command hooks in settings: each layer adds its own (a project's cannot replace the
person's), an untrusted project's are not in force, and a hook bingo does not run is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bingo.kernel.errors import SettingsError
from bingo.kernel.settings import load_settings


def _write(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def _hook(command: str, **extra: object) -> dict[str, object]:
    return {"matcher": "Bash", "hooks": [{"type": "command", "command": command, **extra}]}


def test_each_layer_adds_its_hooks_and_an_untrusted_projects_are_not_in_force(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    _write(home / "settings.json", {"hooks": {"PreToolUse": [_hook("mine", timeout=5, failClosed=True)]}})
    _write(project / ".bingo" / "settings.json", {"hooks": {"PreToolUse": [_hook("theirs")], "Stop": [_hook("s")]}})
    trusted = load_settings(home=home, project=project, project_trusted=True)
    assert [(h.event, h.command, h.timeout, h.fail_closed) for h in trusted.command_hooks] == [
        ("PreToolUse", "mine", 5.0, True),
        ("PreToolUse", "theirs", None, False),
        ("Stop", "s", None, False),
    ]
    untrusted = load_settings(home=home, project=project, project_trusted=False)
    assert [h.command for h in untrusted.command_hooks] == ["mine"]
    assert untrusted.left_out["settings.json"] == ("hooks",)


def test_a_hook_of_another_type_is_one_line_and_the_file_still_loads(tmp_path: Path) -> None:
    home = tmp_path / "home"
    entry = {"hooks": [{"type": "prompt", "prompt": "Is this safe?"}, {"type": "command", "command": "ok"}]}
    _write(home / "settings.json", {"hooks": {"PreToolUse": [entry]}})
    settings = load_settings(home=home, project=tmp_path / "p", project_trusted=False)
    assert [h.command for h in settings.command_hooks] == ["ok"]
    assert any(
        "hooks.PreToolUse[0].hooks[0] is of type 'prompt', which bingo does not run" in line
        for line in settings.unknown
    )


def test_a_hook_entry_of_the_wrong_shape_is_bad_settings_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write(home / "settings.json", {"hooks": {"PreToolUse": [{"matcher": 3, "hooks": []}]}})
    with pytest.raises(SettingsError) as caught:
        load_settings(home=home, project=tmp_path / "p", project_trusted=False)
    assert "hooks.PreToolUse[0]" in caught.value.message
