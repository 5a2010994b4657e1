"""The bash tool: merged, bounded output and exit codes; progress; and no process left
behind, whether the command ends, times out or is cancelled."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bingo.kernel.interfaces import ToolCall
from bingo.sandbox import Policy, probe
from bingo.sandbox.janitor import proc as procfs
from bingo.tools import BashTool
from bingo.tools._bash import _Capture
from bingo.wire import Json, TextPart, ToolOutput

GONE_DEADLINE = 5.0


def _call(cwd: Path, raw: Json, progress: Callable[[str], None] | None = None) -> ToolCall:
    call = ToolCall(call_id="c1", input=raw, cwd=str(cwd), session="s", turn=1)
    if progress is not None:
        call.progress = progress
    return call


_CONFINED = [False]
"""Whether this test's commands run confined (issue 24): every promise here holds on both
paths, the direct spawn and the janitor's confined one."""


@pytest.fixture(autouse=True, params=["direct", "confined"])
def path(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.param == "confined" and not probe().confines:
        pytest.skip("this kernel cannot confine: " + "; ".join(probe().missing))
    _CONFINED[0] = request.param == "confined"
    yield
    _CONFINED[0] = False


def _tool(cwd: Path) -> BashTool:
    if _CONFINED[0]:
        return BashTool(policy=Policy(denied=(), writable=(cwd.resolve(),), protected=(), proxy=None))
    return BashTool()


def _bash(cwd: Path, raw: Json, progress: Callable[[str], None] | None = None) -> ToolOutput:
    async def go() -> ToolOutput:
        async with asyncio.timeout(5):
            return await _tool(cwd).call(_call(cwd, raw, progress))

    return asyncio.run(go())


def _text(output: ToolOutput) -> str:
    (part,) = output.parts
    assert isinstance(part, TextPart)
    return part.text


def _wait_gone(pid: int) -> bool:
    # Process death has no event to wait on from here: poll, with a deadline. A zombie has
    # ended; it only waits for a parent that reaps (PID 1 in a container may not).
    deadline = time.monotonic() + GONE_DEADLINE
    while procfs.alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_bash_answers_merged_output_and_the_exit_code(tmp_path: Path) -> None:
    output = _bash(tmp_path, {"command": "echo out; echo err >&2; pwd"})
    assert not output.is_error
    assert _text(output) == f"out\nerr\n{tmp_path}\n[exit code 0]"


def test_bash_nonzero_exit_is_an_error_output(tmp_path: Path) -> None:
    output = _bash(tmp_path, {"command": "echo nope; exit 3"})
    assert output.is_error
    assert _text(output) == "nope\n[exit code 3]"


def test_bash_with_no_output_says_so(tmp_path: Path) -> None:
    assert _text(_bash(tmp_path, {"command": "true"})) == "(no output)\n[exit code 0]"


def test_bash_stdin_is_empty(tmp_path: Path) -> None:
    assert _text(_bash(tmp_path, {"command": "cat; echo done"})) == "done\n[exit code 0]"


def test_bash_keeps_the_head_and_tail_of_long_output(tmp_path: Path) -> None:
    command = "head -c 40000 /dev/zero | tr '\\0' a; head -c 60000 /dev/zero | tr '\\0' b"
    text = _text(_bash(tmp_path, {"command": command}))
    head, cut, tail = text.split("\n")[:3]
    assert head == "a" * 15_000
    assert cut == "[… 70000 characters of output cut …]"
    assert tail == "b" * 15_000
    assert text.endswith("\n[exit code 0]")


def test_bash_reports_a_command_killed_by_a_signal(tmp_path: Path) -> None:
    output = _bash(tmp_path, {"command": "kill -KILL $$"})
    assert output.is_error
    assert _text(output) == "(no output)\n[killed by signal SIGKILL]"


def test_bash_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    output = _bash(tmp_path, {"command": "sleep 60 & echo $$ $!; wait", "timeout": 0.3})
    assert output.is_error
    first, status = _text(output).split("\n")
    assert status.startswith("[timed out after 0.3 s: the command and every process")
    shell, child = (int(pid) for pid in first.split())
    assert _wait_gone(child)
    assert _wait_gone(shell)


def test_bash_timeout_kills_a_group_that_ignores_sigterm(tmp_path: Path) -> None:
    command = "trap '' TERM; sleep 60 & echo $$ $!; wait; wait"
    output = _bash(tmp_path, {"command": command, "timeout": 0.2})
    assert output.is_error
    shell, child = (int(pid) for pid in _text(output).split("\n")[0].split())
    assert _wait_gone(child)
    assert _wait_gone(shell)


def test_bash_timeout_with_endless_output_keeps_head_and_tail(tmp_path: Path) -> None:
    output = _bash(tmp_path, {"command": "yes", "timeout": 0.2})
    assert output.is_error
    lines = _text(output).split("\n")
    assert lines[0] == "y"
    assert any(line.startswith("[… ") for line in lines)
    assert lines[-1].startswith("[timed out after 0.2 s")


def test_bash_leaves_no_background_child_behind(tmp_path: Path) -> None:
    output = _bash(tmp_path, {"command": "sleep 60 & echo $!"})
    assert not output.is_error
    child = int(_text(output).split("\n")[0])
    assert _wait_gone(child)


def test_cancelling_a_bash_call_kills_the_group_and_cancels(tmp_path: Path) -> None:
    pids: list[int] = []

    async def go() -> None:
        async with asyncio.timeout(5):
            seen = asyncio.Event()

            def progress(line: str) -> None:
                pids.extend(int(pid) for pid in line.split())
                seen.set()

            call = _call(tmp_path, {"command": "sleep 60 & echo $$ $!; wait"}, progress)
            task = asyncio.create_task(_tool(tmp_path).call(call))
            await seen.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(go())
    assert len(pids) == 2
    for pid in pids:
        assert _wait_gone(pid)


def test_bash_reports_the_last_output_line_as_progress(tmp_path: Path) -> None:
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        if line == "first":
            (tmp_path / "go").touch()

    # The command waits for the test to have seen "first" before it says "second".
    command = "echo first; while [ ! -e go ]; do sleep 0.01; done; echo; echo second; echo"
    output = _bash(tmp_path, {"command": command}, progress)
    assert not output.is_error
    assert lines == ["first", "second"]


def test_bash_progress_is_throttled_to_the_latest_line(tmp_path: Path) -> None:
    lines: list[str] = []
    _bash(tmp_path, {"command": "for i in $(seq 1000); do echo line $i; done"}, lines.append)
    assert 1 <= len(lines) < 1000
    assert lines[-1] == "line 1000"


def test_progress_line_follows_carriage_returns_and_split_chunks() -> None:
    capture = _Capture()
    capture.feed(b"downloading 10%\rdownloading 6")
    assert capture.last_line == "downloading 6"
    capture.feed(b"0%\r")
    assert capture.last_line == "downloading 60%"
    capture.feed("caf\u00e9".encode()[:-1])
    capture.feed("caf\u00e9".encode()[-1:] + b"\n\n")
    assert capture.last_line == "caf\u00e9"
    assert capture.text() == "downloading 10%\rdownloading 60%\rcaf\u00e9\n\n"


def test_bash_in_a_missing_directory_is_an_error_output(tmp_path: Path) -> None:
    output = _bash(tmp_path / "gone", {"command": "true"})
    assert output.is_error
    assert _text(output).startswith(f"bash: cannot start in {tmp_path / 'gone'}: ")


def test_bash_answers_bad_input_with_an_error_naming_the_field(tmp_path: Path) -> None:
    cases: list[tuple[Json, str]] = [
        ({"command": 1}, "$.command"),
        ({"command": "true", "timeout": 601}, "$.timeout"),
        ({"command": "true", "timeout": 0}, "$.timeout"),
        ({}, "`command`"),
    ]
    for raw, named in cases:
        output = _bash(tmp_path, raw)
        assert output.is_error
        assert named in _text(output)
