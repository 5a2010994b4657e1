"""INTERFACE.md §5, through the real binary: a process that completed its handshake and then
died is started again at the next read at once, the backoff applying only between failed
starts (ADR-0043). The model asks again right after the crash, as a model does."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox
from tests.e2e._mcp import python_server
from tests.e2e._scripted import gone, model_requests, notices, result_text, text, tool, tool_results, use_scripted_model


def test_a_plugin_that_died_after_its_handshake_answers_the_very_next_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "crashy")
    use_scripted_model(
        box,
        [
            [tool("b1", "plugin__crashy__boom", {})],
            [tool("o1", "plugin__crashy__ok", {})],  # at once: no pause
            [text("carried on")],
        ],
        permissions={"allow": ["plugin__crashy__*"]},
    )
    result = box.run("-p", "crash it")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("carried on\n")
    [line] = notices(result.stderr, "crashy")
    assert "exited with code 3" in line
    requests = model_requests(box)
    [died] = tool_results(requests[1])
    assert died["isError"] is True
    retried = tool_results(requests[2])[-1]
    assert retried.get("isError") is not True and result_text(retried) == "still here"
    assert len((box.bingo_home / "data" / "plugins" / "crashy" / "starts.txt").read_text().split()) == 2


def test_an_mcp_server_that_crashed_mid_call_answers_the_retry_at_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    use_scripted_model(
        box,
        [
            [tool("p1", "plugin__mcp-sdk__pid", {})],
            [tool("c1", "plugin__mcp-sdk__crash", {})],
            [tool("p2", "plugin__mcp-sdk__pid", {})],  # at once: no pause
            [text("carried on")],
        ],
        permissions={"allow": ["plugin__mcp-sdk__*"]},
    )
    result = box.run("-p", "crash it")
    assert result.returncode == 0, result.stderr
    [line] = notices(result.stderr, "mcp-sdk")
    assert "exited with code 3" in line
    requests = model_requests(box)
    first = int(result_text(tool_results(requests[1])[-1]))
    [died] = tool_results(requests[2])[-1:]
    assert died["isError"] is True
    second = int(result_text(tool_results(requests[3])[-1]))
    assert second != first
    assert gone(first) and gone(second)
