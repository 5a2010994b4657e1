"""`/rewind` through the real binary (issue 28, INTERFACE.md §10, ADR-0044): a scripted turn
changes files with `edit`, `write` and `bash` (`rm`, `mv`, `chmod`), and `/rewind` puts every
recorded file back byte-exact with its mode, leaves ignored files alone and names them, sets
the conversation's later frames aside so `-c` goes on from before the prompt, and can itself
be rewound. The evidence is the file system and the model's next request. The edge cases
(links, a file become a directory and back, the bound) are tests/unit/checkpoint's."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, text, tool, use_scripted_model

ALLOW = ("--allow", "edit", "--allow", "write", "--allow", "bash")


def _bingo(box: Sandbox, replies: list[list[dict[str, Any]]], *args: str) -> subprocess.CompletedProcess[str]:
    use_scripted_model(box, replies, sandbox={"mode": "off"}, checkpoints={"maxFileBytes": 1000})
    result = box.run(*ALLOW, *args)
    assert no_traceback(result), result.stderr
    return result


def _prompts(box: Sandbox) -> list[str]:
    """The person's words in the model's latest request."""
    request = model_requests(box)[-1]["request"]
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


def _project(box: Sandbox) -> Path:
    p = box.project
    (p / ".gitignore").write_text("*.log\n")
    (p / "app.py").write_text("x = 1\n")
    (p / "app.py").chmod(0o640)
    (p / "run.sh").write_text("#!/bin/sh\necho run\n")
    (p / "run.sh").chmod(0o755)
    (p / "old.txt").write_bytes(b"old\x00bytes")
    (p / "notes").mkdir()
    (p / "notes" / "a.md").write_text("# a\n")
    (p / "debug.log").write_text("before\n")
    (p / "big.bin").write_bytes(b"b" * 2000)
    return p


TURN = [
    [tool("r1", "read", {"path": "app.py"})],
    [
        tool("e1", "edit", {"path": "app.py", "oldString": "x = 1", "newString": "x = 2"}),
        tool("w1", "write", {"path": "new.txt", "content": "created\n"}),
        tool(
            "b1",
            "bash",
            {"command": "rm old.txt && mv notes moved && chmod 600 run.sh && echo during >> debug.log"},
        ),
    ],
    [text("done")],
]


def _as_before(p: Path) -> None:
    assert (p / "app.py").read_text() == "x = 1\n"
    assert (p / "app.py").stat().st_mode & 0o777 == 0o640
    assert (p / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (p / "old.txt").read_bytes() == b"old\x00bytes"
    assert (p / "notes" / "a.md").read_text() == "# a\n"
    assert not (p / "new.txt").exists()
    assert not (p / "moved").exists()


def _as_after(p: Path) -> None:
    assert (p / "app.py").read_text() == "x = 2\n"
    assert (p / "run.sh").stat().st_mode & 0o777 == 0o600
    assert (p / "new.txt").read_text() == "created\n"
    assert (p / "moved" / "a.md").read_text() == "# a\n"
    assert not (p / "old.txt").exists()
    assert not (p / "notes").exists()


def test_rewind_puts_back_what_a_turn_did_with_edit_write_and_bash_and_can_itself_be_rewound(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    p = _project(box)
    turn = _bingo(box, TURN, "-p", "change the files")
    assert turn.returncode == 0, turn.stderr
    assert "not recorded in checkpoints: big.bin (over checkpoints.maxFileBytes" in turn.stderr
    _as_after(p)

    listed = _bingo(box, [], "-c", "-p", "/rewind")
    assert listed.returncode == 0, listed.stderr
    assert "1. «change the files» · " in listed.stdout
    assert "· 6 files changed since" in listed.stdout  # app, run.sh, new, old, notes/a.md, moved/a.md: not the log
    _as_after(p)  # a list restores nothing

    rewound = _bingo(box, [], "-c", "-p", "/rewind 1")
    assert rewound.returncode == 0, rewound.stderr
    _as_before(p)
    assert (p / "debug.log").read_text() == "before\nduring\n"  # ignored: untouched
    out = rewound.stdout
    assert "creates notes/a.md, old.txt" in out
    assert "changes app.py, run.sh" in out
    assert "removes moved/a.md, new.txt" in out
    assert "ignored by .gitignore: debug.log" in out
    assert "big.bin (over checkpoints.maxFileBytes)" in out

    after = _bingo(box, [[text("fine")]], "-c", "-p", "after the rewind")
    assert after.returncode == 0, after.stderr
    assert _prompts(box) == ["after the rewind"]

    # The rewind is the second newest point: rewinding to it undoes it, files and conversation.
    undone = _bingo(box, [], "-c", "-p", "/rewind 2")
    assert undone.returncode == 0, undone.stderr
    assert "the rewind /rewind 1" in undone.stdout
    _as_after(p)
    again = _bingo(box, [[text("fine")]], "-c", "-p", "and again")
    assert again.returncode == 0, again.stderr
    assert _prompts(box) == ["change the files", "and again"]


def test_rewind_files_or_conversation_restores_only_that(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    p = _project(box)
    assert _bingo(box, TURN, "-p", "change the files").returncode == 0

    only_talk = _bingo(box, [], "-c", "-p", "/rewind 1 --conversation")
    assert only_talk.returncode == 0, only_talk.stderr
    _as_after(p)
    assert _bingo(box, [[text("ok")]], "-c", "-p", "next").returncode == 0
    assert _prompts(box) == ["next"]

    # newest first: "next", the rewind, "change the files"
    only_files = _bingo(box, [], "-c", "-p", "/rewind 3 --files")
    assert only_files.returncode == 0, only_files.stderr
    _as_before(p)
    assert _bingo(box, [[text("ok")]], "-c", "-p", "last").returncode == 0
    assert _prompts(box) == ["next", "last"]


def test_rewind_says_what_is_wrong_with_its_arguments(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "/rewind soon")
    assert result.returncode == 1
    assert "/rewind does not take soon: /rewind [N] [--files | --conversation]" in result.stdout + result.stderr
    assert no_traceback(result)
