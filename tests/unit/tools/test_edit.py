"""The edit tool: an exact replacement in a file read in this session, its refusals, and
what it keeps of the file (mode, line endings, a missing final newline)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from bingo.kernel.interfaces import ToolCall
from bingo.tools import EditTool, ReadTool, WriteTool
from bingo.tools._common import Seen, Snapshot
from bingo.tools._read import _read
from bingo.wire import CodeView, Json, TextPart, ToolOutput


class Tools:
    """read, write and edit sharing one ledger, as `builtin_tools()` makes them."""

    def __init__(self, cwd: Path) -> None:
        seen = Seen()
        self.cwd = cwd
        self.read_tool, self.write_tool, self.edit_tool = ReadTool(seen), WriteTool(seen), EditTool(seen)

    def _call(self, tool: ReadTool | WriteTool | EditTool, raw: Json, session: str) -> ToolOutput:
        async def go() -> ToolOutput:
            async with asyncio.timeout(5):
                return await tool.call(ToolCall(call_id="c1", input=raw, cwd=str(self.cwd), session=session, turn=1))

        return asyncio.run(go())

    def read(self, path: str, session: str = "s") -> ToolOutput:
        return self._call(self.read_tool, {"path": path}, session)

    def write(self, path: str, content: str, session: str = "s") -> ToolOutput:
        return self._call(self.write_tool, {"path": path, "content": content}, session)

    def edit(self, path: str, old: str, new: str, *, every: bool = False, session: str = "s") -> ToolOutput:
        return self._call(
            self.edit_tool, {"path": path, "oldString": old, "newString": new, "replaceAll": every}, session
        )


def said(output: ToolOutput) -> str:
    (part,) = output.parts
    assert isinstance(part, TextPart)
    return part.text


def ready(tmp_path: Path, name: str, data: bytes) -> tuple[Tools, Path]:
    path = tmp_path / name
    path.write_bytes(data)
    tools = Tools(tmp_path)
    assert not tools.read(name).is_error
    return tools, path


def test_an_edit_replaces_the_string_and_says_what_changed(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "x.py", b"def f():\n    return 1\n")
    output = tools.edit("x.py", "    return 1\n", "    y = 1\n    z = 2\n    return y + z\n")
    assert not output.is_error
    assert said(output) == "edited x.py: 1 replacement, +3 −1 lines"
    assert path.read_text() == "def f():\n    y = 1\n    z = 2\n    return y + z\n"
    assert output.display == CodeView(
        language="diff",
        text="--- x.py\n+++ x.py\n@@ -1,2 +1,4 @@\n def f():\n-    return 1\n+    y = 1\n+    z = 2\n+    return y + z",
    )


def test_replace_all_changes_every_occurrence_and_counts_them(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"cat and cat\nno\ncat\n")
    output = tools.edit("a.txt", "cat", "dog", every=True)
    assert said(output) == "edited a.txt: 3 replacements, +2 −2 lines"
    assert path.read_text() == "dog and dog\nno\ndog\n"


def test_an_absent_old_string_is_refused_with_what_to_do(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"alpha\n")
    output = tools.edit("a.txt", "beta", "gamma")
    assert output.is_error
    assert said(output) == (
        "a.txt: oldString was not found. It must match the file exactly, whitespace and indentation "
        "included, without read's line-number prefix; read the file again and copy the text to change."
    )
    assert path.read_text() == "alpha\n"


def test_an_ambiguous_old_string_says_how_often_it_occurs(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"x = 1\nx = 1\nx = 1\n")
    output = tools.edit("a.txt", "x = 1", "x = 2")
    assert output.is_error
    assert said(output) == (
        "a.txt: oldString occurs 3 times. Include more of the surrounding lines so that it occurs once, "
        "or pass replaceAll: true to replace all 3."
    )
    assert path.read_text() == "x = 1\nx = 1\nx = 1\n"


def test_an_edit_that_changes_nothing_is_refused(tmp_path: Path) -> None:
    tools, _ = ready(tmp_path, "a.txt", b"alpha\n")
    assert said(tools.edit("a.txt", "alpha", "alpha")).startswith("edit: oldString and newString are the same")
    assert said(tools.edit("a.txt", "", "x")).startswith("edit: oldString is empty")


def test_a_file_not_read_in_this_session_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    tools = Tools(tmp_path)
    assert not tools.read("a.txt", session="other").is_error
    output = tools.edit("a.txt", "alpha", "beta")
    assert output.is_error
    assert said(output) == (
        "a.txt has not been read in this session. Read it first (read a.txt), then edit it: "
        "edit never changes a file you have not seen."
    )
    assert (tmp_path / "a.txt").read_text() == "alpha\n"


def test_a_file_changed_on_disk_since_it_was_read_is_refused(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"alpha\n")
    path.write_text("alpha, changed\n")
    output = tools.edit("a.txt", "alpha", "beta")
    assert (
        said(output)
        == "a.txt has changed on disk since you last read it (6 bytes then, 15 now). Read it again, then edit it."
    )
    assert path.read_text() == "alpha, changed\n"
    assert not tools.read("a.txt").is_error
    assert not tools.edit("a.txt", "alpha", "beta").is_error


def test_same_size_new_bytes_are_a_change_and_a_touch_is_not(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"alpha\n")
    stat = path.stat()
    path.write_text("omega\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "its bytes differ from what you read" in said(tools.edit("a.txt", "omega", "x"))
    assert not tools.read("a.txt").is_error
    os.utime(path, ns=(1, 1))
    assert not tools.edit("a.txt", "omega", "x").is_error


def test_an_edit_counts_as_seen_so_the_next_needs_no_read(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "a.txt", b"one\ntwo\n")
    assert not tools.edit("a.txt", "one", "1").is_error
    assert not tools.edit("a.txt", "two", "2").is_error
    assert path.read_text() == "1\n2\n"


def test_a_missing_file_points_at_write(tmp_path: Path) -> None:
    output = Tools(tmp_path).edit("nope.txt", "a", "b")
    assert said(output) == (
        "nope.txt does not exist. Check the path (relative paths start at the working directory), "
        "or use write to create it."
    )


def test_binary_and_non_utf8_files_are_refused(tmp_path: Path) -> None:
    tools = Tools(tmp_path)
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    assert not tools.read("latin.txt").is_error
    assert said(tools.edit("latin.txt", "caf", "bar")) == (
        "latin.txt is not UTF-8 text (byte 3 is not); edit changes UTF-8 files only. "
        "Use bash to change it, or write to replace it whole."
    )
    (tmp_path / "blob.bin").write_bytes(b"abc\0def")
    assert tools.read("blob.bin").is_error  # read refuses it, so it was never seen
    assert "has not been read" in said(tools.edit("blob.bin", "abc", "x"))


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert said(Tools(tmp_path).edit("d", "a", "b")) == "d is a directory, not a file."


def test_the_files_mode_is_kept(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "run.sh", b"#!/bin/sh\necho hi\n")
    path.chmod(0o750)
    assert not tools.edit("run.sh", "hi", "there").is_error
    assert path.stat().st_mode & 0o7777 == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]  # no temporary file left behind


def test_an_lf_old_string_matches_a_crlf_file_and_new_lines_get_crlf(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "w.txt", b"one\r\ntwo\r\nthree\r\n")
    assert not tools.edit("w.txt", "one\ntwo\n", "1\n2\n2.5\n").is_error
    assert path.read_bytes() == b"1\r\n2\r\n2.5\r\nthree\r\n"
    assert not tools.edit("w.txt", "three", "3\n3.5").is_error
    assert path.read_bytes() == b"1\r\n2\r\n2.5\r\n3\r\n3.5\r\n"


def test_an_lf_part_of_a_mixed_file_stays_lf(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "m.txt", b"a\r\nb\r\nc\r\nx\ny\n")
    assert not tools.edit("m.txt", "x\ny\n", "x\nz\n").is_error
    assert path.read_bytes() == b"a\r\nb\r\nc\r\nx\nz\n"


def test_a_missing_final_newline_stays_missing(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "n.txt", b"first\nlast")
    output = tools.edit("n.txt", "last", "final")
    assert path.read_bytes() == b"first\nfinal"
    assert isinstance(output.display, CodeView)
    assert output.display.text.endswith("-last\n\\ No newline at end of file\n+final\n\\ No newline at end of file")


def test_editing_through_a_symlink_changes_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("alpha\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    tools = Tools(tmp_path)
    assert not tools.read("link.txt").is_error
    assert not tools.edit("real.txt", "alpha", "beta").is_error  # the same file, however named
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "beta\n"


def test_a_ten_megabyte_file_is_edited_and_its_diff_stays_small(tmp_path: Path) -> None:
    lines = [f"line {n:07d} of a large file, padded to be long enough\n" for n in range(200_000)]
    tools, path = ready(tmp_path, "big.txt", "".join(lines).encode())
    assert path.stat().st_size > 10_000_000
    output = tools.edit("big.txt", "line 0150000 of", "LINE 150000 of")
    assert said(output) == "edited big.txt: 1 replacement, +1 −1 lines"
    assert isinstance(output.display, CodeView)
    assert output.display.text.split("\n")[2] == "@@ -149998,7 +149998,7 @@"
    lines[150_000] = lines[150_000].replace("line 0150000 of", "LINE 150000 of")
    assert path.read_text() == "".join(lines)


def test_many_replacements_on_one_long_line_are_one_span(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "min.js", b"a;" * 100_000)
    output = tools.edit("min.js", "a;", "b;", every=True)
    assert said(output) == "edited min.js: 100000 replacements, +1 −1 lines"
    assert path.read_bytes() == b"b;" * 100_000
    assert isinstance(output.display, CodeView)
    assert "… [line cut: " in output.display.text


def test_the_ledger_forgets_the_least_recently_seen_file_past_its_bound() -> None:
    seen = Seen(limit=2)
    snap = Snapshot(mtime_ns=1, size=1, digest=b"d")
    seen.saw("s", Path("/a"), snap)
    seen.saw("s", Path("/b"), snap)
    seen.saw("s", Path("/a"), snap)  # seen again: now the most recent
    seen.saw("t", Path("/c"), snap)
    assert seen.last("s", Path("/a")) == snap
    assert seen.last("s", Path("/b")) is None
    assert seen.last("t", Path("/c")) == snap
    assert seen.last("s", Path("/c")) is None  # another session's sight is not this one's


def test_a_read_cut_short_by_an_interrupt_is_not_a_sight(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    stop = threading.Event()
    assert _read(tmp_path / "a.txt", 1, 10, stop).seen is not None
    stop.set()
    assert _read(tmp_path / "a.txt", 1, 10, stop).seen is None


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    tools = Tools(tmp_path)
    said_edit = said(tools.edit("pipe", "a", "b"))
    assert said_edit == "pipe is a FIFO (a named pipe), not a regular file; edit changes regular files only."
    assert (
        said(tools.write("pipe", "x"))
        == "pipe is a FIFO (a named pipe), not a regular file; write changes regular files only."
    )


def test_a_non_ascii_file_is_edited_where_the_text_matches(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "u.txt", "café → naïve\nzürich 😀 zürich\n".encode())
    assert said(tools.edit("u.txt", "zürich", "Zürich", every=True)) == "edited u.txt: 2 replacements, +1 −1 lines"
    assert said(tools.edit("u.txt", "naïve", "näive")) == "edited u.txt: 1 replacement, +1 −1 lines"
    assert path.read_text(encoding="utf-8") == "café → näive\nZürich 😀 Zürich\n"


def test_an_old_string_copied_with_reads_line_numbers_is_refused_with_that_said(tmp_path: Path) -> None:
    tools, _ = ready(tmp_path, "a.txt", b"alpha\nbeta\n")
    assert said(tools.edit("a.txt", "     1\talpha\n     2\tbeta", "x")) == (
        "a.txt: oldString was not found: it starts with read's line-number prefix (the number and the tab "
        "before each line), which is not in the file. Leave the prefix out and call edit again."
    )
    assert "line-number prefix (the number" not in said(tools.edit("a.txt", "gamma", "x"))


def test_a_read_only_file_is_left_as_it_is(tmp_path: Path) -> None:
    tools, path = ready(tmp_path, "locked.txt", b"alpha\n")
    path.chmod(0o444)
    refused = "locked.txt is read-only (-r--r--r--), so {} leaves it as it is. If it should change, make it writable first (chmod u+w)."
    assert said(tools.edit("locked.txt", "alpha", "beta")) == refused.format("edit")
    assert said(tools.write("locked.txt", "beta\n")) == refused.format("write")
    assert path.read_text() == "alpha\n"
