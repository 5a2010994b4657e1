"""Each author mistake of issue 18 is a plugin (tests/plugins/mistakes/) that
`bingo --check-plugin --call` catches: a ✗ line naming the mistake, with its fix, and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e._bingo import TEST_PLUGINS, Sandbox

MISTAKES = TEST_PLUGINS / "mistakes"

CAUGHT: dict[str, tuple[str, str, str]] = {
    # mistake: (the check that fails, words of what it found, words of its fix)
    "hook-site-dotted": (
        "declarations.hooks",
        "hook guard refused: site 'tool.before' is not a site",
        '{"site": "tool", "points": ["before"]}',
    ),
    "input-schema-snake": (
        "declarations.keys",
        "tool count has unknown key input_schema (did you mean inputSchema?) and no inputSchema",
        "rename it",
    ),
    "strict-params": (
        "behaviour.extra-params",
        "answered command/complete, tool/call with Invalid params (-32602)",
        "in Python take **_ too",
    ),
    "pretty-printed": ("behaviour.lines", "pretty-printed", "write each message as one line of JSON"),
    "string-ids": (
        "behaviour.ids",
        "answered id '1', which the host never asked",
        "bingo's request ids are integers: answer with the id exactly as it came",
    ),
    "display-strings": (
        "call.count.display",
        "its display was dropped, the parts were kept: Expected `object`, got `str` - at `$.items[0]`",
        "never bare strings",
    ),
    "relative-args": (
        "manifest.paths",
        "`entry.args[0]` 'main.py' names a file of the plugin's directory by a relative path",
        "write ${PLUGIN_ROOT}/main.py",
    ),
    "stdout-banner": (
        "start.quiet",
        "wrote 1 line to stdout before it answered initialize (first: 'mistake plugin ready!')",
        "a banner or a log line goes to stderr",
    ),
}


def test_every_mistake_plugin_is_in_the_table() -> None:
    assert sorted(CAUGHT) == sorted(path.name for path in MISTAKES.iterdir() if path.is_dir())


@pytest.mark.parametrize("mistake", sorted(CAUGHT))
def test_the_checker_catches_each_author_mistake_with_its_fix(tmp_path: Path, mistake: str) -> None:
    box = Sandbox(tmp_path)
    # A plugin whose answers never arrive is held to initialize's deadline: short, to be quick
    # (both forms run at once, for the same reason).
    box.settings({"deadlines": {"initialize": 4}})
    as_json = box.popen("--check-plugin", str(MISTAKES / mistake), "--call", "--json")
    as_text = box.popen("--check-plugin", str(MISTAKES / mistake), "--call")
    out, err = as_json.communicate(timeout=60)
    text, _ = as_text.communicate(timeout=60)
    assert "Traceback" not in err + out
    assert as_json.returncode == 1 and as_text.returncode == 1, out
    report = json.loads(out)
    check_id, found, fix = CAUGHT[mistake]
    [check] = [check for check in report["checks"] if check["id"] == check_id]
    assert check["status"] == "fail"
    assert found in check["detail"]
    assert fix in check["fix"]
    assert any(
        line.startswith("✗ ") and found in line and f"; fix: {check['fix']}" in line for line in text.splitlines()
    )
