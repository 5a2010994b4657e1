"""A pattern the model writes cannot hang a turn, nor the run's exit after it (ADR-0051),
through the real binary: `grep` for `(a+)+$` over a line of 60 `a`s, and `glob` for
`*a*a*a*a*a*a*a*a*a*a*a*a*b` over a file named with 60 — each of which held Python's
backtracking `re` for longer than a test can wait (2^60 steps) — answer, and bingo exits. The
evidence is the run ending within the harness's timeout, and each tool's result."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def test_a_backtracking_grep_or_glob_pattern_answers_and_the_run_ends(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    long = "a" * 60
    (box.project / "lines.txt").write_text(f"{long}!\nplain\n")
    (box.project / long).write_text("x\n")
    use_scripted_model(
        box,
        [
            [
                tool("g", "grep", {"pattern": "(a+)+$"}),
                tool("f", "glob", {"pattern": "*a*a*a*a*a*a*a*a*a*a*a*a*b"}),
                tool("l", "grep", {"pattern": "(?<=a)!"}),
            ],
            [text("done")],
        ],
    )
    result = box.run("-p", "look", "--allow", "grep", "--allow", "glob")  # the harness's timeout: 60 s
    assert no_traceback(result), result.stderr
    assert result.returncode == 0, result.stderr
    grep, glob, lookbehind = (result_text(r) for r in tool_results(model_requests(box)[-1]))
    assert grep == "No lines match '(a+)+$'."
    assert glob == "No files match '*a*a*a*a*a*a*a*a*a*a*a*a*b' under the working directory."
    assert "invalid perl operator: (?<=" in lookbehind and "no look-around or backreferences" in lookbehind


def test_a_long_command_against_a_rule_of_many_wildcards_is_decided_at_once(tmp_path: Path) -> None:
    # Python's `re` took 13.6 s for this rule against 1.6 kB, growing as the length to the
    # power of its wildcards: with 40 kB the gate (on the event loop) would never decide.
    # A deny rule is asked of every call: this one does not match, so the call runs.
    box = Sandbox(tmp_path)
    command = "git " + "a b " * 10_000 + "x"
    use_scripted_model(
        box,
        [[tool("b", "bash", {"command": command})], [text("done")]],
        permissions={"deny": ["bash(git * b * b * b * y)"]},
    )
    result = box.run("-p", "go")
    assert no_traceback(result), result.stderr
    assert result.returncode == 0, result.stderr
    [ran] = tool_results(model_requests(box)[-1])
    assert "'a' is not a git command" in result_text(ran)
