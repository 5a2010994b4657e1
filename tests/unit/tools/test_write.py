"""The write tool: it creates files, replaces only files read in this session and unchanged
since, and keeps what read does not show (mode, CRLF, a final newline or its absence)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bingo.tools import _write
from bingo.tools._diff import unified
from bingo.tools._write import _span, kept
from bingo.wire import CodeView
from tests.unit.tools.test_diff import apply
from tests.unit.tools.test_edit import Tools, ready, said


def test_write_creates_a_file_and_its_directories(tmp_path: Path) -> None:
    output = Tools(tmp_path).write("src/new/mod.py", "a = 1\nb = 2\n")
    assert not output.is_error
    assert said(output) == "created src/new/mod.py: 2 lines"
    assert (tmp_path / "src/new/mod.py").read_text() == "a = 1\nb = 2\n"
    assert output.display == CodeView(
        language="diff", text="--- /dev/null\n+++ src/new/mod.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2"
    )


def test_write_refuses_to_replace_a_file_not_read_in_this_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep me\n")
    output = Tools(tmp_path).write("a.txt", "gone\n")
    assert output.is_error
    assert said(output) == (
        "a.txt has not been read in this session. Read it first (read a.txt), then write it: "
        "write never changes a file you have not seen."
    )
    assert (tmp_path / "a.txt").read_text() == "keep me\n"


def test_write_replaces_a_file_read_first_and_shows_the_diff(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"one\ntwo\n")
    output = tools.write("a.txt", "one\n2\nthree\n")
    assert said(output) == "wrote a.txt: +2 −1 lines (3 lines in all)"
    assert path.read_text() == "one\n2\nthree\n"
    assert isinstance(output.display, CodeView)
    assert output.display.text == "--- a.txt\n+++ a.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+2\n+three"


def test_write_refuses_a_file_changed_on_disk_since_it_was_read(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"one\n")
    path.write_text("someone else's\n")
    assert "has changed on disk since you last read it" in said(tools.write("a.txt", "mine\n"))
    assert path.read_text() == "someone else's\n"


def test_write_keeps_mode_crlf_and_a_missing_final_newline(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "w.bat", b"@echo off\r\necho hi")
    path.chmod(0o700)
    assert not tools.write("w.bat", "@echo off\necho there\n").is_error
    assert path.read_bytes() == b"@echo off\r\necho there"
    assert path.stat().st_mode & 0o7777 == 0o700


def test_a_write_counts_as_seen(tmp_path: Path) -> None:
    tools = Tools(tmp_path)
    assert not tools.write("a.txt", "one\n").is_error
    assert not tools.write("a.txt", "two\n").is_error
    assert not tools.edit("a.txt", "two", "three").is_error
    assert (tmp_path / "a.txt").read_text() == "three\n"


def test_writing_the_same_content_changes_nothing(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"same\n")
    before = path.stat().st_mtime_ns
    assert said(tools.write("a.txt", "same\n")) == "a.txt already holds this content (1 line); nothing changed."
    assert path.stat().st_mtime_ns == before


def test_a_directory_is_not_written(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert said(Tools(tmp_path).write("d", "x")) == "d is a directory, not a file."


def test_what_a_replacement_keeps_of_the_old_file() -> None:
    assert kept("a\r\nb\r\n", "x\ny\n") == "x\r\ny\r\n"
    assert kept("a\nb", "x\ny\n") == "x\ny"
    assert kept("a\r\nb", "x\r\ny\r\n") == "x\r\ny"
    assert kept("a\n", "x") == "x\n"
    assert kept("a\r\n", "x") == "x\r\n"
    assert kept("", "x") == "x"
    assert kept("a\n", "") == ""


def test_a_path_through_dot_dot_is_named_as_it_lands(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    output = Tools(tmp_path / "sub").write("../top.txt", "x\n")
    assert said(output) == f"created {tmp_path / 'top.txt'}: 1 line"
    inside = Tools(tmp_path).write("sub/../here.txt", "x\n")
    assert said(inside) == "created here.txt: 1 line"


def _rewrites(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(3000):
        old = "".join(rnd.choice(["a", "b", "\n", "\n", "cc\n"]) for _ in range(rnd.randint(0, 30)))
        new = list(old)
        for _ in range(rnd.randint(0, 4)):
            at = rnd.randint(0, len(new))
            new[at : at + rnd.randint(0, 3)] = rnd.choice(["", "x", "\n", "y\n", "a"])
        new_text = "".join(new)
        diff = unified(old, _span(old, new_text), "f", "f")
        assert (diff.text == "") == (old == new_text)
        if diff.text:
            assert apply(old, diff.text) == new_text


def test_random_rewrites_give_a_diff_that_applies_back() -> None:
    _rewrites(19)


def test_random_rewrites_compared_in_small_blocks_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_write, "_STRIDE", 3)
    _rewrites(23)
