"""Typos in rules and declarations are named (issue 14 item 3, INTERFACE.md §3), through the
real binary: a rule that can match no tool known this run, in any layer or on the command
line, is named once with the tool meant; a plugin's name given for a tool's is told how its
tools are named; a malformed rule is named with how to write it; a hooks.failClosed name that
is no plugin is named; a ToolSpec spelled as another host spells it (`input_schema`), or
without `inputSchema`, is named once for its plugin."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import EXAMPLES, Sandbox, no_traceback
from tests.e2e._declares import install_declaring
from tests.e2e._scripted import notices


def _bingo_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("bingo: ")]


def _with_wordcount(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    return box


def test_allow_flags_naming_no_tool_are_named_with_the_tool_meant(tmp_path: Path) -> None:
    box = _with_wordcount(tmp_path)

    result = box.run(
        "-p",
        "--allow",
        "plugin__wordcount_count",
        "--allow",
        "wordcount",
        "--allow",
        "bash(ls",
        "--allow",
        "plugin__wordcount__count",
        "/help",
    )

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert _bingo_lines(result.stderr) == [
        "bingo: --allow 'plugin__wordcount_count' matches no tool (did you mean plugin__wordcount__count?)",
        "bingo: --allow 'wordcount' matches no tool: wordcount is a plugin, and a rule names one of its tools "
        "(did you mean plugin__wordcount__count?)",
        "bingo: --allow 'bash(ls' is not a rule: its '(' is not closed by a ')' at its end; write bash(PATTERN), "
        "e.g. bash(git status*) (it allows nothing until it is fixed)",
    ]


def test_malformed_rules_and_failclosed_typos_in_the_users_settings_are_named(tmp_path: Path) -> None:
    box = _with_wordcount(tmp_path)
    box.settings(
        {
            "permissions": {
                "allow": ["plugin__wordcount__count(notes.txt)", "bash()"],
                "deny": ["bash(rm -rf *", "reed(/etc/*)"],
            },
            "hooks": {"failClosed": ["wordcont"]},
        }
    )

    result = box.run("-p", "/help")

    assert result.returncode == 0, result.stderr
    where = box.bingo_home / "settings.json"
    assert _bingo_lines(result.stderr) == [
        f"bingo: {where}: permissions.allow rule 'plugin__wordcount__count(notes.txt)' can match no call: a pattern "
        "narrows only bash, read, write, edit, glob or grep, and plugin__wordcount__count has no main argument "
        "(write plugin__wordcount__count to match every call)",
        f"bingo: {where}: permissions.allow rule 'bash()' is not a rule: its pattern is empty; write bash for every "
        "call, or bash(PATTERN) (it allows nothing until it is fixed)",
        f"bingo: {where}: permissions.deny rule 'bash(rm -rf *' is not a rule: its '(' is not closed by a ')' at its "
        "end; write bash(PATTERN), e.g. bash(git status*) (until it is fixed it denies every call of bash)",
        f"bingo: {where}: permissions.deny rule 'reed(/etc/*)' matches no tool (did you mean read(/etc/*)?)",
        f"bingo: {where}: hooks.failClosed names 'wordcont', which is no plugin (did you mean wordcount?)",
    ]


def test_a_trusted_projects_rule_typo_is_named_once(tmp_path: Path) -> None:
    box = _with_wordcount(tmp_path)
    box.settings({"permissions": {"allow": ["plugin__wordcount__cuont"]}}, layer="project")
    assert box.run("--trust").returncode == 0

    result = box.run("-p", "/help")

    assert result.returncode == 0, result.stderr
    where = box.project / ".bingo" / "settings.json"
    assert _bingo_lines(result.stderr) == [
        f"bingo: {where}: permissions.allow rule 'plugin__wordcount__cuont' matches no tool (did you mean plugin__wordcount__count?)"
    ]


def test_a_rule_that_is_not_a_string_is_bad_settings(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"permissions": {"deny": ["bash", 3]}})

    result = box.run("-p", "/help")

    assert result.returncode == 2
    assert no_traceback(result)
    where = box.bingo_home / "settings.json"
    assert (
        result.stderr
        == f"bingo: permissions.deny[1] in {where} (line 1) is the number 3: expected a tool rule (a string)\n"
    )


def test_a_tool_declared_as_another_host_spells_it_is_named_once_for_its_plugin(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "zdecl")
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = [
        {"name": "count", "description": "counts", "input_schema": schema},
        {"name": "tally", "description": "tallies"},
        {"name": "fine", "inputSchema": schema},
    ]
    box.settings({"plugins": {"zdecl": {"tools": tools}}})

    result = box.run("-p", "/help")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert notices(result.stderr, "zdecl") == [
        "zdecl: tool count has unknown key input_schema (did you mean inputSchema?) and no inputSchema, so the model "
        "is told it takes no input; tool tally has no inputSchema, so the model is told it takes no input "
        "(a tool's keys are name, description, inputSchema)"
    ]
