"""What a peer can make bingo hold, and how long it can make it wait (issue 23, items 9 and 13;
ADR-0028), through the real binary against the zoo's hostile peers (tests/plugins/zoo/
_hostile.py, and _zoo.py's huge-answer on bingo's own wire).

Each test takes its evidence from the attacked side as well as from bingo: the peer's own
record of what it was asked and of how much of its hostile answer got out before bingo hung
up. bingo's peak RSS under each hostile input (os.wait4's ru_maxrss) is bounded and printed in
the test summary under "hostile inputs"."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._mcp import mcp_plugin
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model
from tests.e2e._zoo import ZOO, call, fault, hostile_http, hostile_records, no_leftovers, reads_back, run_peak, zoo
from tests.e2e._zoo import tool_results as zoo_results
from tests.support import summary

MB = 1024 * 1024
PEAK_MAX = 300
"""MiB of peak RSS no hostile input may push bingo past (the issue measured 650 MB–1.9 GB)."""
SECTION = "hostile inputs"


def _peak(what: str, mib: float) -> None:
    summary.record(SECTION, what, f"{mib:.0f} MB peak RSS")
    assert mib < PEAK_MAX, f"{what}: bingo peaked at {mib:.0f} MiB"


def _records(path: Path, key: str, count: int = 1) -> list[dict[str, Any]]:
    """The peer's records holding `key`, once it has written `count` of them (it writes after
    bingo hangs up, which may be a moment after bingo has exited)."""
    until = time.monotonic() + 20
    while True:
        found = [r for r in hostile_records(path) if key in r]
        if len(found) >= count or time.monotonic() > until:
            return found
        time.sleep(0.05)


def _one_turn(box: Sandbox, tool_name: str) -> None:
    # The server records what it saw in its own directory, which a confined server only
    # reads: the person runs it without a sandbox.
    plugin = tool_name.split("__")[1]
    use_scripted_model(
        box,
        [[tool("p1", tool_name, {})], [text("done")]],
        permissions={"allow": ["plugin__*"]},
        plugins={plugin: {"sandbox": {"mode": "off"}}},
    )


# --- MCP over stdio ------------------------------------------------------------------


def test_200000_list_changed_notices_are_two_listings_not_200000(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    root = box.install(ZOO / "mcp-list-flood")
    _one_turn(box, "plugin__mcp-list-flood__poke")
    with fault("mcp-list-flood"):
        result, peak = run_peak(box, "-p", "go")
        assert result.returncode == 0, result.stderr
        assert result.stdout == "done\n"
        assert no_traceback(result)
        [flooded] = tool_results(model_requests(box)[1])
        assert result_text(flooded) == "flooded"
        asked = [r["asked"] for r in hostile_records(root / "record.jsonl") if "asked" in r]
        # The server read nothing while it flooded: what bingo asked meanwhile, it read after.
        after = asked[asked.index("tools/call") + 1 :]
        assert 1 <= after.count("tools/list") <= 2, f"the server was asked tools/list {after.count('tools/list')} times"
        no_leftovers(box)
    _peak("200,000 MCP list_changed notices (stdio)", peak)


def test_an_mcp_result_too_large_to_keep_fails_its_call_at_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    root = box.install(ZOO / "mcp-huge-result")
    _one_turn(box, "plugin__mcp-huge-result__poke")
    with fault("mcp-huge-result"):
        # tool/call's deadline is 600 s: only failing at once ends this run within the timeout.
        result, peak = run_peak(box, "-p", "go", timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "done\n"
        assert no_traceback(result)
        [failed] = tool_results(model_requests(box)[1])
        assert failed["isError"] is True
        said = result_text(failed)
        assert (
            "mcp-huge-result answered with 20.0 MiB on one line, past the 16 MiB bingo keeps of one message" in said
        ), said
        # The server got its whole answer out (bingo read it, keeping none of it).
        assert _records(root / "record.jsonl", "sent") == [{"sent": 20 * MB}]
        no_leftovers(box)
    _peak("a 20 MB MCP tool result (stdio)", peak)


def test_an_answer_too_large_to_keep_fails_its_call_at_once_on_bingos_own_wire(tmp_path: Path) -> None:
    box = zoo(tmp_path, "huge-answer", steps=[call("big", "plugin__huge-answer__poke")])
    with fault("huge-answer"):
        result, peak = run_peak(box, "-p", "go", timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.endswith("\ndone.\n")
        assert no_traceback(result)
        results = zoo_results(box)
        assert (
            "huge-answer answered with 20.0 MiB on one line, past the 16 MiB bingo keeps of one message"
            in results["big"]
        )
        assert (
            "answered 20 MB"
            in (box.bingo_home / "data" / "plugins" / "huge-answer" / "marks.txt").read_text().splitlines()
        )
        reads_back(box)
        no_leftovers(box)
    _peak("a 20 MB answer on bingo's own wire", peak)


# --- MCP over Streamable HTTP --------------------------------------------------------


def test_a_400_mb_mcp_error_body_is_read_only_as_far_as_it_is_kept(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    box = Sandbox(tmp_path / "box")
    with hostile_http("mcp-huge-error", record) as url:
        mcp_plugin(box, "hostile", {"url": url + "/mcp"})
        _one_turn(box, "plugin__hostile__poke")
        result, peak = run_peak(box, "-p", "go")
        [body] = _records(record, "sent")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    [failed] = tool_results(model_requests(box)[1])
    assert failed["isError"] is True
    assert "HTTP 500 from " + url + "/mcp" in result_text(failed)
    # The server's own record: bingo hung up long before the 400 MB were out.
    assert body["hung_up"] is True and body["sent"] < 64 * MB, body
    _peak("a 400 MB MCP HTTP error body", peak)


def test_a_400_mb_mcp_event_line_fails_its_call_at_once(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    box = Sandbox(tmp_path / "box")
    with hostile_http("mcp-huge-sse", record) as url:
        mcp_plugin(box, "hostile", {"url": url + "/mcp"})
        _one_turn(box, "plugin__hostile__poke")
        # The server holds the stream open after its line: only failing the call ends the turn.
        result, peak = run_peak(box, "-p", "go", timeout=60)
        [line] = _records(record, "sent")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    [failed] = tool_results(model_requests(box)[1])
    assert failed["isError"] is True
    assert f"the answer from {url}/mcp has an event longer than the 16 MiB bingo keeps of one message" in result_text(
        failed
    )
    assert line["hung_up"] is True and line["sent"] < 64 * MB, line
    _peak("a 400 MB MCP HTTP event line", peak)


# --- the model service ---------------------------------------------------------------


def _model(url: str) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}


def test_a_300_mb_line_from_the_model_ends_the_turn_with_one_line(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    box = Sandbox(tmp_path / "box")
    with hostile_http("model-huge-line", record) as url:
        result, peak = run_peak(box, "-p", "hi", env=_model(url))
        [line] = _records(record, "sent")
    assert result.returncode == 1
    assert no_traceback(result)
    assert result.stderr.splitlines() == [
        "bingo: anthropic sent an event longer than the 16 MiB bingo keeps of one; "
        "the answer was dropped: check that ANTHROPIC_BASE_URL points at a compatible server"
    ]
    assert line["hung_up"] is True and line["sent"] < 64 * MB, line
    _peak("a 300 MB SSE line from the model", peak)


def test_a_300_mb_error_body_is_read_only_as_far_as_it_is_kept_on_every_retry(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    box = Sandbox(tmp_path / "box")
    with hostile_http("model-huge-error", record) as url:
        result, peak = run_peak(box, "-p", "hi", env=_model(url))
        bodies = _records(record, "sent", 4)
    assert result.returncode == 1
    assert no_traceback(result)
    assert len([r for r in hostile_records(record) if r.get("asked") == "model"]) == 4
    assert result.stderr.splitlines()[-1].startswith("bingo: anthropic answered HTTP 529: xxxx")
    assert result.stderr.splitlines()[-1].endswith("; tried 4 times: the service is overloaded: try again later")
    assert len(bodies) == 4 and all(b["hung_up"] is True and b["sent"] < 64 * MB for b in bodies), bodies
    _peak("a 300 MB error body from the model, 4 tries", peak)


def test_keep_alives_do_not_hold_a_turn_past_the_stall_deadline(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    box = Sandbox(tmp_path / "box")
    box.settings({"modelStallSeconds": 1})
    with hostile_http("model-keepalive", record) as url:
        # The server keeps the stream alive for 120 s: only the stall deadline ends the turn.
        result, peak = run_peak(box, "-p", "hi", env=_model(url), timeout=60)
        [kept] = _records(record, "keepalives")
    assert result.returncode == 1
    assert no_traceback(result)
    assert result.stderr.splitlines() == [
        "bingo: anthropic sent no content for 1 s (only keep-alives, or nothing): "
        "try again later; modelStallSeconds in settings sets how long to wait"
    ]
    assert kept["hung_up"] is True and kept["keepalives"] >= 1, kept
    _peak("keep-alives from the model for ever", peak)
