"""What a run keeps in its logs is bounded (issue 12, item 3; INTERFACE.md §8): bingo's own
log rotates by size during the run, and a foreign value that reaches a log (here unknown
method names and an unknown id, 8 MiB each) is cut to a few KiB with its length said. The
turn goes on, the plugin costs one notice at most, nothing is left behind (_zoo.py)."""

from __future__ import annotations

from pathlib import Path

from bingo.kernel.log import FOREIGN_MAX, LOG_BYTES, QUOTED_MAX, RECORD_MAX
from tests.e2e._zoo import COUNTED, call, fault, no_leftovers, plugin_notices, reads_back, tool_results, zoo
from tests.support import summary

HUGE = 8 * 1024 * 1024
"""The zoo's huge method names and id, in bytes."""
_CUT_SAID = 64
"""Room for the words a cut record ends with (`… (N bytes, cut)`) and its newline."""


def _cut_id(limit: int) -> str:
    """The zoo's huge id, as its repr is cut at `limit`."""
    return "'" + "y" * (limit - 1) + f"… ({HUGE + 2} bytes, cut)"


def _sizes(logs: Path, name: str) -> dict[str, int]:
    return {path.name: path.stat().st_size for path in sorted(logs.glob(name + "*"))}


def test_huge_method_names_and_ids_are_logged_cut_and_the_log_rotates_by_size(tmp_path: Path) -> None:
    # 1 000 notifications with 64 KiB method names, then 20 with 8 MiB ones, then an answer
    # to an 8 MiB id: logged whole, that was 230 MB of bingo.log in one run.
    box = zoo(tmp_path, "huge-method", steps=[call("z1", "plugin__huge-method__poke")])
    with fault("huge-method"):
        result = box.run("-p", "go")
        assert result.returncode == 0, result.stderr
        assert result.stdout.endswith("\ndone.\n")
        results = tool_results(box)
        assert results["z1"] == "poked" and results["wc"] == COUNTED

        own = _sizes(box.logs, "bingo.log")
        summary.record("zoo", "bingo.log kept after 1 020 huge method names (bytes)", sum(own.values()))
        # Rotated during the run (1 000 cut names are past the bound), one old file kept,
        # each file past the bound by one record at most.
        assert set(own) == {"bingo.log", "bingo.log.1"}
        assert all(size <= LOG_BYTES + RECORD_MAX + _CUT_SAID for size in own.values())
        lines = (box.logs / "bingo.log").read_text(encoding="utf-8").splitlines()
        unknown = [line for line in lines if "sent unknown notification" in line]
        assert sum(line.endswith(f"… ({HUGE} bytes, cut); ignored") for line in unknown) == 20
        assert all(len(line) < FOREIGN_MAX + 200 for line in lines)

        # The plugin's own log keeps the unknown id cut as well, and its notice is one
        # short line: the only one the plugin costs.
        plugin_log = (box.logs / "plugin-huge-method.log").read_text(encoding="utf-8")
        assert f"answer to id {_cut_id(FOREIGN_MAX)}, which the host never asked" in plugin_log
        assert sum(_sizes(box.logs, "plugin-huge-method.log").values()) < 2 * FOREIGN_MAX
        [notice] = plugin_notices(result.stderr, "huge-method")
        assert notice.startswith(f"huge-method: answered id {_cut_id(QUOTED_MAX)}, which the host never asked")
        assert len(result.stderr) < FOREIGN_MAX
        reads_back(box)
        no_leftovers(box)
