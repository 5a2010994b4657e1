"""Subagents through the real binary with the scripted model (INTERFACE.md section 15).

The scripted model answers the parent's and the children's requests from one script, in the
order they arrive, and logs each request as it arrives: what a child was told (its fresh
history, its tools, its model) is read from that log, and what the parent was told (the
child's answer) from the parent's next request."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import decided, install_declaring
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model
from tests.support.model_server import ModelServer, Reply
from tests.support.summary import record


def _agent(call_id: str, prompt: str, agent: str | None = None, description: str = "a task") -> dict[str, Any]:
    args: dict[str, Any] = {"description": description, "prompt": prompt}
    if agent is not None:
        args["agent"] = agent
    return tool(call_id, "agent", args)


def _tools(request: dict[str, Any]) -> set[str]:
    return {spec["name"] for spec in request["request"]["tools"]}


def _agent_file(directory: Path, name: str, body: str = "Be brief.", **front: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {name}", f"description: {front.pop('description', 'helps with ' + name)}"]
    lines += [f"{key}: {value}" for key, value in front.items()]
    path = directory / f"{name}.md"
    path.write_text("---\n" + "\n".join(lines) + "\n---\n" + body + "\n", encoding="utf-8")
    return path


def test_a_child_starts_with_a_fresh_history_holding_the_prompt_and_its_answer_is_the_result(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(
        box,
        [
            [text("I will delegate."), _agent("call-1", "Count the files in src and report the number.")],
            [text("There are 7 files.")],
            [text("The child says 7.")],
        ],
    )
    result = box.run("-p", "the parent's own prompt")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    parent, child, after = model_requests(box)
    # The child's history is its prompt alone: nothing of the parent's conversation.
    assert child["request"]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Count the files in src and report the number."}]}
    ]
    assert "the parent's own prompt" not in str(child["request"]["messages"])
    # The parent's system prompt, plus the words that make it a subagent.
    assert parent["request"]["system"] and "subagent" in child["request"]["system"]
    assert parent["request"]["system"].split("\n\n")[0] == child["request"]["system"].split("\n\n")[0]
    # All the parent's tools but `agent`.
    assert "agent" in _tools(parent) and "agent" not in _tools(child)
    assert _tools(child) == _tools(parent) - {"agent"}
    # The child's final text is the parent's tool result.
    (block,) = tool_results(after)
    assert block["toolUseId"] == "call-1" and not block.get("isError")
    assert result_text(block) == "There are 7 files."
    assert "The child says 7." in result.stdout


def test_a_tool_limited_agent_is_offered_only_its_tools_and_never_agent(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _agent_file(box.bingo_home / "agents", "reader", tools="Read, Grep, agent")
    use_scripted_model(
        box,
        [
            [_agent("call-1", "Find TODOs.", agent="reader")],
            [tool("c-write", "write", {"path": "sneaky.txt", "content": "x"})],
            [text("No TODOs.")],
            [text("ok")],
        ],
    )
    result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    _, child, child_after, _ = model_requests(box)
    assert _tools(child) == {"read", "grep"}
    assert "Be brief." in child["request"]["system"]
    # A call of a tool the agent does not have is refused, and nothing is written.
    (refused,) = tool_results(child_after)
    assert refused.get("isError") and "no tool named write" in result_text(refused)
    assert not (box.project / "sneaky.txt").exists()


def test_an_unknown_agent_is_an_error_result_naming_the_known_ones(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _agent_file(box.bingo_home / "agents", "reviewer")
    _agent_file(box.home / ".claude" / "agents", "tester")
    use_scripted_model(box, [[_agent("call-1", "Review.", agent="reviewr")], [text("sorry")]])
    result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    _, after = model_requests(box)  # no child was opened: no request of its own
    (block,) = tool_results(after)
    said = result_text(block)
    assert block.get("isError") and "reviewr" in said and "reviewer" in said and "tester" in said


def _answer_at_once(box: Sandbox) -> None:
    """The scripted model answers each request on its own thread as it arrives."""
    path = box.bingo_home / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["plugins"]["scripted-model"]["concurrent"] = True
    path.write_text(json.dumps(settings), encoding="utf-8")


def _requests_so_far(box: Sandbox) -> list[dict[str, Any]]:
    """The requests logged so far, a line still being written left out."""
    log = box.bingo_home / "data" / "plugins" / "scripted-model" / "requests.jsonl"
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").split("\n")[:-1]  # the last is "" or unfinished
    messages = [json.loads(line) for line in lines if line]
    return [m["params"] for m in messages if m.get("method") == "provider/stream"]


def test_two_children_of_one_message_run_at_once(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    gate = tmp_path / "gate"
    # Each child's first answer waits for the gate, which the test opens only once both
    # children's requests have arrived: one child at a time would never get there.
    waits = [{"until": str(gate)}, text("a child's answer")]
    use_scripted_model(
        box,
        [
            [_agent("call-1", "Task one."), _agent("call-2", "Task two.")],
            waits,
            waits,
            [text("both answered")],
        ],
    )
    _answer_at_once(box)
    proc = box.popen("-p", "go")
    try:
        until = time.monotonic() + 30
        while len(_requests_so_far(box)) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < until, "the second child's request never came while the first was unanswered"
            time.sleep(0.02)
        in_flight = _requests_so_far(box)
    finally:
        gate.write_text("open", encoding="utf-8")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    prompts = sorted(str(request["request"]["messages"][0]["content"][0]["text"]) for request in in_flight[1:])
    assert prompts == ["Task one.", "Task two."]
    record("subagents", "children's first requests in flight at once (two agent calls, one message)", len(prompts))
    after = model_requests(box)[-1]
    results = {block["toolUseId"]: result_text(block) for block in tool_results(after)}
    assert results == {"call-1": "a child's answer", "call-2": "a child's answer"}
    assert "both answered" in out


def test_a_plugin_tool_before_hook_sees_and_denies_a_childs_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "guard")
    use_scripted_model(
        box,
        [
            [_agent("call-1", "Make a file.")],
            [tool("child-bash-1", "bash", {"command": "touch made-by-child.txt"})],
            [text("I could not.")],
            [text("ok")],
        ],
        plugins={
            "guard": {
                "hooks": [{"name": "guard", "site": "tool", "points": ["before"]}],
                "answers": {"guard": "deny-bash"},
            }
        },
    )
    result = box.run("-p", "--allow", "bash", "go")  # allowed by rule: only the hook stands in the way
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    # The attacked side: the command never ran.
    assert not (box.project / "made-by-child.txt").exists()
    # The hook saw the child's call, under the child's own call id (and the parent's agent call).
    seen = [(d["payload"]["tool"], d["payload"]["callId"]) for d in decided(box, "guard")]
    assert ("agent", "call-1") in seen and ("bash", "child-bash-1") in seen
    child_after = model_requests(box)[2]
    (refused,) = tool_results(child_after)
    assert refused.get("isError") and "no shell here" in result_text(refused)


_PRE_TOOL_USE = """\
import json, sys
event = json.load(sys.stdin)
with open({log!r}, "a") as log:
    log.write(json.dumps(event) + "\\n")
if event.get("tool_name") == "Bash":
    print("Blocked by the project's rule: no shell", file=sys.stderr)
    sys.exit(2)
"""


def test_a_pretooluse_command_hook_denies_a_childs_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    log = box.project / "hook-saw.jsonl"
    script = box.home / "hooks" / "guard.py"
    script.parent.mkdir(parents=True)
    script.write_text(_PRE_TOOL_USE.format(log=str(log)), encoding="utf-8")
    use_scripted_model(
        box,
        [
            [_agent("call-1", "Make a file.")],
            [tool("child-bash-1", "bash", {"command": "touch made-by-child.txt"})],
            [text("I could not.")],
            [text("ok")],
        ],
        hooks={
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}]
        },
    )
    result = box.run("-p", "--allow", "bash", "go")
    assert result.returncode == 0, result.stderr
    assert not (box.project / "made-by-child.txt").exists()
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(e["tool_name"], e.get("tool_use_id")) for e in events] == [("Bash", "child-bash-1")]
    (refused,) = tool_results(model_requests(box)[2])
    assert refused.get("isError") and "no shell" in result_text(refused)


def test_an_agents_model_reaches_its_requests_and_inherit_keeps_the_parents(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _agent_file(box.bingo_home / "agents", "quick", model="scripted-small")
    _agent_file(box.bingo_home / "agents", "same", model="inherit")
    use_scripted_model(
        box,
        [
            [_agent("call-1", "One.", agent="quick")],
            [text("from quick")],
            [_agent("call-2", "Two.", agent="same")],
            [text("from same")],
            [text("ok")],
        ],
        model="scripted-1",
    )
    result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    models = [request["request"]["model"] for request in model_requests(box)]
    assert models == ["scripted-1", "scripted-small", "scripted-1", "scripted-1", "scripted-1"]


def test_agent_files_come_from_the_four_places_and_the_projects_only_under_trust(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _agent_file(box.bingo_home / "agents", "from-bingo-home", description="the user's bingo agent")
    _agent_file(box.home / ".claude" / "agents", "from-claude-home", description="the user's claude agent")
    _agent_file(box.project / ".bingo" / "agents", "from-bingo-project", description="the project's bingo agent")
    _agent_file(box.project / ".claude" / "agents", "from-claude-project", description="the project's claude agent")
    bad = box.bingo_home / "agents" / "broken.md"
    bad.write_text("---\nname: Broken Name\ndescription: x\n---\nbody\n", encoding="utf-8")
    replies = [[_agent("call-1", "Go.", agent="from-claude-project")], [text("done")]]
    use_scripted_model(box, replies)

    untrusted = box.run("-p", "go")
    assert untrusted.returncode == 0, untrusted.stderr
    system = model_requests(box)[0]["request"]["system"]
    assert "from-bingo-home: the user's bingo agent" in system
    assert "from-claude-home: the user's claude agent" in system
    assert "project" not in "".join(line for line in system.splitlines() if line.startswith("- from-"))
    # The project's agent is not there to be called: the error names the ones that are.
    (block,) = tool_results(model_requests(box)[1])
    assert block.get("isError") and "from-bingo-home" in result_text(block)
    # One notice for the bad file, naming it; no traceback.
    assert [line for line in untrusted.stderr.splitlines() if "broken.md" in line][0].count("not loaded") == 1
    assert no_traceback(untrusted)

    assert box.run("--trust").returncode == 0
    (box.bingo_home / "data" / "plugins" / "scripted-model" / "requests.jsonl").unlink()
    use_scripted_model(box, [[_agent("call-1", "Go.", agent="from-claude-project")], [text("done")], [text("ok")]])
    trusted = box.run("-p", "go")
    assert trusted.returncode == 0, trusted.stderr
    parent, child, _ = model_requests(box)
    assert "from-bingo-project: the project's bingo agent" in parent["request"]["system"]
    assert "from-claude-project: the project's claude agent" in parent["request"]["system"]
    assert "Agent from-claude-project's instructions" in child["request"]["system"]


_GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _git(box: Sandbox, *args: str) -> str:
    env = {**box.env, **_GIT_ENV, "GIT_CEILING_DIRECTORIES": str(box.root)}
    done = subprocess.run(["git", *args], cwd=box.project, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _worktrees(box: Sandbox) -> list[str]:
    listing = _git(box, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in listing if line.startswith("worktree ")]


def _repository(box: Sandbox) -> None:
    shutil.rmtree(box.project / ".git")
    _git(box, "init", "-q", "-b", "main")
    (box.project / "README.md").write_text("hello\n", encoding="utf-8")
    _git(box, "add", "README.md")
    _git(box, "commit", "-q", "-m", "first")


def test_an_isolated_child_works_in_a_new_worktree_and_branch_named_in_the_result(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _repository(box)
    _agent_file(box.bingo_home / "agents", "builder", isolation="worktree")
    use_scripted_model(
        box,
        [
            [_agent("call-1", "Add a file.", agent="builder")],
            [tool("child-write", "write", {"path": "added.txt", "content": "from the child\n"})],
            [text("Added it.")],
            [text("ok")],
        ],
    )
    result = box.run("-p", "--allow", "write", "go")
    assert result.returncode == 0, result.stderr
    (block,) = tool_results(model_requests(box)[-1])
    said = result_text(block)
    assert said.startswith("Added it.")
    branch = _git(box, "branch", "--list", "bingo/agent-builder-*", "--format=%(refname:short)").strip()
    (path,) = [Path(line) for line in _worktrees(box) if "agent-builder-" in line]
    assert branch and branch in said and str(path) in said
    assert (path / "added.txt").read_text(encoding="utf-8") == "from the child\n"
    assert not (box.project / "added.txt").exists()  # the project's own tree is untouched
    assert _git(box, "status", "--porcelain") == ""


def test_an_isolated_child_that_changed_nothing_leaves_no_worktree_or_branch(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _repository(box)
    _agent_file(box.bingo_home / "agents", "looker", isolation="worktree")
    use_scripted_model(
        box,
        [
            [_agent("call-1", "Look around.", agent="looker")],
            [tool("child-read", "read", {"path": "README.md"})],
            [text("It says hello.")],
            [text("ok")],
        ],
    )
    result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    _, child, child_after, after = model_requests(box)
    assert "hello" in result_text(tool_results(child_after)[0])  # it read the worktree's copy
    said = result_text(tool_results(after)[0])
    assert said.startswith("It says hello.") and "removed" in said
    assert _git(box, "branch", "--list", "bingo/*") == ""
    assert [Path(path).resolve() for path in _worktrees(box)] == [box.project.resolve()]
    assert not any((box.project / ".git" / "bingo-worktrees").iterdir())


def test_an_isolated_child_outside_a_git_repository_is_a_clear_error_result(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    _agent_file(box.bingo_home / "agents", "builder", isolation="worktree")
    use_scripted_model(box, [[_agent("call-1", "Add a file.", agent="builder")], [text("ok")]])
    result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    parent, after = model_requests(box)  # no child request was made
    (block,) = tool_results(after)
    said = result_text(block)
    assert block.get("isError") and "not in a git repository" in said and "isolation: worktree" in said


def test_agents_max_concurrent_is_checked_like_the_other_keys(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"agents": {"maxConcurrent": 0}})
    result = box.run("-p", "/help")
    assert result.returncode == 2 and no_traceback(result)
    assert "agents.maxConcurrent" in result.stderr and "positive whole number" in result.stderr


def test_slash_agents_lists_each_agent_with_its_tools_model_and_file(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    path = _agent_file(box.bingo_home / "agents", "reviewer", tools="Read, Grep", model="scripted-small")
    _agent_file(
        box.bingo_home / "agents", "builder", isolation="worktree", description='"builds \\e[31mthings"'
    )  # YAML's ESC
    result = box.run("-p", "/agents")
    assert result.returncode == 0, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("reviewer")]
    assert "Read, Grep" in row and "scripted-small" in row and str(path) in row
    assert "\x1b" not in result.stdout and "\\x1b" in result.stdout  # a file's bytes are escaped
    empty = Sandbox(tmp_path / "empty").run("-p", "/agents")
    assert empty.returncode == 0 and "agents: none" in empty.stdout


def test_check_plugin_checks_agent_files_one_line_each(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    agents = box.home / ".claude" / "agents"
    good = _agent_file(agents, "reviewer", tools="Read, Grep")
    (agents / "bad.md").write_text("---\nname: reviewer two\ndescription: x\n---\nbody\n", encoding="utf-8")
    for target in (box.home / ".claude", agents):
        result = box.run("--check-plugin", str(target))
        assert result.returncode == 1 and no_traceback(result), result.stderr
        lines = result.stdout.splitlines()
        assert f"✓ agent reviewer ({good})" in lines
        (bad,) = [line for line in lines if line.startswith("✗ agent ")]
        assert "bad.md" in bad and "is not lowercase" in bad


def _haiku_child(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """A sonnet parent (the built-in anthropic provider's default) whose one `agent` call runs
    the agent `quick` on `model: haiku`: the run with `options`, and every request's body.
    The local model server reports 11 input and 7 output tokens a response, as each API does."""
    box = Sandbox(tmp_path)
    _agent_file(box.home / ".claude" / "agents", "quick", model="haiku")
    replies: list[Reply] = [
        [("tool", "call-1", "agent", {"description": "d", "prompt": "One.", "agent": "quick"})],
        [("text", "from quick")],
        [("text", "ok")],
    ]
    with ModelServer(replies) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"}
        result = box.run("-p", *options, "go", env=env)
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    return result, bodies


def test_claude_codes_short_model_names_reach_the_anthropic_api_as_its_ids(tmp_path: Path) -> None:
    _, bodies = _haiku_child(tmp_path)
    assert [body["model"] for body in bodies] == ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"]


def test_a_childs_tokens_are_priced_at_its_own_model_in_the_json_result(tmp_path: Path) -> None:
    # The parent's two responses on claude-sonnet-4-5 ($3 / $15 a million), the child's one on
    # haiku (claude-haiku-4-5, $1 / $5).
    result, _ = _haiku_child(tmp_path, "--output-format", "json")
    out = json.loads(result.stdout)
    assert out["usage"]["input_tokens"] == 33 and out["usage"]["output_tokens"] == 21
    assert out["total_cost_usd"] == pytest.approx(2 * (11 * 3 + 7 * 15) / 1e6 + (11 * 1 + 7 * 5) / 1e6)


def test_stream_json_writes_a_childs_messages_as_lines_naming_the_agent_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("one two three\n", encoding="utf-8")
    _agent_file(box.home / ".claude" / "agents", "reader")
    replies: list[Reply] = [
        [("tool", "call-1", "agent", {"description": "d", "prompt": "Read it.", "agent": "reader"})],
        [("tool", "r1", "read", {"path": "notes.txt"})],
        [("text", "It says one two three.")],
        [("text", "Done.")],
    ]
    with ModelServer(replies) as server:
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"}
        result = box.run("-p", "--output-format", "stream-json", "go", env=env)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    said = [
        (line["type"], line.get("parent_tool_use_id"), [c["type"] for c in line["message"]["content"]])
        for line in lines
        if line["type"] in ("assistant", "user")
    ]
    assert said == [
        ("assistant", None, ["tool_use"]),
        ("assistant", "call-1", ["tool_use"]),
        ("user", "call-1", ["tool_result"]),
        ("assistant", "call-1", ["text"]),
        ("user", None, ["tool_result"]),
        ("assistant", None, ["text"]),
    ]
    (read,) = [line for line in lines if line["type"] == "user" and line["parent_tool_use_id"] == "call-1"]
    assert "one two three" in read["message"]["content"][0]["content"]
    (answer,) = [line for line in lines if line["type"] == "user" and line["parent_tool_use_id"] is None]
    assert answer["message"]["content"][0]["tool_use_id"] == "call-1"
    assert "It says one two three." in answer["message"]["content"][0]["content"]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "Done."


def test_a_childs_bash_runs_in_the_sandbox_and_reaches_only_what_was_granted(tmp_path: Path) -> None:
    # The evidence is the attacked side's (tests/e2e/_breakout.py): the planted key, the files,
    # the servers, the test's process; the child's bash is the same sandboxed tool as the parent's.
    from tests.e2e._breakout import BREAKOUT, SECRET_ENV, attempted, held, targets

    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        command = f"python3 {BREAKOUT} {found.write(tmp_path / 'targets.json')} out/breakout-child.json bash"
        use_scripted_model(
            box,
            [
                [_agent("call-1", "Run the command.")],
                [tool("child-bash-1", "bash", {"command": command})],
                [text("ran it")],
                [text("ok")],
            ],
            sandbox={"network": {"allow": ["localhost"]}},
        )
        result = box.run("-p", "go")  # no rule allows bash: the sandbox is its bound, in a child too
        assert result.returncode == 0, result.stderr
        report = attempted(box, "breakout-child.json")
        assert report, f"the child's bash did not run: {result.stderr}"
        assert held(found, report) == []
        assert no_traceback(result)
