"""Command hooks as kernel hooks: Claude Code's names and inputs, the matcher, and what an exit
and an output decide, run by the same `Hooks` that runs plugins' hooks (the one choke point)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from bingo.bring import claude_tool
from bingo.bring._bring import bring
from bingo.kernel.hooks import Hooks
from bingo.kernel.notices import Notices
from bingo.kernel.settings import CommandHookEntry, Settings
from bingo.wire import HookOutcome, HookSpec, Json, Notice
from tests.e2e._scripted import gone


def test_bingos_tools_are_named_as_claude_code_names_them() -> None:
    mcp = {"memory"}
    assert [claude_tool(n, mcp) for n in ("bash", "read", "write", "edit", "glob", "grep")] == [
        "Bash",
        "Read",
        "Write",
        "Edit",
        "Glob",
        "Grep",
    ]
    assert claude_tool("plugin__memory__create_entities", mcp) == "mcp__memory__create_entities"
    assert claude_tool("plugin__wordcount__count", mcp) == "plugin__wordcount__count"  # not an MCP server's
    assert claude_tool("skill", mcp) == "skill"


class _Plugin:
    """A plugin's hook, as the bridge registers one: it records what it saw."""

    source = "guard"
    spec = HookSpec(name="seen", site="tool", points=["before"])

    def __init__(self) -> None:
        self.seen: list[Json] = []

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        self.seen.append(payload)
        return HookOutcome(outcome="continue")

    async def observe(self, point: str, payload: Json) -> None:
        pass


def _entries(
    tmp_path: Path, event: str, matcher: str, script: str, *, timeout: float = 10, fail_closed: bool = False
) -> CommandHookEntry:
    path = tmp_path / f"hook{len(list(tmp_path.iterdir()))}.py"
    path.write_text(script, encoding="utf-8")
    return CommandHookEntry(
        event=event,
        matcher=matcher,
        command=f"{sys.executable} {path}",
        timeout=timeout,
        fail_closed=fail_closed,
        where="settings.json",
    )


async def _decide(
    tmp_path: Path, entries: list[CommandHookEntry], site: str, point: str, payload: Json
) -> tuple[str, str | None, list[Notice], _Plugin]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)
    settings = Settings(command_hooks=tuple(entries))
    brought = bring(
        home=tmp_path / "none",
        user_home=tmp_path / "none",
        project=None,
        settings=settings,
        notices=notices,
        sandbox=None,
        workdir=tmp_path,
        session=lambda: "s-1",
        mcp={"memory"},
    )
    plugin = _Plugin()
    async with Hooks([plugin, *brought.hooks], notices, 5.0) as hooks:
        verdict = await hooks.decide(site, point, payload)
    return verdict.action, verdict.reason, said, plugin


_BASH = {"tool": "bash", "input": {"command": "rm -rf /"}, "callId": "c1"}


@pytest.mark.parametrize(
    ("script", "action", "reason"),
    [
        ("import sys\nsys.stdin.read()\nprint('no', file=sys.stderr)\nsys.exit(2)\n", "deny", "no"),
        ('print(\'{"decision": "block", "reason": "nope"}\')\n', "deny", "nope"),
        (
            'print(\'{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "sure?"}}\')\n',
            "ask",
            "sure?",
        ),
        ('print(\'{"hookSpecificOutput": {"permissionDecision": "allow"}}\')\n', "continue", None),
        ("print('plain words decide nothing')\n", "continue", None),
        ("import sys\nsys.exit(1)\n", "continue", None),
        ('print(\'{"continue": false, "stopReason": "stop"}\')\n', "deny", "stop"),
    ],
)
def test_what_an_exit_and_an_output_decide_at_pretooluse(tmp_path: Path, script: str, action: str, reason: str) -> None:
    entry = _entries(tmp_path, "PreToolUse", "Bash", script)
    got, why, said, plugin = asyncio.run(_decide(tmp_path, [entry], "tool", "before", _BASH))
    assert (got, why) == (action, reason)
    # The plugin's hook, first in the list, saw the same call at the same point.
    assert plugin.seen == [_BASH]
    if script.startswith("import sys\nsys.exit(1)"):
        assert len(said) == 1 and "exited 1, and decides nothing" in said[0].message


def test_the_matcher_is_a_regular_expression_over_claude_codes_names(tmp_path: Path) -> None:
    deny = "import sys\nsys.exit(2)\n"
    for matcher, denied in (("Bash", True), ("Edit|Write", False), ("mcp__.*", False), ("", True), ("*", True)):
        entry = _entries(tmp_path, "PreToolUse", matcher, deny)
        got, *_ = asyncio.run(_decide(tmp_path, [entry], "tool", "before", _BASH))
        assert (got == "deny") is denied, matcher
    entry = _entries(tmp_path, "PreToolUse", "mcp__memory__.*", deny)
    call = {"tool": "plugin__memory__create_entities", "input": {}, "callId": "c2"}
    assert asyncio.run(_decide(tmp_path, [entry], "tool", "before", call))[0] == "deny"


def test_a_matcher_that_backtracks_in_pythons_re_decides_at_once_over_a_long_tool_name(tmp_path: Path) -> None:
    # Its Claude Code name, `mcp__memory__` and 60 `a`s and a `_`: 2^60 steps for Python's `re` (ADR-0051).
    entry = _entries(tmp_path, "PreToolUse", "mcp__memory__(a+)+$", "import sys\nsys.exit(2)\n")
    call = {"tool": "plugin__memory__" + "a" * 60 + "_", "input": {}, "callId": "c3"}
    assert asyncio.run(_decide(tmp_path, [entry], "tool", "before", call))[0] == "continue"


def test_a_matcher_that_is_no_regular_expression_is_one_notice_and_runs_nothing(tmp_path: Path) -> None:
    entry = _entries(tmp_path, "PreToolUse", "Bash(", "import sys\nsys.exit(2)\n")
    got, _, said, _ = asyncio.run(_decide(tmp_path, [entry], "tool", "before", _BASH))
    assert got == "continue"
    assert len(said) == 1 and "matcher 'Bash(' is not a regular expression" in said[0].message


def test_the_hook_reads_claude_codes_input_names(tmp_path: Path) -> None:
    script = (
        "import json, sys\ne = json.load(sys.stdin)\n"
        "ok = e['tool_name'] == 'Edit' and e['tool_input'] == {'file_path': 'a.py', 'old_string': 'x',"
        " 'new_string': 'y', 'replace_all': True} and e['session_id'] == 's-1'\nsys.exit(0 if ok else 2)\n"
    )
    entry = _entries(tmp_path, "PreToolUse", "Edit", script)
    payload = {"tool": "edit", "input": {"path": "a.py", "oldString": "x", "newString": "y", "replaceAll": True}}
    assert asyncio.run(_decide(tmp_path, [entry], "tool", "before", {**payload, "callId": "c"}))[0] == "continue"


def test_userpromptsubmit_asking_asks_and_with_nobody_to_ask_is_an_ask_verdict(tmp_path: Path) -> None:
    script = 'print(\'{"decision": "ask", "reason": "really send?"}\')\n'
    entry = _entries(tmp_path, "UserPromptSubmit", "", script)
    got, why, said, _ = asyncio.run(_decide(tmp_path, [entry], "prompt", "submit", {"text": "hi"}))
    assert (got, why, said) == ("ask", "really send?", [])


def test_userpromptsubmit_exit_2_blocks_and_reads_the_prompt(tmp_path: Path) -> None:
    script = "import json, sys\ne = json.load(sys.stdin)\nsys.exit(2 if 'secret' in e['prompt'] else 0)\n"
    entry = _entries(tmp_path, "UserPromptSubmit", "", script)
    assert asyncio.run(_decide(tmp_path, [entry], "prompt", "submit", {"text": "a secret"}))[0] == "block"
    assert asyncio.run(_decide(tmp_path, [entry], "prompt", "submit", {"text": "hello"}))[0] == "continue"


def test_a_hook_past_its_timeout_is_stopped_with_its_children_and_fails_closed_when_its_entry_says_so(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '30'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(30)\n"
    )
    entry = _entries(tmp_path, "PreToolUse", "", script, timeout=1, fail_closed=True)
    got, why, said, _ = asyncio.run(_decide(tmp_path, [entry], "tool", "before", _BASH))
    assert got == "ask" and why is not None and "fails closed" in why
    assert len(said) == 1 and "did not end within its timeout (1 s) and was stopped" in said[0].message
    # The attacked side: the hook's own child is gone too (its group was killed).
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gone(child)
