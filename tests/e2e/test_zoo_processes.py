"""The fault zoo, part three: processes that will not stop, stop at the worst moment, or leave
children behind — and bingo itself SIGKILLed mid-turn. Whatever happens, the run ends, and
no plugin process, nor any child one forked (even into a session of its own), outlives bingo:
every plugin runs under a subreaper janitor (src/bingo/sandbox/janitor/)."""

from __future__ import annotations

import signal
from pathlib import Path

from bingo.sandbox.janitor import proc as procfs
from tests.e2e._bingo import EXAMPLES, TIMEOUT, Sandbox, no_traceback
from tests.e2e._mcp import python_server
from tests.e2e._scripted import text, use_scripted_model
from tests.e2e._zoo import (
    COUNTED,
    PROVIDER,
    call,
    data_dir,
    fault,
    leftovers,
    marks,
    no_leftovers,
    plugin_notices,
    reads_back,
    tool_results,
    wait_for_mark,
    zoo,
)


def test_a_plugin_that_ignores_tool_cancel_is_waited_for_until_its_deadline(tmp_path: Path) -> None:
    box = zoo(
        tmp_path,
        "ignores-cancel",
        steps=[call("z1", "plugin__ignores-cancel__wait")],
        deadlines={"tool/call": 3},
        plugins={"ignores-cancel": {"delay": 6}},
    )
    with fault("ignores-cancel"):
        proc = box.popen("-p", "go")
        try:
            wait_for_mark(box, "ignores-cancel", "called wait", proc)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=TIMEOUT)
        finally:
            proc.kill()
        assert proc.returncode == 1, err
        assert "Traceback" not in err
        assert "got tool/cancel" in marks(box, "ignores-cancel")
        # Two faults, one notice each: the late answer, then (still busy with the call it
        # ignored the cancel of) not exiting when its stdin closed.
        [notice, stop] = plugin_notices(err, "ignores-cancel")
        assert notice.startswith(
            "ignores-cancel: tool wait: plugin ignores-cancel did not answer tool/call within 3 s: "
        )
        assert "its last stderr line: 'zoo: got tool/cancel, and ignores it'" in notice
        assert stop.startswith("ignores-cancel: did not exit within 2 s of its stdin closing")
        assert "bingo: the turn was interrupted" in err.splitlines()
        reads_back(box)
        no_leftovers(box)


def test_a_crash_notice_quotes_the_error_line_not_the_last_one(tmp_path: Path) -> None:
    # Node's last words on a missing module are its version; the error is lines above it.
    box = zoo(tmp_path, "node-crash", steps=[call("z1", "plugin__node-crash__poke")])
    log = box.logs / "plugin-node-crash.log"
    with fault("node-crash"):
        result = box.run("-p", "go")
        assert result.returncode == 0 and no_traceback(result), result.stderr
        [notice] = plugin_notices(result.stderr, "node-crash")
        assert notice.endswith(
            f"plugin node-crash exited with code 1: its stderr said: \"Error: Cannot find module 'left-pad'\"; log: {log}"
        ), notice
        assert "Node.js v20.20.2" in log.read_text(encoding="utf-8")
        reads_back(box)
        no_leftovers(box)


def test_a_provider_that_dies_mid_stream_fails_the_turn_with_its_last_words(tmp_path: Path) -> None:
    box = zoo(tmp_path, "dies-streaming", provider="plugin__dies-streaming__model")
    log = box.logs / "plugin-dies-streaming.log"
    words = f"plugin dies-streaming exited with code 5: its last stderr line: 'zoo: the model process fell over'; log: {log}"
    with fault("dies-streaming"):
        result = box.run("-p", "go")
        assert result.returncode == 1 and no_traceback(result)
        assert result.stdout == "Half a\n"
        assert plugin_notices(result.stderr, "dies-streaming") == [f"dies-streaming: stopped: {words}"]
        # The turn's failure says how it ended, and leaves the last words to the notice (said once).
        assert result.stderr.splitlines()[-1] == f"bingo: plugin dies-streaming exited with code 5: log: {log}"
        reads_back(box)
        no_leftovers(box)


def test_children_a_plugin_forks_are_gone_when_bingo_exits(tmp_path: Path) -> None:
    # One child stays in the plugin's group, one escapes into a session of its own; both
    # ignore SIGTERM and outlive the plugin itself.
    box = zoo(tmp_path, "forks")
    with fault("forks"):
        result = box.run("-p", "go")
        assert result.returncode == 0, result.stderr
        assert tool_results(box)["wc"] == COUNTED
        assert plugin_notices(result.stderr, "forks") == []
        pids = (data_dir(box, "forks") / "pids.txt").read_text().split()
        assert len(pids) == 3
        reads_back(box)
        no_leftovers(box)


def test_a_plugin_that_ignores_stdin_closing_and_sigterm_is_killed(tmp_path: Path) -> None:
    box = zoo(tmp_path, "ignores-eof")
    with fault("ignores-eof"):
        result = box.run("-p", "go")
        assert result.returncode == 0, result.stderr
        assert result.stdout.endswith("\ndone.\n")
        assert tool_results(box)["wc"] == COUNTED
        [notice] = plugin_notices(result.stderr, "ignores-eof")
        assert notice.startswith("ignores-eof: did not exit within 2 s of its stdin closing")
        assert "stdin closed" in marks(box, "ignores-eof")
        reads_back(box)
        no_leftovers(box)


def test_bingo_killed_mid_turn_leaves_no_plugin_nor_child_behind(tmp_path: Path) -> None:
    box = zoo(tmp_path, "forks", steps=[call("z1", "plugin__forks__wait")])
    with fault("bingo SIGKILLed"):
        proc = box.popen("-p", "go")
        try:
            wait_for_mark(box, "forks", "called wait", proc)
            proc.kill()
            proc.communicate(timeout=TIMEOUT)
        finally:
            proc.kill()
        assert len((data_dir(box, "forks") / "pids.txt").read_text().split()) == 3
        no_leftovers(box)
        assert box.run("-p", "-c", "/tools").returncode == 0
        assert PROVIDER in (box.bingo_home / "settings.json").read_text()
        no_leftovers(box)


def test_nothing_of_a_run_is_alive_the_moment_bingo_has_exited(tmp_path: Path) -> None:
    # A prompt starts the declared plugins and MCP servers as the run starts (ADR-0043): the
    # run ends while they start or just after, and the janitor ends the processes it confined
    # ahead for them. All of it is done before bingo exits, not a moment after (a script that
    # removes the project next found it still being written).
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    python_server(box, "mcp-sdk")
    use_scripted_model(box, [[text("no tools needed")]] * 3)
    for _ in range(3):
        proc = box.popen("-p", "hi")
        out, err = proc.communicate(timeout=TIMEOUT)
        assert (proc.returncode, out) == (0, "no tools needed\n"), err
        assert [pid for pid in _janitors_of(proc.pid) if procfs.alive(pid)] == []
        assert leftovers(box, timeout=0) == []


def _janitors_of(bingo: int) -> list[int]:
    """The janitor processes bingo `bingo` started (their argv names its pid)."""
    return procfs.find(lambda argv: "from janitor import _server" in " ".join(argv) and str(bingo) in argv)
