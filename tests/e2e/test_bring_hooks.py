"""Command hooks in Claude Code's shape, through the real binary (INTERFACE.md section 11).

The hook scripts are written as Claude Code's hooks documentation shows them: JSON on stdin
(`tool_name`, `tool_input.command`), exit 2 with the reason on stderr, or a JSON decision on
stdout. Evidence comes from the attacked side: the file a refused command would have written
does not exist, the marker file an untrusted project's hook would write is absent, the model
was never sent a prompt a hook blocked."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bingo.sandbox import probe
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

# Claude Code's documented guard, in its shape: read the event, refuse `rm -rf` with exit 2.
_GUARD = """\
import json, sys
event = json.load(sys.stdin)
try:  # the hook runs in the sandbox: ~/.bingo is a secret path
    open({escape!r}, "w").write("out")
except OSError:
    pass
with open({log!r}, "a") as log:
    log.write(json.dumps(event) + "\\n")
command = event.get("tool_input", {{}}).get("command", "")
if "rm -rf" in command:
    print("Blocked: rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
sys.exit(0)
"""


def _script(path: Path, body: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return f"{sys.executable} {path}"


def _hooks(**events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"hooks": events}


def _entry(command: str, matcher: str = "", **extra: Any) -> dict[str, Any]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}


def test_a_pretooluse_guard_that_exits_2_denies_the_bash_call_and_the_command_never_runs(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    log = box.project / "hook-saw.jsonl"
    escape = box.bingo_home / "escaped"
    guard = _script(box.home / "hooks" / "guard.py", _GUARD.format(log=str(log), escape=str(escape)))
    victim = box.project / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n", encoding="utf-8")
    written = box.project / "written-by-bash.txt"
    use_scripted_model(
        box,
        [
            [tool("b1", "bash", {"command": f"rm -rf {victim} && echo gone > {written}"})],
            [tool("b2", "bash", {"command": "echo fine"})],
            [text("done")],
        ],
        hooks={"PreToolUse": [_entry(guard, "Bash")]},
    )
    result = box.run("-p", "clean up", "--allow", "bash")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    # The attacked side: nothing of the refused command ran.
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    assert not written.exists()
    requests = model_requests(box)
    [refused] = tool_results(requests[1])
    assert refused["isError"] and "Blocked: rm -rf is not allowed here" in result_text(refused)
    [fine] = [b for b in tool_results(requests[2]) if b["toolUseId"] == "b2"]
    assert "fine" in result_text(fine) and not fine.get("isError")
    # What the hook read: Claude Code's field and tool names.
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [e["tool_input"]["command"] for e in events] == [f"rm -rf {victim} && echo gone > {written}", "echo fine"]
    first = events[0]
    assert first["hook_event_name"] == "PreToolUse" and first["tool_name"] == "Bash"
    assert first["tool_use_id"] == "b1" and first["cwd"] == str(box.project.resolve())
    assert isinstance(first["session_id"], str) and first["session_id"]
    if probe().confines:
        assert not escape.exists()  # it ran confined, as bash's commands do


def test_a_json_deny_refuses_an_edit_and_allow_decides_nothing(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    target = box.project / "notes.txt"
    target.write_text("old\n", encoding="utf-8")
    deny = _script(
        box.home / "hooks" / "deny.py",
        "import json, sys\nevent = json.load(sys.stdin)\n"
        "assert event['tool_input']['file_path'].endswith('notes.txt'), event\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'deny',"
        " 'permissionDecisionReason': 'notes are frozen'}}))\n",
    )
    allow = _script(
        box.home / "hooks" / "allow.py",
        "import json\nprint(json.dumps({'hookSpecificOutput': {'permissionDecision': 'allow'}}))\n",
    )
    use_scripted_model(
        box,
        [
            [tool("r1", "read", {"path": str(target)})],
            [tool("e1", "edit", {"path": str(target), "oldString": "old", "newString": "new"})],
            [tool("w1", "write", {"path": str(box.project / "other.txt"), "content": "x"})],
            [text("done")],
        ],
        hooks={"PreToolUse": [_entry(deny, "Edit"), _entry(allow, "Write")]},
    )
    result = box.run("-p", "edit it")
    assert result.returncode == 0, result.stderr
    assert target.read_text(encoding="utf-8") == "old\n"
    assert not (box.project / "other.txt").exists()  # allow allowed nothing: the gate still asked, nobody said yes
    requests = model_requests(box)
    [edit] = [b for b in tool_results(requests[2]) if b["toolUseId"] == "e1"]
    assert "notes are frozen" in result_text(edit)
    [write] = [b for b in tool_results(requests[3]) if b["toolUseId"] == "w1"]
    assert "is not allowed here" in result_text(write)
    assert "answered allow, which decides nothing in bingo" in result.stderr


def test_a_userpromptsubmit_hook_that_exits_2_blocks_the_prompt_before_the_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    block = _script(
        box.home / "hooks" / "secrets.py",
        "import json, sys\nevent = json.load(sys.stdin)\n"
        "if 'password' in event['prompt']:\n    print('no secrets in prompts', file=sys.stderr)\n    sys.exit(2)\n",
    )
    use_scripted_model(box, [[text("ok")]], hooks={"UserPromptSubmit": [_entry(block)]})
    result = box.run("-p", "my password is hunter2")
    assert result.returncode == 1
    assert "no secrets in prompts" in result.stderr
    assert model_requests(box) == []
    result = box.run("-p", "hello")
    assert result.returncode == 0, result.stderr
    assert len(model_requests(box)) == 1


def test_a_hook_past_its_timeout_or_printing_nonsense_is_one_notice_and_fails_closed_when_asked(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    slow = _script(box.home / "hooks" / "slow.py", "import sys, time\nsys.stdin.read()\ntime.sleep(30)\n")
    nonsense = _script(box.home / "hooks" / "nonsense.py", "print('{not json')\n")
    use_scripted_model(
        box,
        [
            [tool("g1", "glob", {"pattern": "*"})],
            [tool("g2", "grep", {"pattern": "x"})],
            [text("done")],
        ],
        hooks={
            "PreToolUse": [
                _entry(slow, "Glob", timeout=1),
                _entry(nonsense, "Grep", failClosed=True),
            ]
        },
    )
    result = box.run("-p", "look")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("command hooks: ")]
    [late] = [line for line in lines if "slow.py" in line]
    assert "did not end within its timeout (1 s) and was stopped, and decides nothing" in late
    [bad] = [line for line in lines if "nonsense.py" in line]
    assert "starts like JSON and is not" in bad and "is treated as ask (failClosed)" in bad
    requests = model_requests(box)
    [glob] = tool_results(requests[1])
    assert not glob.get("isError")  # decided nothing: glob ran
    [grep] = [b for b in tool_results(requests[2]) if b["toolUseId"] == "g2"]
    # Failed closed: the gate asked, and with nobody to ask grep (which runs without a rule) was refused.
    assert grep["isError"] and "nonsense.py (command hooks) asked to confirm grep" in result_text(grep)


def test_an_untrusted_projects_hook_never_runs(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marker = box.project / "hook-ran"
    hook = _script(box.project / ".claude" / "hooks" / "mark.py", f"open({str(marker)!r}, 'w').write('ran')\n")
    box.settings({"hooks": {"UserPromptSubmit": [_entry(hook)], "SessionStart": [_entry(hook)]}}, layer="project")
    use_scripted_model(box, [[text("ok")], [text("ok")]])
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    [notice] = [line for line in result.stderr.splitlines() if "bingo --trust" in line]
    assert "settings.json: hooks" in notice
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert marker.read_text(encoding="utf-8") == "ran"


def test_the_watching_events_reach_their_hooks_with_claude_codes_fields(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    log = box.project / "events.jsonl"
    watch = _script(
        box.home / "hooks" / "watch.py",
        f"import json, sys\nopen({str(log)!r}, 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')\n",
    )
    use_scripted_model(
        box,
        [[tool("g1", "glob", {"pattern": "*.txt"})], [text("done")]],
        hooks={event: [_entry(watch)] for event in ("PostToolUse", "Stop", "SessionStart", "SessionEnd")},
    )
    (box.project / "a.txt").write_text("a\n", encoding="utf-8")
    result = box.run("-p", "look")
    assert result.returncode == 0, result.stderr
    events = {e["hook_event_name"]: e for e in map(json.loads, log.read_text(encoding="utf-8").splitlines())}
    assert set(events) == {"PostToolUse", "Stop", "SessionStart", "SessionEnd"}
    after = events["PostToolUse"]
    assert after["tool_name"] == "Glob" and after["tool_input"] == {"pattern": "*.txt"}
    assert "a.txt" in json.dumps(after["tool_response"])
    assert events["Stop"]["session_id"] == events["SessionEnd"]["session_id"] != ""
