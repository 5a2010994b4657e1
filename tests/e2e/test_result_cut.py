"""Tool results too large for the context are cut in one place, for every tool: the model is
told how much was cut and how to get the rest — `read` the exact offset to go on from, `bash`
how to narrow its output, a plugin's tool to ask for less — and the session keeps what the
model was told."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

_WINDOW = 20_000
"""Tokens: one result may then hold a tenth, 2 000 tokens, about 8 000 characters."""
_ROOM = _WINDOW // 10 * 4

_NOTE = re.compile(
    r"\n\[bingo cut this result to fit the context: (\d+) of its (\d+) characters were left out; "
    r"one result may hold about (\d+) characters\. (.*)\]$"
)


def test_a_plugins_tool_result_is_cut_with_a_note_saying_how_much_and_what_to_narrow(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")
    said = "".join(f"line {n:05}\n" for n in range(5_000))  # 55 000 characters
    use_scripted_model(
        box, [[tool("c1", "plugin__echo-node__echo", {"text": said})], [text("done")]], contextWindow=_WINDOW
    )
    result = box.run("-p", "--allow", "plugin__echo-node__echo", "echo it")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    [block] = tool_results(model_requests(box)[1])
    told = result_text(block)
    note = _NOTE.search(told)
    assert note is not None, told[-300:]
    cut, total, room, how = int(note[1]), int(note[2]), int(note[3]), note[4]
    assert total == len(said) and room == _ROOM
    kept = told[: note.start()]
    assert said.startswith(kept) and len(kept) == total - cut and len(kept) <= _ROOM
    assert kept.endswith("\n" + kept.splitlines()[-1]) and re.fullmatch(
        r"line \d{5}", kept.splitlines()[-1]
    )  # ends on a whole line
    assert how == "To see the rest, call plugin__echo-node__echo again asking for less (narrower input)."
    # The session keeps what the model was told, not the whole answer.
    db = sqlite3.connect(box.bingo_home / "data" / "sessions.db")
    [(data,)] = db.execute("SELECT data FROM frames WHERE kind = 'toolResult'").fetchall()
    assert json.loads(data)["output"]["parts"][0]["text"] == told


def test_read_is_told_the_offset_its_next_call_starts_at_and_that_call_works(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "big.txt").write_text(
        "".join(f"row {n} " + "." * 40 + "\n" for n in range(1, 3_001)), encoding="utf-8"
    )
    replies = [[tool("r1", "read", {"path": "big.txt"})], [text("reading on")]]
    use_scripted_model(box, replies, contextWindow=_WINDOW)
    first = box.run("-p", "read big.txt")
    assert first.returncode == 0, first.stderr
    [block] = tool_results(model_requests(box)[1])
    told = result_text(block)
    note = _NOTE.search(told)
    assert note is not None, told[-300:]
    offset = re.fullmatch(
        r"The rest starts at line (\d+): read again with offset=(\d+) and limit=(\d+) to see about as much as fits\.",
        note[4],
    )
    assert offset is not None, note[4]
    following, again, limit = int(offset[1]), int(offset[2]), int(offset[3])
    kept_lines = told[: note.start()].split("\n")
    # Every line kept is whole and numbered; the next offset is the line after the last one.
    assert kept_lines[-1] == f"{following - 1:6}\trow {following - 1} " + "." * 40
    assert again == following and limit == (following - 1) - (following - 1) // 10

    use_scripted_model(
        box,
        [[tool("r2", "read", {"path": "big.txt", "offset": again, "limit": limit})], [text("ok")]],
        contextWindow=_WINDOW,
    )
    second = box.run("-p", "-c", "go on")
    assert second.returncode == 0, second.stderr
    more = result_text(tool_results(model_requests(box)[-1])[-1])
    assert more.startswith(f"{following:6}\trow {following} ")
    assert "bingo cut this result" not in more  # the limit it was told fits


def test_bash_output_past_the_budget_is_cut_with_how_to_narrow_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[tool("b1", "bash", {"command": "seq 1 20000"})], [text("done")]], contextWindow=_WINDOW)
    result = box.run("-p", "--allow", "bash", "count")
    assert result.returncode == 0, result.stderr
    told = result_text(tool_results(model_requests(box)[1])[0])
    note = _NOTE.search(told)
    assert note is not None, told[-300:]
    assert told.startswith("1\n2\n3\n")
    assert note[4].startswith("To see the rest, run the command again with its output narrowed (head -n, tail -n")


def test_a_result_that_fits_is_untouched(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")
    use_scripted_model(
        box,
        [[tool("c1", "plugin__echo-node__echo", {"text": "x" * (_ROOM - 10)})], [text("done")]],
        contextWindow=_WINDOW,
    )
    result = box.run("-p", "--allow", "plugin__echo-node__echo", "echo it")
    assert result.returncode == 0, result.stderr
    assert result_text(tool_results(model_requests(box)[1])[0]) == "x" * (_ROOM - 10)
