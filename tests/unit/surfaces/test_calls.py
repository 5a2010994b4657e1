"""What a person sees of a call (`surfaces._calls`, ADR-0034): the tidy line, the first lines
of a result, a question's preview; and the dry run of `edit` and `write` it shows, which
writes nothing. The counts on a change's line are read from what the tools say, so this
file pins that wording through the real tools."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bingo.kernel.interfaces import Tool, ToolCall
from bingo.surfaces._calls import call_line, preview_of, result_lines, subject
from bingo.tools import builtin_tools, preview
from bingo.wire import Json, TextPart, ToolOutput


def _run(tools: dict[str, Tool], name: str, input: Json, cwd: Path, *, dry: bool = False) -> ToolOutput:
    async def go() -> ToolOutput:
        tool = tools[name]
        call = ToolCall(call_id="c", input=input, cwd=str(cwd), session="s", turn=1)
        if dry:
            planned = await preview(tool, call)
            assert planned is not None
            return planned
        return await tool.call(call)

    return asyncio.run(go())


def test_a_change_shows_its_counts_and_its_dry_run_writes_nothing(tmp_path: Path) -> None:
    tools: dict[str, Tool] = {tool.name: tool for tool in builtin_tools(str(tmp_path))}
    (tmp_path / "calc.py").write_text("a = 1\nb = 2\n", encoding="utf-8")
    _run(tools, "read", {"path": "calc.py"}, tmp_path)
    edit: Json = {"path": "calc.py", "oldString": "b = 2\n", "newString": "b = 3\nc = 4\n"}
    planned = _run(tools, "edit", edit, tmp_path, dry=True)
    assert (tmp_path / "calc.py").read_text(encoding="utf-8") == "a = 1\nb = 2\n"
    shown = preview_of("edit", edit, planned)
    assert shown.kind == "diff" and "-b = 2\n+b = 3\n+c = 4" in shown.text
    assert call_line("edit", edit, _run(tools, "edit", edit, tmp_path)) == "✓ edit calc.py (+2 −1)"
    new: Json = {"path": "sub/notes.md", "content": "one\ntwo\n"}
    _run(tools, "write", new, tmp_path, dry=True)
    assert not (tmp_path / "sub").exists()  # no directory made either
    assert call_line("write", new, _run(tools, "write", new, tmp_path)) == "✓ write sub/notes.md (2 lines)"
    again: Json = {"path": "sub/notes.md", "content": "one\nthree\n"}
    assert call_line("write", again, _run(tools, "write", again, tmp_path)) == "✓ write sub/notes.md (+1 −1)"


def test_a_call_the_tool_would_refuse_previews_the_reason_and_the_input() -> None:
    refused = ToolOutput(parts=[TextPart(text="x.py has not been read in this session. Read it first.")], is_error=True)
    shown = preview_of("edit", {"path": "x.py"}, refused)
    assert (shown.kind, shown.note) == (
        "json",
        "edit will refuse this: x.py has not been read in this session. Read it first.",
    )
    assert shown.text == '{\n  "path": "x.py"\n}'


def test_subjects_are_short_one_line_and_escaped() -> None:
    assert subject("bash", {"command": "make\nmake test\nmake install"}) == "make (+2 lines)"
    assert subject("plugin__x__y", {"query": "two  words"}) == "two words"
    assert subject("plugin__x__y", {"a": 1, "b": "c\x1b[2J"}) == "a=1 b=c\\x1b[2J"
    assert len(subject("plugin__x__y", {"q": "x" * 500})) == 60


def test_a_results_first_lines_are_shown_and_the_rest_counted() -> None:
    output = ToolOutput(parts=[TextPart(text="\n".join(str(n) for n in range(10)) + "\n" + "y" * 300)])
    lines, more = result_lines("bash", output, lines=3, width=20)
    assert (lines, more) == (["0", "1", "2"], 8)
    assert result_lines("read", output) == ([], 0)  # its line says what it read
    assert result_lines("bash", ToolOutput(parts=[TextPart(text="x")], is_error=True)) == ([], 0)
