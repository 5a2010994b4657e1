"""A project's settings, through the real binary: until the person trusts the project, its
`settings.json` and `settings.local.json` give only what tightens (`permissions.deny` and
`.ask`); everything else is left out, named in one notice that says to run `bingo --trust`.
Once trusted they apply whole, until they change. (What bingo writes itself on a "yes,
always" stays trusted: tests/e2e/test_terminal.py, through a real terminal.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import text, tool, use_scripted_model

MARKER = "ran.txt"


def _asks_for_bash(box: Sandbox, **settings: Any) -> None:
    """The model asks for `bash` to write MARKER, then says it is done: without a sandbox,
    where whether it runs is what the settings in force say."""
    settings.setdefault("sandbox", {"mode": "off"})
    use_scripted_model(box, [[tool("b1", "bash", {"command": f"echo ran > {MARKER}"})], [text("done")]], **settings)


def _left_out(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "so bingo left out what it brings" in line]


def test_a_cloned_projects_allow_everything_does_not_let_bash_run(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _asks_for_bash(box)
    box.settings({"permissions": {"allow": ["*"]}}, layer="project")
    result = box.run("-p", "do it")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert not (box.project / MARKER).exists()
    [line] = _left_out(result.stderr)
    project = box.project.resolve()
    assert line == (
        f"bingo: {project} is not a trusted project, so bingo left out what it brings: "
        f".bingo/settings.json: permissions.allow; run bingo --trust in {project} to trust it as it is now"
    )


def test_the_local_settings_file_is_held_to_the_same_rule(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _asks_for_bash(box)
    box.settings({"permissions": {"allow": ["bash"]}, "provider": "elsewhere"}, layer="local")
    result = box.run("-p", "do it")
    assert result.returncode == 0, result.stderr
    assert not (box.project / MARKER).exists()
    [line] = _left_out(result.stderr)
    assert ".bingo/settings.local.json: permissions.allow, provider;" in line


def test_a_projects_deadline_cannot_make_the_users_guard_miss(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "zguard")
    _asks_for_bash(box)
    box.settings({"deadlines": {"hook/decide": 1e-9}}, layer="project")
    result = box.run("-p", "--allow", "bash", "do it")
    assert result.returncode == 0, result.stderr
    assert not (box.project / MARKER).exists()
    [line] = _left_out(result.stderr)
    assert ".bingo/settings.json: deadlines;" in line
    assert "missed its deadline" not in result.stderr


def test_once_trusted_the_projects_settings_apply_until_they_change(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _asks_for_bash(box)
    box.settings({"permissions": {"allow": ["bash"]}}, layer="project")
    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout == f"trusted {box.project.resolve()} as it is now: .bingo/settings.json: permissions.allow\n"
    result = box.run("-p", "do it")
    assert result.returncode == 0, result.stderr
    assert _left_out(result.stderr) == []
    assert (box.project / MARKER).read_text() == "ran\n"
    (box.project / MARKER).unlink()
    # A pull changes the file: it is untrusted again, whatever it now says.
    box.settings({"permissions": {"allow": ["bash", "read"]}}, layer="project")
    _asks_for_bash(box)
    result = box.run("-p", "do it")
    assert not (box.project / MARKER).exists()
    [line] = _left_out(result.stderr)
    assert f"{box.project.resolve()} changed since you trusted it (.bingo/settings.json)" in line


def test_an_untrusted_projects_deny_still_applies_and_needs_no_trust(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _asks_for_bash(box)
    box.settings({"permissions": {"deny": ["bash"], "ask": ["read"]}}, layer="project")
    result = box.run("-p", "--allow", "bash", "do it")
    assert result.returncode == 0, result.stderr
    assert not (box.project / MARKER).exists()
    # Nothing was left out, so there is nothing to say.
    assert _left_out(result.stderr) == []
    assert box.run("--trust").stdout.startswith(f"{box.project.resolve()} brings nothing that needs trust")


def test_bingo_trust_says_nothing_changed_when_nothing_did(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"model": "m"}, layer="project")
    assert box.run("--trust").returncode == 0
    again = box.run("--trust")
    assert again.returncode == 0, again.stderr
    assert (
        again.stdout == f"nothing changed: {box.project.resolve()} is trusted as it is (.bingo/settings.json: model)\n"
    )
