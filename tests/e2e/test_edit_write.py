"""`write` and `edit` through the real binary with the scripted model (issue 15 item 1): an
edit of a file read first succeeds, the model is told a short summary and the person sees the
diff; each refusal reaches the model in words it can act on; write creates a file and
replaces one, keeping its mode and CRLF line endings; without a rule the gate refuses them in
--print, since they are not read-only; the terminal draws the diff in colour."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def _turn(
    tmp_path: Path, calls: list[dict[str, Any]], files: dict[str, bytes], *allow: str
) -> tuple[Sandbox, Any, list[dict[str, Any]]]:
    """One turn in which the model makes `calls`, one per response, then says "done."; the
    results the model was told, in order."""
    box = Sandbox(tmp_path)
    for name, data in files.items():
        (box.project / name).write_bytes(data)
    use_scripted_model(box, [[call] for call in calls] + [[text("done.")]])
    flags = [flag for rule in allow for flag in ("--allow", rule)]
    result = box.run("-p", *flags, "change the file")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    return box, result, tool_results(model_requests(box)[-1])


def _read(path: str) -> dict[str, Any]:
    return tool("r1", "read", {"path": path})


def _edit(path: str, old: str, new: str, **more: Any) -> dict[str, Any]:
    return tool("e1", "edit", {"path": path, "oldString": old, "newString": new, **more})


def test_an_edit_of_a_file_read_first_changes_it_and_shows_the_diff(tmp_path: Path) -> None:
    box, result, told = _turn(
        tmp_path,
        [_read("app.py"), _edit("app.py", "    return 1\n", "    x = 1\n    y = 2\n    return x + y\n")],
        {"app.py": b"def f():\n    return 1\n\nprint(f())\n"},
        "edit",
    )
    assert (box.project / "app.py").read_text() == "def f():\n    x = 1\n    y = 2\n    return x + y\n\nprint(f())\n"
    assert result_text(told[-1]) == "edited app.py: 1 replacement, +3 −1 lines"
    assert not told[-1].get("isError")
    assert result.stdout == (
        "--- app.py\n+++ app.py\n@@ -1,4 +1,6 @@\n def f():\n-    return 1\n+    x = 1\n+    y = 2\n"
        "+    return x + y\n \n print(f())\ndone.\n"
    )


def test_replace_all_changes_every_occurrence(tmp_path: Path) -> None:
    box, _, told = _turn(
        tmp_path,
        [_read("n.txt"), _edit("n.txt", "old", "new", replaceAll=True)],
        {"n.txt": b"old\nkeep\nold old\n"},
        "edit",
    )
    assert (box.project / "n.txt").read_text() == "new\nkeep\nnew new\n"
    assert result_text(told[-1]) == "edited n.txt: 3 replacements, +2 −2 lines"


@pytest.mark.parametrize(
    ("old", "said"),
    [
        (
            "absent",
            "n.txt: oldString was not found. It must match the file exactly, whitespace and indentation "
            "included, without read's line-number prefix; read the file again and copy the text to change.",
        ),
        (
            "twice",
            "n.txt: oldString occurs 2 times. Include more of the surrounding lines so that it occurs once, "
            "or pass replaceAll: true to replace all 2.",
        ),
    ],
)
def test_an_edit_whose_old_string_is_absent_or_not_unique_is_refused(tmp_path: Path, old: str, said: str) -> None:
    box, result, told = _turn(
        tmp_path, [_read("n.txt"), _edit("n.txt", old, "x")], {"n.txt": b"twice\ntwice\n"}, "edit"
    )
    assert told[-1]["isError"]
    assert result_text(told[-1]) == said
    assert (box.project / "n.txt").read_text() == "twice\ntwice\n"
    assert "@@" not in result.stdout


def test_an_edit_of_a_file_not_read_is_refused(tmp_path: Path) -> None:
    box, _, told = _turn(tmp_path, [_edit("n.txt", "alpha", "beta")], {"n.txt": b"alpha\n"}, "edit")
    assert told[-1]["isError"]
    assert result_text(told[-1]) == (
        "n.txt has not been read in this session. Read it first (read n.txt), then edit it: "
        "edit never changes a file you have not seen."
    )
    assert (box.project / "n.txt").read_text() == "alpha\n"


def test_an_edit_of_a_file_changed_on_disk_since_it_was_read_is_refused(tmp_path: Path) -> None:
    changed = tool("b1", "bash", {"command": "printf 'alpha and more\\n' > n.txt"})
    box, _, told = _turn(
        tmp_path, [_read("n.txt"), changed, _edit("n.txt", "alpha", "beta")], {"n.txt": b"alpha\n"}, "edit", "bash"
    )
    assert told[-1]["isError"]
    assert result_text(told[-1]) == (
        "n.txt has changed on disk since you last read it (6 bytes then, 15 now). Read it again, then edit it."
    )
    assert (box.project / "n.txt").read_text() == "alpha and more\n"


def test_an_edit_keeps_crlf_line_endings_and_the_files_mode(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    script = box.project / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho one\r\necho two\r\n")
    script.chmod(0o751)
    use_scripted_model(
        box, [[_read("run.sh")], [_edit("run.sh", "echo one\necho two\n", "echo 1\necho 2\necho 3\n")], [text("done.")]]
    )
    result = box.run("-p", "--allow", "edit", "change it")
    assert result.returncode == 0, result.stderr
    assert script.read_bytes() == b"#!/bin/sh\r\necho 1\r\necho 2\r\necho 3\r\n"
    assert script.stat().st_mode & 0o7777 == 0o751


def test_write_creates_a_file_allowed_by_settings(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box,
        [[tool("w1", "write", {"path": "docs/notes.md", "content": "# Notes\n\nfirst\n"})], [text("done.")]],
        permissions={"allow": ["write"]},
    )
    result = box.run("-p", "write notes")
    assert result.returncode == 0, result.stderr
    assert (box.project / "docs" / "notes.md").read_text() == "# Notes\n\nfirst\n"
    [told] = tool_results(model_requests(box)[-1])
    assert result_text(told) == "created docs/notes.md: 3 lines"
    assert result.stdout == "--- /dev/null\n+++ docs/notes.md\n@@ -0,0 +1,3 @@\n+# Notes\n+\n+first\ndone.\n"


def test_write_replaces_a_read_file_keeping_mode_crlf_and_no_final_newline(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path = box.project / "w.bat"
    path.write_bytes(b"@echo off\r\necho hi")
    path.chmod(0o700)
    write = tool("w1", "write", {"path": "w.bat", "content": "@echo off\necho there\n"})
    use_scripted_model(box, [[_read("w.bat")], [write], [text("done.")]])
    result = box.run("-p", "--allow", "write", "rewrite it")
    assert result.returncode == 0, result.stderr
    assert path.read_bytes() == b"@echo off\r\necho there"
    assert path.stat().st_mode & 0o7777 == 0o700
    [_, told] = tool_results(model_requests(box)[-1])
    assert result_text(told) == "wrote w.bat: +1 −1 lines (2 lines in all)"


def test_write_of_an_existing_file_not_read_is_refused(tmp_path: Path) -> None:
    box, _, told = _turn(
        tmp_path, [tool("w1", "write", {"path": "n.txt", "content": "gone\n"})], {"n.txt": b"keep\n"}, "write"
    )
    assert told[-1]["isError"]
    assert result_text(told[-1]).startswith("n.txt has not been read in this session. Read it first")
    assert (box.project / "n.txt").read_text() == "keep\n"


def test_without_a_rule_edit_and_write_are_refused_in_print_mode(tmp_path: Path) -> None:
    calls = [
        _read("n.txt"),
        _edit("n.txt", "alpha", "beta"),
        tool("w1", "write", {"path": "new.txt", "content": "x\n"}),
    ]
    box, result, told = _turn(tmp_path, calls, {"n.txt": b"alpha\n"})
    assert [result_text(block) for block in told[1:]] == [
        "edit is not allowed here: add it to permissions.allow or pass --allow",
        "write is not allowed here: add it to permissions.allow or pass --allow",
    ]
    assert (box.project / "n.txt").read_text() == "alpha\n"
    assert not (box.project / "new.txt").exists()
    assert "bingo: edit is not allowed here: add it to permissions.allow or pass --allow" in result.stderr.splitlines()


def test_in_the_terminal_an_edits_diff_is_drawn_in_colour(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import terminal

    box = Sandbox(tmp_path)
    del box.env["NO_COLOR"]
    (box.project / "app.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    replies = [
        [("tool", "r1", "read", {"path": "app.py"})],
        [("tool", "e1", "edit", {"path": "app.py", "oldString": "return 1", "newString": "return 2"})],
        [("text", "Changed it.")],
    ]
    with terminal(box, replies, "--allow", "edit") as screen:
        screen.expect(">")
        screen.child.send("change it\r")
        screen.expect(r"\+    return 2")
        screen.expect(r"Changed it\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert (box.project / "app.py").read_text(encoding="utf-8") == "def f():\n    return 2\n"
    # rich's diff lexer: removed lines bright red, added lines bright green.
    assert re.search(r"\x1b\[91[;0-9]*m-    return 1", screen.raw)
    assert re.search(r"\x1b\[92[;0-9]*m\+    return 2", screen.raw)
