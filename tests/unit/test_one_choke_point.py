"""Every path that calls a tool passes the one choke point where hooks run (INTERFACE.md
sections 3 and 11): plugin hooks and command hooks alike, since both are kernel `Hook`s in the
registry's list that `Hooks.decide("tool", "before", ...)` runs.

Read from the source, as test_architecture.py reads imports: a new path that calls a tool
without passing `Conversation._call_tool` fails here, before any test of behaviour could miss it."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "bingo"

_ALLOWED = {
    # The conversation's one execution of a call, reached only from `_call_tool` (below).
    ("kernel/turn.py", "_execute"),
    # A built-in stand-in handing the call to the tool it imports on first use.
    ("tools/__init__.py", "call"),
    # `bingo --check-plugin DIR --call`: a developer's check of a plugin, in no conversation
    # (no model, no session, a temporary dataDir), with its own `--call` opt-in.
    ("bridge/check/_server.py", "_call"),
    ("bridge/check/_probe.py", "tool"),
}

_MADE = {
    ("kernel/turn.py", "_execute"),
    # The question's dry run of `write` or `edit` (ADR-0034): `preview` writes nothing.
    ("run/_run.py", "preview"),
    ("bridge/check/_server.py", "_call"),
    ("bridge/check/_probe.py", "tool"),
    ("bridge/check/_probe.py", "_cancelled"),
}
"""Where a `ToolCall` is made: without one, no tool can be called."""


def _calls_of_tool_call() -> set[tuple[str, str]]:
    """(module, function) of every `<x>.call(<a ToolCall>)` in src: a call whose one
    positional argument is a name `call` or a `ToolCall(...)`."""
    found: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "call"
                    and len(node.args) == 1
                    and isinstance(node.args[0], ast.Name)
                    and node.args[0].id == "call"
                ):
                    found.add((path.relative_to(SRC).as_posix(), function.name))
    return found


def test_a_tool_is_called_only_where_the_conversation_executes_a_call() -> None:
    found = _calls_of_tool_call()
    assert ("kernel/turn.py", "_execute") in found
    assert found - _ALLOWED == set()


def test_a_tool_call_is_made_only_where_a_call_is_executed_previewed_or_checked() -> None:
    made: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ToolCall":
                    made.add((path.relative_to(SRC).as_posix(), function.name))
    assert made <= _MADE, made - _MADE


def _function(path: Path, name: str) -> ast.AsyncFunctionDef:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    [found] = [n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef) and n.name == name]
    return found


def test_the_execution_is_reached_only_after_the_tool_before_hooks_and_the_gate() -> None:
    turn = SRC / "kernel" / "turn.py"
    tree = ast.parse(turn.read_text(encoding="utf-8"))
    callers = {
        function.name
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_execute"
    }
    assert callers == {"_call_tool"}
    body = ast.unparse(_function(turn, "_call_tool"))
    hooks = body.index("self.hooks.decide('tool', 'before'")
    gate = body.index("self.gate.decide(")
    execute = body.index("self._execute(")
    assert hooks < gate < execute
    # Every tool use of a model response goes through `_call_tool` (alone or in a batch).
    run_tools = ast.unparse(_function(turn, "_run_tools"))
    assert run_tools.count("self._call_tool(") == 2
