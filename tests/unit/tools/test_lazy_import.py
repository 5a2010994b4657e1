"""Built-in tools are imported when first used: their stand-ins know each name, traits and
spec, and those are the tools' own; reading every spec (a run's first request) imports no
tool's module (ADR-0043)."""

from __future__ import annotations

import subprocess
import sys

from bingo.tools import BashTool, EditTool, GlobTool, GrepTool, ReadTool, WriteTool, builtin_tools


def test_the_stand_ins_names_and_traits_are_the_tools_own() -> None:
    real = {
        tool.spec.name: tool.traits
        for tool in (ReadTool(), GlobTool(), GrepTool(), BashTool(), WriteTool(), EditTool())
    }
    assert {tool.name: tool.traits for tool in builtin_tools()} == real


def test_the_stand_ins_specs_are_the_tools_own() -> None:
    real = [tool.spec for tool in (ReadTool(), GlobTool(), GrepTool(), BashTool(), WriteTool(), EditTool())]
    assert [tool.spec for tool in builtin_tools()] == real


def test_listing_the_built_in_tools_imports_none_of_them() -> None:
    code = (
        "import sys; from bingo.tools import builtin_tools\n"
        "tools = builtin_tools(); [(t.name, t.traits, t.source) for t in tools]\n"
        "print(sorted(m for m in sys.modules if m.startswith('bingo.tools.')))\n"
        "[t.spec for t in tools]\n"
        "print(sorted(m for m in sys.modules if m.startswith('bingo.tools.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.splitlines() == ["[]", "['bingo.tools._specs']"]
