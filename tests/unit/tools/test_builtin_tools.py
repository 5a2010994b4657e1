"""The set of built-in tools: names, sources, traits and schemas the kernel relies on."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from bingo.kernel.interfaces import Tool, ToolCall
from bingo.tools import builtin_tools
from bingo.wire import Json, ToolOutput, ToolTraits


def _names(tools: Sequence[Tool]) -> list[str]:
    return [tool.spec.name for tool in tools]


def test_builtin_tools_are_read_glob_grep_bash_write_edit_from_builtin() -> None:
    tools = builtin_tools()
    assert _names(tools) == ["read", "glob", "grep", "bash", "write", "edit"]
    assert {tool.source for tool in tools} == {"builtin"}


def test_finding_tools_are_trusted_read_only_concurrent_and_cancellable() -> None:
    finding = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")
    traits = {tool.spec.name: tool.traits for tool in builtin_tools()}
    assert traits["read"] == traits["glob"] == traits["grep"] == finding


def test_bash_is_untrusted_writing_exclusive_and_cancellable() -> None:
    (bash,) = [tool for tool in builtin_tools() if tool.spec.name == "bash"]
    assert bash.traits == ToolTraits(interrupt="cancel")


def test_write_and_edit_are_trusted_but_not_read_only_so_the_gate_asks() -> None:
    traits = {tool.spec.name: tool.traits for tool in builtin_tools()}
    assert traits["write"] == traits["edit"] == ToolTraits(trusted=True)
    assert not traits["edit"].read_only and traits["edit"].interrupt == "block"


def test_every_tool_describes_itself_with_an_object_schema() -> None:
    for tool in builtin_tools():
        schema = tool.spec.input_schema
        assert tool.spec.description
        assert schema["type"] == "object"
        assert "$ref" not in schema and "title" not in schema
        assert schema["required"]
        assert all(name in schema["properties"] for name in schema["required"])


def test_builtin_tools_are_fresh_instances_each_time() -> None:
    first, second = builtin_tools(), builtin_tools()
    assert all(a is not b for a, b in zip(first, second, strict=True))


def test_read_write_and_edit_of_one_set_share_what_they_have_seen(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")

    def run(tools: Sequence[Tool], name: str, raw: Json) -> ToolOutput:
        (tool,) = [t for t in tools if t.spec.name == name]
        call = ToolCall(call_id="c1", input=raw, cwd=str(tmp_path), session="s", turn=1)
        return asyncio.run(tool.call(call))

    ours, theirs = builtin_tools(), builtin_tools()
    assert not run(ours, "read", {"path": "a.txt"}).is_error
    assert run(theirs, "edit", {"path": "a.txt", "oldString": "alpha", "newString": "beta"}).is_error
    assert not run(ours, "edit", {"path": "a.txt", "oldString": "alpha", "newString": "beta"}).is_error
    assert (tmp_path / "a.txt").read_text() == "beta\n"
