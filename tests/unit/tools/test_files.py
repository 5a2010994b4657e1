"""`FILES`: read, write and edit reach a file through an editor's files when a session sets
them (the ACP surface does), and the local disk is not touched then."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bingo.kernel.interfaces import ToolCall
from bingo.tools import FILES, EditTool, ReadTool, WriteTool
from bingo.tools._common import Seen
from bingo.wire import CodeView, Json, TextPart, ToolOutput


class Buffers:
    """An editor's open buffers: what `read` finds and `write` leaves, by absolute path."""

    def __init__(self, files: dict[Path, bytes]) -> None:
        self.files = dict(files)
        self.reads: list[Path] = []

    def read(self, path: Path) -> bytes:
        self.reads.append(path)
        if path not in self.files:
            raise FileNotFoundError(2, "no such buffer", str(path))
        return self.files[path]

    def write(self, path: Path, data: bytes) -> None:
        self.files[path] = data


def run(tool: ReadTool | WriteTool | EditTool, raw: Json, cwd: Path, buffers: Buffers) -> ToolOutput:
    async def go() -> ToolOutput:
        FILES.set(buffers)  # in this task only, as a session's turn sets it
        async with asyncio.timeout(5):
            return await tool.call(ToolCall(call_id="c1", input=raw, cwd=str(cwd), session="s", turn=1))

    return asyncio.run(go())


def text(output: ToolOutput) -> str:
    return "".join(part.text for part in output.parts if isinstance(part, TextPart))


def test_read_edit_and_write_go_through_the_editors_files_and_leave_the_disk_alone(tmp_path: Path) -> None:
    on_disk = tmp_path / "notes.txt"
    on_disk.write_bytes(b"saved\n")
    buffers = Buffers({on_disk: b"unsaved one\nunsaved two\n"})
    seen = Seen()
    read, edit, write = ReadTool(seen), EditTool(seen), WriteTool(seen)

    shown = run(read, {"path": "notes.txt"}, tmp_path, buffers)
    assert "unsaved one" in text(shown) and not shown.is_error
    edited = run(edit, {"path": "notes.txt", "oldString": "two", "newString": "2"}, tmp_path, buffers)
    assert not edited.is_error, text(edited)
    assert buffers.files[on_disk] == b"unsaved one\nunsaved 2\n"
    assert isinstance(edited.display, CodeView) and "+unsaved 2" in edited.display.text
    created = run(write, {"path": "new.txt", "content": "fresh\n"}, tmp_path, buffers)
    assert not created.is_error, text(created)
    assert buffers.files[tmp_path / "new.txt"] == b"fresh\n"
    assert on_disk.read_bytes() == b"saved\n" and not (tmp_path / "new.txt").exists()


def test_an_edit_of_a_buffer_changed_since_it_was_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    buffers = Buffers({path: b"one\n"})
    seen = Seen()
    assert not run(ReadTool(seen), {"path": "a.txt"}, tmp_path, buffers).is_error
    buffers.files[path] = b"one typed\n"  # the person typed in the editor since
    refused = run(EditTool(seen), {"path": "a.txt", "oldString": "one", "newString": "1"}, tmp_path, buffers)
    assert refused.is_error and "changed" in text(refused)
    assert buffers.files[path] == b"one typed\n"


def test_a_buffer_the_editor_does_not_have_is_a_missing_file(tmp_path: Path) -> None:
    output = run(ReadTool(Seen()), {"path": "gone.txt"}, tmp_path, Buffers({}))
    assert output.is_error and "does not exist" in text(output)
