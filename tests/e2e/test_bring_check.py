"""`bingo --check-plugin` on what people bring (issue 29 item 5): a host's directory (skills,
commands, settings with command hooks), one line per file or entry, ✓ or ✗ with the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._skills import real_skills


def test_a_hosts_directory_is_checked_file_by_file_and_entry_by_entry(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    claude = box.home / ".claude"
    for name in ("brand-guidelines", "ux-ui-design-system"):
        shutil.copytree(real_skills() / name, claude / "skills" / name)
    (claude / "commands").mkdir()
    (claude / "commands" / "fix.md").write_text("---\nargument-hint: [n] [p]\n---\nFix $1\n", encoding="utf-8")
    (claude / "commands" / "bad.md").write_text("---\ndescription: x\n", encoding="utf-8")
    hooks = {
        "PreToolUse": [
            {"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "no-such-program-here --x"}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "true", "timeout": 5}]},
        ],
        "Notification": [],
    }
    (claude / "settings.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    result = box.run("--check-plugin", str(claude))
    assert result.returncode == 1, result.stderr
    assert no_traceback(result)
    lines = result.stdout.splitlines()
    assert f"✓ skill brand-guidelines ({claude / 'skills' / 'brand-guidelines'})" in lines
    assert any(
        line.startswith("✗ skill ") and "ux-ui-design-system/SKILL.md" in line and "over 1024" in line for line in lines
    )
    assert f"✓ command /fix [n] [p] ({claude / 'commands' / 'fix.md'})" in lines
    assert any(line.startswith("✗ command ") and "bad.md" in line and "not closed" in line for line in lines)
    assert any(line.startswith("✗ hooks.PreToolUse[0].matcher 'Bash(' is not a regular expression") for line in lines)
    assert (
        "✗ hooks.PreToolUse[1].hooks[0]: 'no-such-program-here' is not on PATH: install it or name it by its path"
        in lines
    )
    assert "✓ hooks.PreToolUse[2].hooks[0]: true" in lines
    assert "✗ hooks.Notification: bingo does not run this event" in lines
    report = json.loads(box.run("--check-plugin", str(claude / "skills" / "brand-guidelines"), "--json").stdout)
    assert report["ok"] is True and [c["what"] for c in report["checks"]][0].startswith("skill brand-guidelines")
