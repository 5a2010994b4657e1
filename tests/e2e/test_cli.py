"""The command line's promises: built-in commands, exit codes and one-line errors."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback


def test_help_lists_the_built_in_commands_grouped_by_family(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "/help")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "bingo"
    for command in ("/help", "/tools", "/compact", "/plugins"):
        assert any(line.startswith(command + " ") for line in lines), command


def test_tools_shows_traits_and_what_the_gate_does(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"permissions": {"deny": ["grep"]}})
    result = box.run("-p", "--allow", "bash", "/tools")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:]}
    assert rows["read"].endswith("runs")
    assert "trusted, read-only, parallel, interrupt cancel" in rows["read"]
    assert rows["bash"].endswith("runs (bash)")
    assert "untrusted, writes, serial" in rows["bash"]
    assert rows["grep"].endswith("denied (grep)")


def test_tools_without_a_rule_asks_for_bash(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "/tools")
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:]}
    assert rows["bash"].endswith("asks")


def test_an_unknown_command_is_bad_usage(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "/nope")
    assert result.returncode == 2
    assert result.stderr == "bingo: there is no command /nope: bingo -p /help lists them\n"


def test_settings_that_are_not_json_exit_2_naming_the_file_and_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    settings = box.project / ".bingo" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "model": "x",\n  oops\n}\n', encoding="utf-8")
    result = box.run("-p", "/help")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert str(settings) in line and "line 3" in line
    assert no_traceback(result)


def test_a_settings_key_of_the_wrong_type_exits_2_naming_the_key(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"permissions": {"allow": "bash"}})
    result = box.run("-p", "/help")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "permissions.allow" in line and "settings.json" in line


def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("--no-such-flag")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("bingo: ")
