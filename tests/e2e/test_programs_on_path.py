"""A program bingo starts by a bare name is never one the project holds (ADR-0050), through the
real binary: with `.`, an empty entry and a relative `bin` on PATH — as some people's shells
have — and a repository that ships `git`, `find`, `python3` and `npm` at those places, an
untrusted project's prompt runs bingo's first checkpoint (which asks git where its excludes
file is) and starts a plugin whose command is `python3`; none of the repository's programs
runs. The evidence is the file each would have written, outside the project."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def test_a_relative_path_entry_never_runs_the_projects_own_git_find_or_interpreter(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.install(EXAMPLES / "wordcount")
    p = box.project
    (p / "notes.txt").write_text("one two three\n")
    ran = tmp_path / "ran"
    (p / "bin").mkdir()
    for place in (p, p / "bin"):
        for name in ("git", "find", "python3", "npm"):
            (place / name).write_text(f"#!/bin/sh\necho {name} >> {ran}\n")
            (place / name).chmod(0o755)
    use_scripted_model(
        box,
        [[tool("count", "plugin__wordcount__count", {"path": "notes.txt"})], [text("done")]],
        sandbox={"mode": "off"},
    )
    path = os.pathsep.join([".", "", "bin", box.env["PATH"]])
    result = box.run("-p", "count the words", "--allow", "plugin__wordcount__count", env={"PATH": path})
    assert not ran.exists(), ran.read_text()
    assert no_traceback(result), result.stderr
    assert result.returncode == 0, result.stderr
    # The plugin ran, on the interpreter PATH's absolute directories give.
    results = tool_results(model_requests(box)[-1])
    assert "3 words" in result_text(results[0]), results
