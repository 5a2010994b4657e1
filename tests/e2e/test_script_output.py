"""bingo in scripts and CI (issue 31, INTERFACE.md §13, ADR-0046), through the binary:
`-p --output-format json|stream-json` prints only JSON on stdout, in Claude Code's shapes,
each line valid against the committed `schema/script-output.json`; `--json-schema` gets one
correction round; `--max-turns` stops the run; bad values are one line and exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.e2e._bingo import REPO, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, text, tool, use_scripted_model
from tests.e2e._zoo import call, zoo
from tests.support.model_server import ErrorReply, ModelServer

_VALIDATOR = Draft202012Validator(json.loads((REPO / "schema" / "script-output.json").read_text(encoding="utf-8")))

SCHEMA = '{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}'


def lines(stdout: str) -> list[dict[str, Any]]:
    """Every stdout line, parsed and checked against the documented schema."""
    parsed: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        value = json.loads(line)
        _VALIDATOR.validate(value)
        parsed.append(value)
    return parsed


def result_of(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """`json`'s one line: the result."""
    (only,) = lines(run.stdout)
    assert only["type"] == "result"
    return only


def scripted(tmp_path: Path, replies: list[list[dict[str, Any]]], **settings: Any) -> Sandbox:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("one two three\n", encoding="utf-8")
    use_scripted_model(box, replies, **settings)
    return box


def test_a_plain_answer_is_one_result_object(tmp_path: Path) -> None:
    box = scripted(tmp_path, [[text("The answer is 42.")]])
    run = box.run("-p", "--output-format", "json", "what is it?")
    assert run.returncode == 0, run.stderr
    result = result_of(run)
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "The answer is 42."
    assert result["num_turns"] == 1 and result["permission_denials"] == []
    assert result["total_cost_usd"] is None  # a plugin's model has no price
    assert 0 <= result["duration_api_ms"] <= result["duration_ms"]
    sessions = box.run("-p", "/sessions")
    assert result["session_id"] in sessions.stdout
    assert "errors" not in result and "structured_output" not in result


def test_a_refused_tool_is_in_permission_denials_and_the_run_goes_on(tmp_path: Path) -> None:
    box = scripted(
        tmp_path,
        [[tool("c1", "bash", {"command": "touch proof.txt"})], [text("could not")]],
        permissions={"deny": ["bash"]},
    )
    run = box.run("-p", "--output-format", "json", "make proof.txt")
    assert run.returncode == 0, run.stderr
    result = result_of(run)
    assert result["permission_denials"] == [
        {"tool_name": "bash", "tool_use_id": "c1", "tool_input": {"command": "touch proof.txt"}}
    ]
    assert result["result"] == "could not" and result["num_turns"] == 2
    assert not (box.project / "proof.txt").exists()
    assert "bingo: bash is denied by the rule 'bash' in permissions.deny" in run.stderr


def test_a_tool_that_ran_streams_its_use_and_its_result(tmp_path: Path) -> None:
    box = scripted(tmp_path, [[text("Reading."), tool("r1", "read", {"path": "notes.txt"})], [text("Three words.")]])
    run = box.run("-p", "--output-format", "stream-json", "how many words?")
    assert run.returncode == 0, run.stderr
    out = lines(run.stdout)
    assert [line["type"] for line in out] == ["system", "assistant", "user", "assistant", "result"]
    init, asked, told, answered, result = out
    assert init["subtype"] == "init" and init["cwd"] == str(box.project) and init["model"] == "scripted-1"
    assert "read" in init["tools"] and init["plugins"] == ["scripted-model"]
    assert asked["message"]["content"] == [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "r1", "name": "read", "input": {"path": "notes.txt"}},
    ]
    (fed,) = told["message"]["content"]
    assert fed["type"] == "tool_result" and fed["tool_use_id"] == "r1" and not fed["is_error"]
    assert "one two three" in fed["content"]
    assert answered["message"]["content"] == [{"type": "text", "text": "Three words."}]
    assert result["result"] == "Three words." and result["permission_denials"] == []
    assert {line["session_id"] for line in out} == {init["session_id"]}


@pytest.mark.parametrize(
    ("provider", "model", "cost"),
    [("anthropic", "claude-sonnet-4-5", 0.000138), ("openai", "gpt-4o-mini", 0.00000585)],
)
def test_usage_and_cost_come_from_the_providers_figures(tmp_path: Path, provider: str, model: str, cost: float) -> None:
    # The local model server reports 11 input and 7 output tokens a response, as each API does.
    with ModelServer([[("text", "Hi.")]]) as server:
        env = (
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
            if provider == "anthropic"
            else {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.url + "/v1"}
        )
        run = Sandbox(tmp_path).run("-p", "--output-format", "json", "--model", model, "hi", env=env)
    assert run.returncode == 0, run.stderr
    result = result_of(run)
    assert result["usage"] == {
        "input_tokens": 11,
        "output_tokens": 7,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    assert result["total_cost_usd"] == pytest.approx(cost)


def test_a_provider_error_is_an_error_result_and_exit_1(tmp_path: Path) -> None:
    body = {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}
    with ModelServer([ErrorReply(401, body)]) as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        run = Sandbox(tmp_path).run("-p", "--output-format", "json", "hi", env=env)
    assert run.returncode == 1
    result = result_of(run)
    line = "anthropic answered HTTP 401: invalid x-api-key: check ANTHROPIC_API_KEY"
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert result["result"] == line and result["errors"] == [line]
    assert run.stderr.splitlines()[-1] == f"bingo: {line}"
    assert no_traceback(run)


def test_max_turns_ends_the_run_before_the_request_past_it(tmp_path: Path) -> None:
    steps = [[tool(f"r{n}", "read", {"path": "notes.txt"})] for n in range(5)]
    box = scripted(tmp_path, steps)
    run = box.run("-p", "--output-format", "json", "--max-turns", "2", "read it over and over")
    assert run.returncode == 1
    result = result_of(run)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert result["num_turns"] == 2
    assert len(model_requests(box)) == 2  # the third request never reached the model
    assert run.stderr.splitlines()[-1] == (
        "bingo: the run reached --max-turns 2 (2 model requests) before the model finished: "
        "raise --max-turns, or ask for less"
    )


def test_max_turns_holds_in_text_mode_too(tmp_path: Path) -> None:
    box = scripted(tmp_path, [[tool(f"r{n}", "read", {"path": "notes.txt"})] for n in range(3)])
    run = box.run("-p", "--max-turns", "1", "read it")
    assert run.returncode == 1
    assert len(model_requests(box)) == 1
    assert "the run reached --max-turns 1 (1 model request)" in run.stderr


def test_json_schema_met_after_one_correction(tmp_path: Path) -> None:
    box = scripted(tmp_path, [[text("It is three.")], [text('{"n": 3}')]])
    run = box.run("-p", "--output-format", "json", "--json-schema", SCHEMA, "how many words?")
    assert run.returncode == 0, run.stderr
    result = result_of(run)
    assert result["subtype"] == "success" and result["structured_output"] == {"n": 3}
    assert result["num_turns"] == 2
    first, second = model_requests(box)
    told = json.dumps(first["request"]["messages"])
    assert "JSON Schema" in told and '\\"required\\"' in told  # the model was told the schema
    corrected = second["request"]["messages"][-1]["content"][0]["text"]
    assert corrected.startswith("Your answer is not valid against the JSON Schema: the answer is not JSON.")


def test_json_schema_never_met_is_an_error_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text(SCHEMA, encoding="utf-8")
    box = scripted(tmp_path, [[text('{"n": "three"}')], [text('{"n": "still three"}')], [text('{"n": 3}')]])
    run = box.run("-p", "--output-format", "json", "--json-schema", str(tmp_path / "schema.json"), "count")
    assert run.returncode == 1
    result = result_of(run)
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert "structured_output" not in result
    assert result["errors"] == [
        "the answer is not valid against --json-schema after one correction: at /n: 'still three' is not of type 'integer'"
    ]
    assert len(model_requests(box)) == 2  # one correction round, not more
    second = model_requests(box)[1]["request"]["messages"][-1]["content"][0]["text"]
    assert "at /n: 'three' is not of type 'integer'" in second


def test_stream_json_is_only_json_lines_even_when_a_plugin_floods_notices(tmp_path: Path) -> None:
    box = zoo(tmp_path, "notice-flood", steps=[call("z1", "plugin__notice-flood__poke")])
    run = box.run("-p", "--output-format", "stream-json", "go")
    assert run.returncode == 0, run.stderr
    out = lines(run.stdout)  # every line parses, and is a documented shape
    assert out[0]["type"] == "system" and out[0]["subtype"] == "init"
    assert out[-1]["type"] == "result" and out[-1]["result"] == "done."
    assert all(line["type"] != "result" for line in out[:-1])
    notices = [line for line in out if line["type"] == "notice" and line["source"] == "notice-flood"]
    assert notices and notices[0]["message"] == "zoo: notice 0"
    assert "notice-flood: zoo: notice 0" in run.stderr  # as in text mode


def test_a_slash_command_result_and_its_hostile_notice_stay_json(tmp_path: Path) -> None:
    box = zoo(tmp_path, "escapes")
    run = box.run("-p", "--output-format", "stream-json", "/shout notice")
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "\u202e" not in run.stdout and "\x07" not in run.stdout
    out = lines(run.stdout)
    assert out[-1]["result"] == "noticed" and out[-1]["num_turns"] == 0
    (notice,) = [line for line in out if line["type"] == "notice" and "host-notice" in line["message"]]
    assert "\x1b]52;" in notice["message"]  # the bytes are kept, escaped as JSON, not as raw


def test_a_script_written_for_claude_codes_json_works_unchanged(tmp_path: Path) -> None:
    box = scripted(tmp_path, [[text("All good.")]])
    # A CI step as written for `claude -p --output-format json`.
    script = """set -euo pipefail
out=$("$BINGO" -p --output-format json "review this")
if [ "$(echo "$out" | jq -r '.is_error')" = "true" ]; then exit 1; fi
echo "answer: $(echo "$out" | jq -r '.result')"
echo "session: $(echo "$out" | jq -r '.session_id')"
echo "cost: $(echo "$out" | jq -r '.total_cost_usd // 0')"
"""
    if shutil.which("jq") is None:  # the same reads, in Python
        script = script.replace(
            "jq -r", 'python3 -c "import json,sys; d=json.load(sys.stdin); print(d[sys.argv[1][1:]])"'
        )
    from tests.e2e._bingo import BINGO

    ran = subprocess.run(
        ["bash", "-c", script],
        cwd=box.project,
        env={**box.env, "BINGO": BINGO},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    answer, session, cost = ran.stdout.splitlines()
    assert answer == "answer: All good."
    assert session.startswith("session: ") and len(session) > len("session: ")
    assert cost == "cost: 0"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--output-format", "xml"],
            "bingo: --output-format takes text, json or stream-json, not 'xml': write --output-format json",
        ),
        (["--max-turns", "0"], "bingo: --max-turns takes a whole number of 1 or more, not '0': write --max-turns 10"),
        (
            ["--max-turns", "many"],
            "bingo: --max-turns takes a whole number of 1 or more, not 'many': write --max-turns 10",
        ),
        (
            ["--json-schema", SCHEMA],
            "bingo: --json-schema goes with --output-format json or stream-json: "
            "write bingo -p --output-format json --json-schema SCHEMA PROMPT",
        ),
        (
            ["--output-format", "json", "--json-schema", "{not json"],
            "bingo: the inline --json-schema is not JSON",
        ),
        (
            ["--output-format", "json", "--json-schema", "nothere.json"],
            "bingo: --json-schema: there is no file nothere.json",
        ),
        (
            ["--output-format", "json", "--json-schema", '{"type": 12}'],
            "bingo: --json-schema is not a valid JSON Schema: at /type: 12 is not valid under any of the given schemas",
        ),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(tmp_path: Path, args: list[str], line: str) -> None:
    box = scripted(tmp_path, [[text("never")]])
    run = box.run("-p", *args, "hi")
    assert run.returncode == 2
    assert run.stdout == ""
    (said,) = run.stderr.splitlines()
    assert said.startswith(line), said
    assert model_requests(box) == []


def test_a_notice_said_at_start_up_comes_after_the_init_line(tmp_path: Path) -> None:
    box = scripted(tmp_path, [[text("ok")]], colour="blue")  # an unknown settings key: a notice at start
    run = box.run("-p", "--output-format", "stream-json", "hi")
    assert run.returncode == 0, run.stderr
    out = lines(run.stdout)
    assert out[0]["type"] == "system"
    (said,) = [line for line in out if line["type"] == "notice" and "colour" in line["message"]]
    assert said["session_id"] == out[0]["session_id"]
    assert "colour" in run.stderr


def test_an_interrupt_ends_the_run_with_its_result_line(tmp_path: Path) -> None:
    import signal

    with ModelServer([[("text", "Thinking"), ("pause",)]]) as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        proc = Sandbox(tmp_path).popen("-p", "--output-format", "stream-json", "think hard", env=env)
        try:
            assert server.paused.wait(30), "the model was never asked"
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 1, stderr
    out = lines(stdout)
    assert out[0]["type"] == "system" and out[-1]["type"] == "result"
    assert out[-1]["subtype"] == "error_during_execution" and out[-1]["result"] == "the turn was interrupted"
