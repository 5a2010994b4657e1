"""Load through the real binary (issue 12, items 3 and 5): a plugin that, once called, never
reads its stdin again and floods bingo with `bingo.host` calls, each of which bingo
answers into a pipe nobody drains. bingo stops it past its bound (UNREAD_MAX) with one
notice, its call ends answering nothing, its next use starts it again (it had completed
its handshake: INTERFACE.md section 5) and it is stopped again the same way, and bingo's peak resident memory (VmHWM, read from outside) stays under 100 MB; it
grew with every request left unread before (1.24 GB for 4 million, in the issue). The
figure goes to the suite's summary."""

from __future__ import annotations

from pathlib import Path

from bingo.endpoint.connection import UNREAD_MAX
from tests.e2e._zoo import (
    COUNTED,
    call,
    fault,
    marks,
    no_leftovers,
    plugin_notices,
    reads_back,
    run_measured,
    tool_results,
    zoo,
)
from tests.support import summary

PEAK_KIB = 100_000_000 // 1024
"""The issue's bound on bingo's peak RSS (100 MB), in KiB as /proc reports it."""


def test_a_plugin_that_never_reads_its_stdin_is_stopped_and_bingo_stays_small(tmp_path: Path) -> None:
    steps = [call("z1", "plugin__never-reads__poke"), call("z2", "plugin__never-reads__poke")]
    box = zoo(tmp_path, "never-reads", steps=steps)
    with fault("never-reads"):
        result, peak_kib = run_measured(box, "-p", "go")
        assert result.returncode == 0, result.stderr
        assert result.stdout.endswith("\ndone.\n")
        summary.record("load", "peak RSS, a plugin that never reads its stdin (MiB)", peak_kib / 1024)
        assert peak_kib < PEAK_KIB
        stopped = f"plugin never-reads does not read its stdin: more than {UNREAD_MAX // 1024 // 1024} MiB written to it is unread"
        # It had completed its handshake, so its next use starts it again at once (INTERFACE.md
        # section 5, ADR-0043): it floods again and is stopped again, each stop said once.
        assert (
            plugin_notices(result.stderr, "never-reads")
            == [
                f"never-reads: stopped: {stopped}: what was written to it is dropped; it is started again when next used"
            ]
            * 2
        )
        results = tool_results(box)
        assert results["z1"].startswith(stopped)
        assert results["z2"].startswith(stopped)
        assert results["wc"] == COUNTED
        assert "flooded" not in marks(box, "never-reads")  # stopped long before its 2 million
        reads_back(box)
        no_leftovers(box)
