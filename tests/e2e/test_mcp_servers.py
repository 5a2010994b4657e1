"""Every MCP server is a bingo plugin (issue 16, INTERFACE.md §6), black-box: the real bingo
against servers nobody here wrote (`@modelcontextprotocol/server-everything` and
`server-filesystem` from npm) and two written here as their libraries' READMEs write them
(the official Python SDK's `MCPServer`, and fastmcp), with the scripted model."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._mcp import everything, mcp_plugin, npm_server, python_server
from tests.e2e._scripted import gone, model_requests, notices, result_text, text, tool, tool_results, use_scripted_model
from tests.e2e.test_terminal import terminal


def _row(listing: str, name: str) -> str:
    [row] = [line for line in listing.splitlines() if line.startswith(name + " ")]
    return row


# --- the Python SDK's server -------------------------------------------------------


def test_an_sdk_servers_tools_are_plugin_tools_the_gate_asks_about_whatever_they_claim(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    listing = box.run("-p", "/tools")
    assert listing.returncode == 0, listing.stderr
    row = _row(listing.stdout, "plugin__mcp-sdk__add")  # it claims readOnlyHint: not believed
    assert "untrusted, writes, serial, interrupt block" in row and row.endswith("asks")
    assert "plugin__mcp-sdk__steps" in listing.stdout and "plugin__mcp-sdk__resources" not in listing.stdout


def test_sdk_results_cross_as_text_structured_content_and_errors_and_its_log_goes_to_the_plugin_log(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    calls = [
        tool("a1", "plugin__mcp-sdk__add", {"a": 2, "b": 3}),
        tool("w1", "plugin__mcp-sdk__weather", {"city": "Oslo"}),
        tool("f1", "plugin__mcp-sdk__fail", {}),
        tool("s1", "plugin__mcp-sdk__shout", {"text": "hi"}),
        tool("p1", "plugin__mcp-sdk__steps", {"count": 3}),
        tool("c1", "plugin__mcp-sdk__confirm", {}),
        tool("m1", "plugin__mcp-sdk__sample", {}),
    ]
    use_scripted_model(box, [calls, [text("done")]], permissions={"allow": ["plugin__mcp-sdk__*"]})
    result = box.run("-p", "use them")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    added, weather, failed, shouted, stepped, confirmed, sampled = tool_results(model_requests(box)[1])
    assert result_text(added) == "2 + 3 = 5" and not added.get("isError")
    assert '"city": "Oslo"' in result_text(weather) and "21.5" in result_text(weather)
    assert failed["isError"] is True and result_text(failed) == "Error executing tool fail"  # the SDK's words
    assert result_text(shouted) == "HI"
    assert result_text(stepped) == "took 3 steps"
    # Nobody to ask (bingo -p): the server's elicitation is declined.
    assert result_text(confirmed) == "elicitation decline"
    assert (
        result_text(sampled)
        == "sampling failed: bingo does not let MCP server mcp-sdk use the model (sampling/createMessage) unless the person sets plugins.mcp-sdk.sampling to true"
    )
    log = (box.logs / "plugin-mcp-sdk.log").read_text(encoding="utf-8")
    assert "server log [info]" in log and "shouting hi" in log


def test_a_server_the_person_lets_sample_is_answered_by_the_runs_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    use_scripted_model(
        box,
        [[tool("m1", "plugin__mcp-sdk__sample", {})], [text("a haiku")], [text("done")]],
        permissions={"allow": ["plugin__mcp-sdk__sample"]},
        plugins={"mcp-sdk": {"sampling": True}},
    )
    result = box.run("-p", "sample")
    assert result.returncode == 0, result.stderr
    requests = model_requests(box)
    # The second request to the model is the server's: its message, and no tools.
    asked = requests[1]["request"]
    assert asked["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}] and not asked.get(
        "tools"
    )
    assert asked.get("maxTokens") == 5
    [sampled] = tool_results(requests[2])
    assert result_text(sampled) == "sampled from scripted-1: a haiku"


def test_a_crashed_server_costs_its_call_and_one_notice_then_respawns_and_leaves_no_process(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    use_scripted_model(
        box,
        [
            [tool("p1", "plugin__mcp-sdk__pid", {})],
            [tool("c1", "plugin__mcp-sdk__crash", {})],
            # Past the first backoff (1 s), the next call respawns it.
            [{"sleep": 1.5}, tool("p2", "plugin__mcp-sdk__pid", {})],
            [text("carried on")],
        ],
        permissions={"allow": ["plugin__mcp-sdk__*"]},
    )
    result = box.run("-p", "crash it")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("carried on\n")
    [line] = notices(result.stderr, "mcp-sdk")
    assert "exited with code 3" in line and "crashing on purpose" in line and "plugin-mcp-sdk.log" in line
    requests = model_requests(box)
    first = int(result_text(tool_results(requests[1])[-1]))
    [died] = tool_results(requests[2])[-1:]
    assert died["isError"] is True and "mcp-sdk exited with code 3" in result_text(died)
    second = int(result_text(tool_results(requests[3])[-1]))
    assert second != first
    assert gone(first) and gone(second)


def test_no_child_an_mcp_server_started_outlives_bingo(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    use_scripted_model(
        box,
        [[tool("s1", "plugin__mcp-sdk__spawn", {})], [text("spawned")]],
        permissions={"allow": ["plugin__mcp-sdk__spawn"]},
    )
    result = box.run("-p", "spawn")
    assert result.returncode == 0, result.stderr
    child = int(result_text(tool_results(model_requests(box)[1])[-1]))
    deadline = time.monotonic() + 5
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(child)


def test_an_interrupted_call_sends_notifications_cancelled_and_ends_at_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    marks = tmp_path / "marks"
    marks.mkdir()
    box.env["MCP_SDK_MARKS"] = str(marks)
    # The server marks in a directory outside the project: the person grants it that one.
    use_scripted_model(
        box,
        [[tool("w1", "plugin__mcp-sdk__wait", {"marker": "w1"})], [text("after")]],
        permissions={"allow": ["plugin__mcp-sdk__wait"]},
        plugins={"mcp-sdk": {"sandbox": {"write": [str(marks)]}}},
    )
    mark = marks / "w1"
    with box.popen("-p", "wait for it") as proc:
        deadline = time.monotonic() + 20
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mark.exists(), "the tool call never started"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    assert "Traceback" not in err
    # The SDK cancelled its handler: it was told notifications/cancelled.
    assert mark.read_text() == "cancelled"


def test_progress_is_the_calls_live_line_and_ctrl_c_cancels_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    marks = tmp_path / "marks"
    marks.mkdir()
    box.env["MCP_SDK_MARKS"] = str(marks)
    # The server marks in a directory outside the project: the person grants it that one.
    box.settings(
        {
            "permissions": {"allow": ["plugin__mcp-sdk__wait"]},
            "plugins": {"mcp-sdk": {"sandbox": {"write": [str(marks)]}}},
        }
    )
    with terminal(
        box, [[("tool", "t1", "plugin__mcp-sdk__wait", {"marker": "t1"})], [("text", "not reached")]]
    ) as screen:
        screen.child.send("wait for me\r")
        screen.expect(r"⋯ plugin__mcp-sdk__wait")
        screen.expect("waiting to be cancelled")  # its notifications/progress message
        screen.child.sendcontrol("c")
        screen.expect("the turn was interrupted")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert (marks / "t1").read_text() == "cancelled"


def test_a_prompt_is_a_slash_command_whose_messages_are_the_persons_turn(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-sdk")
    use_scripted_model(box, [[text("Hello, Alice!")]])
    result = box.run("-p", "/mcp-sdk:greet Alice")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello, Alice!"
    [request] = model_requests(box)
    said = request["request"]["messages"][-1]
    assert said["role"] == "user" and said["content"][-1]["text"] == "Please write a short greeting for Alice."
    missing = box.run("-p", "/mcp-sdk:greet")
    assert "missing name: /mcp-sdk:greet <name>" in missing.stdout + missing.stderr


# --- fastmcp ---------------------------------------------------------------------------


def test_a_fastmcp_server_answers_its_tools_and_prompts(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-fastmcp")
    use_scripted_model(
        box,
        [
            [
                tool("m1", "plugin__mcp-fastmcp__multiply", {"a": 6, "b": 7}),
                tool("c1", "plugin__mcp-fastmcp__count_to", {"n": 3}),
            ],
            [text("42")],
            [text("summed up")],
        ],
        permissions={"allow": ["plugin__mcp-fastmcp__*"]},
    )
    result = box.run("-p", "multiply")
    assert result.returncode == 0, result.stderr
    multiplied, counted = tool_results(model_requests(box)[1])
    assert result_text(multiplied) == "42.0"
    assert result_text(counted) == "counted to 3"
    prompt = box.run("-p", "/mcp-fastmcp:summarize MCP")
    assert prompt.returncode == 0, prompt.stderr
    said = model_requests(box)[2]["request"]["messages"][0]  # the second run's first request
    assert said["role"] == "user" and said["content"][-1]["text"] == "Summarize MCP in one sentence."


# --- servers from npm ------------------------------------------------------------------


def test_server_everything_lists_calls_and_sends_images_and_prompts(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    everything(box)
    use_scripted_model(
        box,
        [
            [
                tool("e1", "plugin__everything__echo", {"message": "hi"}),
                tool("i1", "plugin__everything__get-tiny-image", {}),
                tool("s1", "plugin__everything__get-sum", {"a": 1, "b": 2}),
                tool("r1", "plugin__everything__resources", {}),
                tool("l1", "plugin__everything__trigger-long-running-operation", {"duration": 0.2, "steps": 2}),
            ],
            [text("done")],
        ],
        permissions={"allow": ["plugin__everything__*"]},
    )
    result = box.run("-p", "try everything")
    assert result.returncode == 0, result.stderr
    echoed, image, summed, resources, long = tool_results(model_requests(box)[1])
    assert result_text(echoed) == "Echo: hi"
    assert any(part["type"] == "image" and part["mediaType"] == "image/png" and part["data"] for part in image["parts"])
    assert "3" in result_text(summed)
    assert "demo://resource/" in result_text(resources)
    assert not long.get("isError"), result_text(long)
    listing = box.run("-p", "/help")
    assert "/everything:simple-prompt" in listing.stdout and "/everything:args-prompt <city> [state]" in listing.stdout


def test_server_filesystem_reads_the_directory_it_was_given(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "note.txt").write_text("hello from the file\n", encoding="utf-8")
    script = npm_server("@modelcontextprotocol/server-filesystem")
    mcp_plugin(box, "files", {"command": "node", "args": [str(script), str(shared)]})
    use_scripted_model(
        box,
        [
            [
                tool("d1", "plugin__files__list_directory", {"path": str(shared)}),
                tool("r1", "plugin__files__read_text_file", {"path": str(shared / "note.txt")}),
            ],
            [text("read")],
        ],
        permissions={"allow": ["plugin__files__*"]},
    )
    result = box.run("-p", "read it")
    assert result.returncode == 0, result.stderr
    listed, read = tool_results(model_requests(box)[1])
    assert "note.txt" in result_text(listed)
    assert "hello from the file" in result_text(read)


# --- a bare server that misbehaves ---------------------------------------------------


def _raw(box: Sandbox) -> None:
    root = box.install(TEST_PLUGINS / "mcp-raw")
    manifest = json.loads((root / "plugin.json").read_text(encoding="utf-8"))
    manifest["mcp"]["command"] = sys.executable
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_junk_on_stdout_is_a_bad_line_a_deadline_is_a_native_plugins_and_list_changed_lists_again(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    _raw(box)
    python_server(box, "mcp-sdk")
    marks = tmp_path / "marks"
    marks.mkdir()
    box.env["MCP_SDK_MARKS"] = str(marks)
    use_scripted_model(
        box,
        [
            [
                tool("j1", "plugin__mcp-raw__junk", {}),
                tool("g1", "plugin__mcp-raw__grow", {}),
                tool("w1", "plugin__mcp-sdk__wait", {"marker": "w1"}),
            ],
            [tool("n1", "plugin__mcp-raw__grown", {})],
            [text("done")],
        ],
        permissions={"allow": ["plugin__mcp-raw__*", "plugin__mcp-sdk__*"]},
        deadlines={"tool/call": 1.0},
        plugins={
            "mcp-sdk": {"sandbox": {"write": [str(marks)]}}
        },  # it marks outside the project: granted that directory
    )
    result = box.run("-p", "junk")
    assert result.returncode == 0, result.stderr
    requests = model_requests(box)
    junk, grew, late = tool_results(requests[1])
    assert result_text(junk) == "wrote junk" and result_text(grew) == "grew"  # the connection went on
    [stray] = [line for line in notices(result.stderr, "mcp-raw") if "protocol" in line]
    assert stray.startswith(
        "mcp-raw: server mcp-raw printed something that is not part of the protocol on its output; bingo ignored it"
    )
    assert "careless debug output" in (box.logs / "plugin-mcp-raw.log").read_text(encoding="utf-8")
    assert late["isError"] is True and "did not answer tool/call within 1 s" in result_text(late)
    assert any(
        "did not answer tool/call within 1 s: deadlines.tool/call in settings sets how long to wait" in line
        for line in notices(result.stderr, "mcp-sdk")
    )
    # tools/list_changed: the tool it grew is listed again, to the model and the registry.
    assert "plugin__mcp-raw__grown" in [spec["name"] for spec in requests[2]["request"]["tools"]]
    assert result_text(tool_results(requests[2])[-1]) == "grown here"


def test_a_server_speaking_a_revision_bingo_does_not_is_stopped_with_a_notice_naming_both(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _raw(box)
    result = box.run("-p", "/tools", env={"MCP_RAW_REVISION": "2024-11-05"})
    assert result.returncode == 0, result.stderr
    [line] = notices(result.stderr, "mcp-raw")
    assert "it speaks MCP revision 2024-11-05, but bingo speaks only 2026-07-28, 2025-11-25, 2025-06-18" in line
    assert "plugin__mcp-raw__junk" not in result.stdout


def test_a_server_of_the_stateless_revision_is_discovered_and_its_questions_are_answered(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _raw(box)
    box.env["MCP_RAW_STATELESS"] = "1"
    use_scripted_model(
        box,
        [[tool("a1", "plugin__mcp-raw__ask", {})], [text("done")]],
        permissions={"allow": ["plugin__mcp-raw__*"]},
    )
    listing = box.run("-p", "/plugins")
    assert "mcp-raw" in listing.stdout and "0.2.0" in listing.stdout, listing.stdout + listing.stderr
    result = box.run("-p", "ask")
    assert result.returncode == 0, result.stderr
    [asked] = tool_results(model_requests(box)[1])
    # Nobody to ask: the elicitation inside the input_required result is declined, and the
    # call asked again with the server's requestState.
    assert result_text(asked) == "state state-1: decline null"
