"""Ctrl-C twice, through the real binary: the first keeps the seed's promise (`tool/cancel` is
sent and the answer awaited); the second ends the wait. The plugin that ignored its cancel
is stopped with one notice, the call ends as cancelled, and bingo ends the turn as
interrupted — in seconds, not at the tool's 600 s deadline — leaving no process behind."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from tests.e2e._zoo import call, fault, marks, no_leftovers, plugin_notices, wait_for_mark, zoo

STOP_WAIT = 30
"""Far less than the call's deadline (600 s) and the plugin's delay (300 s): a run still going
by then was not stopped by the second Ctrl-C."""


def test_a_second_ctrl_c_stops_a_plugin_that_ignores_its_cancel(tmp_path: Path) -> None:
    box = zoo(
        tmp_path,
        "ignores-cancel",
        steps=[call("z1", "plugin__ignores-cancel__wait")],
        plugins={"ignores-cancel": {"delay": 300}},
    )
    with fault("ignores-cancel"):
        proc = box.popen("-p", "go")
        try:
            wait_for_mark(box, "ignores-cancel", "called wait", proc)
            proc.send_signal(signal.SIGINT)
            wait_for_mark(box, "ignores-cancel", "got tool/cancel", proc)
            proc.send_signal(signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=STOP_WAIT)
            except subprocess.TimeoutExpired:
                raise AssertionError("the second Ctrl-C did not end the wait") from None
        finally:
            proc.kill()
        assert proc.returncode == 1, err
        assert "Traceback" not in err + out
        assert marks(box, "ignores-cancel").count("got tool/cancel") == 1
        [stopped] = plugin_notices(err, "ignores-cancel")
        assert (
            stopped
            == "ignores-cancel: stopped: it did not answer tool/cancel of wait, and the person stopped waiting for it"
        )
        assert "bingo: stopped waiting for plugin__ignores-cancel__wait" in err.splitlines()
        assert "bingo: the turn was interrupted" in err.splitlines()
        no_leftovers(box)


def test_one_ctrl_c_still_waits_for_the_answer(tmp_path: Path) -> None:
    box = zoo(
        tmp_path,
        "ignores-cancel",
        steps=[call("z1", "plugin__ignores-cancel__wait")],
        plugins={"ignores-cancel": {"delay": 2}},
    )
    with fault("ignores-cancel"):
        proc = box.popen("-p", "go")
        try:
            wait_for_mark(box, "ignores-cancel", "called wait", proc)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=STOP_WAIT)
        finally:
            proc.kill()
        assert proc.returncode == 1, err
        assert "Traceback" not in err + out
        # It answered (late) and was not stopped for it.
        assert not [line for line in plugin_notices(err, "ignores-cancel") if "the person stopped waiting" in line]
        assert "still waiting for the interrupted calls to answer: Ctrl-C again stops waiting" in err
        no_leftovers(box)
