"""How the terminal draws what it did not choose the shape of, through the real binary in
a pty (issue 25 item 11, ADR-0034): `/plugins` fits a narrow terminal without cutting a
cell, a code block in the model's markdown has no blank lines of padding, and `-c` redraws
a compaction as a line saying so, not as a prompt the person typed."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect

from tests.e2e._bingo import BINGO, EXAMPLES, Sandbox
from tests.e2e._scripted import text, use_scripted_model
from tests.e2e.test_terminal import Screen, terminal
from tests.support.model_server import Reply

NARROW = 60


def test_plugins_fits_a_narrow_terminal_and_cuts_no_cell(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    env = {**box.env, "TERM": "xterm", "LANG": "C.UTF-8", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": str(NARROW)}
    child = pexpect.spawn(
        BINGO, [], cwd=str(box.project), env=env, dimensions=(40, NARROW), encoding="utf-8", timeout=10
    )
    try:
        screen = Screen(child)
        screen.expect(">")
        child.send("/plugins\r")
        drawn = screen.expect(r"\nplugins *\nwordcount *\n(?:.*\n)*? +path +\S+ *\n(?: +\S+ *\n)*").group(0)
        screen.prompt()
        child.sendcontrol("d")
        assert screen.exits() == 0
    finally:
        child.close(force=True)
    assert all(len(line.rstrip()) <= NARROW for line in drawn.splitlines())
    assert "…" not in drawn
    assert re.search(r"\n +contributes +tool plugin__wordcount__count, command", drawn)
    rows = drawn.splitlines()
    at = next(n for n, row in enumerate(rows) if row.strip().startswith("path "))
    path = rows[at].strip().removeprefix("path").strip() + "".join(row.strip() for row in rows[at + 1 :])
    assert path == str(box.bingo_home / "plugins" / "wordcount")  # folded at the edge, never cut


def test_a_code_block_in_the_models_markdown_has_no_blank_padding(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with terminal(box, [[("text", "Run:\n\n```sh\nmake test\n```\n")]]) as screen:
        screen.child.send("how\r")
        # One blank line sets the block off; no line of padding above or below its code.
        screen.expect(r"\n {0,2}\n make test *\n(?! {20})")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert not re.search(r"\n {40,}\n make test", screen.text())


def test_continue_redraws_a_compaction_as_a_summary_line_not_as_a_typed_prompt(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[text("answer one")]], compactor="trim")
    assert box.run("-p", "first question").returncode == 0
    use_scripted_model(box, [[text("answer two")]], compactor="trim")
    assert box.run("-p", "-c", "second question").returncode == 0
    compacted = box.run("-p", "-c", "/compact")
    assert compacted.returncode == 0 and "compacted by trim" in compacted.stdout, compacted.stdout + compacted.stderr
    replies: list[Reply] = []
    with terminal(box, replies, "-c") as screen:
        screen.expect(
            r"the conversation so far ─+\nearlier conversation compacted: 2 messages *\n> second question *\nanswer two *\n─+\n"
        )
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
        assert "> Earlier in this conversation" not in screen.text()
        assert "Understood." not in screen.text()
