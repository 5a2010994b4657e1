"""The fault zoo, part two: plugins that say the wrong things on the wire once running (bad
lines, bad answers, floods, questions on calls that are not theirs, hooks that try to widen
the gate). The turn goes on with wordcount answering after the fault; each fault costs at most
one notice naming the plugin; the session reads back and no process is left (_zoo.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._zoo import (
    COUNTED,
    call,
    fault,
    no_leftovers,
    plugin_notices,
    reads_back,
    run_measured,
    tool_results,
    zoo,
    zoo_turn,
)
from tests.support import summary

STRAY = "plugin {name} printed something that is not part of the protocol on its output; bingo ignored it (see {log})"


def _log(box: Sandbox, name: str) -> Path:
    return box.logs / f"plugin-{name}.log"


@pytest.mark.parametrize("name", ["not-json", "bad-utf8"])
def test_a_line_that_is_not_a_message_costs_one_notice_saying_where_it_is_kept(tmp_path: Path, name: str) -> None:
    box = zoo(tmp_path, name, steps=[call("z1", f"plugin__{name}__poke")])
    with fault(name):
        notices, results = zoo_turn(box, name)
        assert notices == [f"{name}: " + STRAY.format(name=name, log=_log(box, name))]
        assert results["z1"] == "poked"
        assert "stdout line that is not JSON-RPC" in _log(box, name).read_text(encoding="utf-8", errors="replace")


def test_messages_written_in_pieces_are_read_whole(tmp_path: Path) -> None:
    box = zoo(tmp_path, "partial-lines", steps=[call("z1", "plugin__partial-lines__poke")])
    with fault("partial-lines"):
        notices, results = zoo_turn(box, "partial-lines")
        assert notices == [] and results["z1"] == "poked"


def test_an_answer_of_the_wrong_shape_fails_the_call_with_one_notice(tmp_path: Path) -> None:
    box = zoo(tmp_path, "wrong-shape", steps=[call("z1", "plugin__wrong-shape__poke")])
    with fault("wrong-shape"):
        [notice], results = zoo_turn(box, "wrong-shape")
        assert notice.startswith("wrong-shape: tool poke: plugin wrong-shape answered tool/call in the wrong shape: ")
        assert notice.endswith(f"log: {_log(box, 'wrong-shape')}")
        assert "answered tool/call in the wrong shape" in results["z1"]


def test_a_display_that_is_no_view_is_dropped_and_the_parts_kept_with_one_notice(tmp_path: Path) -> None:
    box = zoo(tmp_path, "bad-display", steps=[call("z1", "plugin__bad-display__poke")])
    with fault("bad-display"):
        [notice], results = zoo_turn(box, "bad-display")
        assert notice.startswith(
            "bad-display: tool poke: its display was dropped, the parts were kept: Expected `object`, got `str` - at `$.items[0]`"
        )
        assert results["z1"] == "poked"


def test_a_100_mb_line_is_discarded_past_the_bound_without_holding_it(tmp_path: Path) -> None:
    box = zoo(tmp_path, "huge-line", steps=[call("z1", "plugin__huge-line__poke")])
    with fault("huge-line"):
        result, peak_kib = run_measured(box, "-p", "go")
        assert result.returncode == 0, result.stderr
        summary.record("zoo", "peak RSS with a 100 MB line (MiB)", peak_kib / 1024)
        # The framing holds at most about two limits (16 MiB each) of a line; a line held
        # whole would add 100 MB (and its decode more) to the ~50 MiB bingo needs anyway.
        assert peak_kib < 130 * 1024
        assert plugin_notices(result.stderr, "huge-line") == [
            "huge-line: " + STRAY.format(name="huge-line", log=_log(box, "huge-line"))
        ]
        results = tool_results(box)
        assert results["z1"] == "poked" and results["wc"] == COUNTED
        reads_back(box)
        no_leftovers(box)


def test_ten_mb_a_second_of_stderr_keeps_the_log_bounded(tmp_path: Path) -> None:
    box = zoo(
        tmp_path,
        "stderr-flood",
        steps=[call("z1", "plugin__stderr-flood__poke")],
        plugins={"stderr-flood": {"delay": 2.0}},
    )
    with fault("stderr-flood"):
        notices, results = zoo_turn(box, "stderr-flood")
        assert results["z1"] == "poked"
        [notice] = notices
        assert notice.startswith("stderr-flood: wrote more than 1 MiB to stderr; its log keeps only the latest: ")
        assert "plugin-stderr-flood.log" in notice
        logs = list(box.logs.glob("plugin-stderr-flood.log*"))
        total = sum(path.stat().st_size for path in logs)
        summary.record("zoo", "stderr log kept after ~20 MB written (bytes)", total)
        assert len(logs) <= 2 and total <= 2 * 1024 * 1024 + 4096
        assert "the flood is over" in _log(box, "stderr-flood").read_text()


def test_answers_to_unknown_and_duplicate_ids_are_ignored_with_one_notice(tmp_path: Path) -> None:
    box = zoo(tmp_path, "bad-ids", steps=[call("z1", "plugin__bad-ids__poke")])
    with fault("bad-ids"):
        notices, results = zoo_turn(box, "bad-ids")
        assert notices == [
            "bad-ids: answered id 987654, which the host never asked or already had an answer for; "
            f"ignored (answer each request once, with its own id; see {_log(box, 'bad-ids')})"
        ]
        assert results["z1"] == "poked"


def test_an_answer_with_a_string_id_is_told_that_ids_are_integers(tmp_path: Path) -> None:
    box = zoo(tmp_path, "string-id", steps=[call("z1", "plugin__string-id__poke")])
    with fault("string-id"):
        notices, results = zoo_turn(box, "string-id")
        [said] = notices
        assert said.startswith("string-id: answered id '")
        assert said.endswith(
            "', which the host never asked or already had an answer for; ignored (bingo's request ids "
            f"are integers: answer with the id exactly as it came; see {_log(box, 'string-id')})"
        )
        assert results["z1"] == "poked"


def test_a_pretty_printed_answer_is_told_one_message_per_line(tmp_path: Path) -> None:
    box = zoo(tmp_path, "pretty-json", steps=[call("z1", "plugin__pretty-json__poke")])
    with fault("pretty-json"):
        notices, results = zoo_turn(box, "pretty-json")
        assert notices == ["pretty-json: " + STRAY.format(name="pretty-json", log=_log(box, "pretty-json"))]
        assert results["z1"] == "poked"


def test_a_late_answer_to_an_abandoned_call_is_dropped_quietly(tmp_path: Path) -> None:
    # The first call is abandoned at its 1 s deadline (one notice); the plugin's late answer
    # to it arrives while the second call is running and must not be taken for it.
    steps = [call("z1", "plugin__late-answer__poke"), call("z2", "plugin__late-answer__poke")]
    box = zoo(
        tmp_path,
        "late-answer",
        steps=steps,
        deadlines={"tool/call": 1},
        plugins={"late-answer": {"delay": 1.5}},
    )
    with fault("late-answer"):
        [notice], results = zoo_turn(box, "late-answer")
        assert notice.startswith(
            "late-answer: tool poke: plugin late-answer did not answer tool/call within 1 s: deadlines.tool/call in settings sets how long to wait: log: "
        )
        assert "did not answer tool/call within 1 s" in results["z1"]
        assert results["z2"] == "poked"


def test_ten_thousand_progress_lines_a_second_do_not_stall_the_turn(tmp_path: Path) -> None:
    box = zoo(tmp_path, "progress-flood", steps=[call("z1", "plugin__progress-flood__poke")])
    with fault("progress-flood"):
        notices, results = zoo_turn(box, "progress-flood")
        assert results["z1"] == "poked"
        [notice] = notices
        assert notice.startswith(
            "progress-flood: sends more than 200 tool/progress lines a second; the rest of each second is dropped: "
        )


def test_asking_on_a_call_that_is_not_running_is_refused_in_words(tmp_path: Path) -> None:
    # First wordcount's call (another plugin's, ended), then the plugin's own ended call.
    steps: list[dict[str, Any]] = [
        call("w0", "plugin__wordcount__count", {"path": "notes.txt"}),
        call("z1", "plugin__asks-elsewhere__snoop", {"call": "w0"}),
        call("z2", "plugin__asks-elsewhere__snoop", {"call": "z1"}),
    ]
    box = zoo(tmp_path, "asks-elsewhere", steps=steps)
    with fault("asks-elsewhere"):
        notices, results = zoo_turn(box, "asks-elsewhere")
        assert notices == ["asks-elsewhere: bingo.host ask was refused: call w0 is not a call you are running"]
        assert results["z1"] == "w0 -> -32002 call w0 is not a call you are running"
        assert results["z2"] == (
            "z1 -> -32002 call z1 has ended: ask only during a call you are running; "
            "z1 -> -32002 call z1 has ended: ask only during a call you are running"
        )


def test_a_hook_that_answers_allow_decides_nothing_and_the_gate_still_refuses(tmp_path: Path) -> None:
    box = zoo(tmp_path, "hook-allow", permissions={})
    with fault("hook-allow"):
        result = box.run("-p", "go")
        assert result.returncode == 0 and no_traceback(result)
        [notice] = plugin_notices(result.stderr, "hook-allow")
        assert notice.startswith(
            "hook-allow: hook gatekeeper failed (plugin hook-allow answered hook/decide in the wrong shape"
        )
        assert "'allow'" in notice and notice.endswith("and decides nothing")
        assert (
            tool_results(box)["wc"]
            == "plugin__wordcount__count is not allowed here: add it to permissions.allow or pass --allow"
        )
        reads_back(box)
        no_leftovers(box)


def test_a_hook_cannot_redirect_a_call_past_the_gate(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    box = zoo(
        tmp_path,
        "hook-redirect",
        permissions={"allow": ["plugin__wordcount__count"]},
        plugins={"hook-redirect": {"target": str(target)}},
        sandbox={"mode": "off"},  # without a sandbox, where bash runs only when a rule allows it
    )
    with fault("hook-redirect"):
        result = box.run("-p", "go")
        assert result.returncode == 0 and no_traceback(result)
        [notice] = plugin_notices(result.stderr, "hook-redirect")
        assert notice.startswith("hook-redirect: hook ") and notice.endswith(
            "redirected a call of plugin__wordcount__count into bash, which the gate refused"
        )
        assert tool_results(box)["wc"] == "bash is not allowed here: add it to permissions.allow or pass --allow"
        assert not (target / "pwned").exists()
        reads_back(box)
        no_leftovers(box)
