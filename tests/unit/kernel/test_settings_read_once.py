"""Each settings file is read once a run: the untrusted and the trusted merge come from the
same bytes, and a channel that moves to another project keeps the user layer as first read."""

from __future__ import annotations

import json
from pathlib import Path

from bingo.kernel.settings import read_settings


def _write(path: Path, document: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_the_trusted_merge_uses_the_bytes_the_untrusted_merge_read(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    _write(home / "settings.json", {"permissions": {"allow": ["read"]}})
    _write(project / ".bingo" / "settings.json", {"permissions": {"allow": ["grep"], "deny": ["bash"]}})
    files = read_settings(home=home, project=project)
    untrusted = files.merged(project_trusted=False)
    # Changed after it was read (as a tool of the first turn could): not read again.
    _write(project / ".bingo" / "settings.json", {"permissions": {"allow": ["bash"]}})
    _write(home / "settings.json", {"permissions": {"allow": ["write"]}})
    trusted = files.merged(project_trusted=True)
    assert untrusted.permissions.allow == ("read",) and untrusted.permissions.deny == ("bash",)
    assert untrusted.left_out == trusted.left_out and "settings.json" in trusted.left_out
    assert trusted.permissions.allow == ("read", "grep")
    assert trusted.permissions.deny == ("bash",)


def test_merging_twice_gives_the_same_settings(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    _write(
        home / "settings.json", {"permissions": {"allow": ["read"]}, "sandbox": {"network": {"allow": ["a.example"]}}}
    )
    _write(project / ".bingo" / "settings.local.json", {"permissions": {"ask": ["bash"]}, "model": "m"})
    files = read_settings(home=home, project=project, overrides={"permissions": {"allow": ["glob"]}})
    assert files.merged(project_trusted=True) == files.merged(project_trusted=True)
    assert files.merged(project_trusted=False) == files.merged(project_trusted=False)


def test_another_project_keeps_the_user_layer_as_first_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first, second = tmp_path / "first", tmp_path / "second"
    _write(home / "settings.json", {"permissions": {"allow": ["read"]}})
    _write(second / ".bingo" / "settings.json", {"permissions": {"deny": ["bash"]}})
    files = read_settings(home=home, project=first)
    _write(home / "settings.json", {"permissions": {"allow": ["write"]}})
    moved = read_settings(home=home, project=second, user=files).merged(project_trusted=False)
    assert moved.permissions.allow == ("read",)
    assert moved.permissions.deny == ("bash",)
