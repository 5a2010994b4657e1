"""Issue 11, item 4: a hook declared with a site or point bingo does not have is refused at
the handshake with one notice naming it and the valid pairs, is not listed by `/plugins`,
and the rest of its plugin works. Before, such a hook was accepted, listed, and never run:
a guard meant to keep the model out of `.env` silently guarded nothing."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import install_declaring
from tests.e2e._scripted import notices

PAIRS = (
    "a hook names one site and its points: tool (before, after), prompt (submit), "
    "command (before), turn (start, end), session (start, end)"
)

HOOKS = [
    {"name": "dotted", "site": "tool.before", "points": ["before"]},
    {"name": "plural", "site": "tools", "points": ["before"]},
    {"name": "early", "site": "tool", "points": ["pre"]},
    {"name": "bare", "site": "tool", "points": []},
    {"name": "fine", "site": "tool", "points": ["before"]},
]
REFUSED = [
    f"guard: hook dotted refused: site 'tool.before' is not a site; {PAIRS}",
    f"guard: hook plural refused: site 'tools' is not a site; {PAIRS}",
    f"guard: hook early refused: point 'pre' is not of site 'tool'; {PAIRS}",
    f"guard: hook bare refused: it names no points of site 'tool'; {PAIRS}",
]


def _box(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    install_declaring(box, "guard")
    box.settings({"plugins": {"guard": {"hooks": HOOKS, "commands": ["greet"]}}})
    return box


def test_a_hook_of_no_valid_site_and_point_is_refused_with_one_notice_and_not_listed(tmp_path: Path) -> None:
    box = _box(tmp_path)

    listed = box.run("-p", "/plugins")

    assert listed.returncode == 0, listed.stderr
    assert no_traceback(listed)
    assert notices(listed.stderr, "guard") == REFUSED
    [row] = [line for line in listed.stdout.splitlines() if line.startswith("guard ")]
    assert "hook fine (tool: before)" in row and "command /greet" in row
    for name in ("dotted", "plural", "early", "bare"):
        assert f"hook {name}" not in listed.stdout


def test_the_rest_of_the_plugin_works_and_the_refusal_holds_from_the_declaration_cache(tmp_path: Path) -> None:
    box = _box(tmp_path)
    box.run("-p", "/plugins")  # the first run files the declaration

    greeted = box.run("-p", "/greet")

    assert (greeted.returncode, greeted.stdout.strip()) == (0, "guard's own /greet"), greeted.stderr
    assert notices(greeted.stderr, "guard") == REFUSED
