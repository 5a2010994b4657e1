"""What a person sees of subagents (issue 33 item 4, INTERFACE.md §15, ADR-0049), through the
real binary: each running child's live line on a pty and Ctrl-C stopping both children (the
evidence: their `sleep` processes gone and no model request after the interrupt), a child's
question naming its agent (a pty, `-p`, an editor over ACP), each child's progress as
`tool_call_update`s of the parent's `agent` call over ACP, the child's frames kept in the
session and shown on `-c` as the agent's while the model is never sent them, `/rewind`
undoing what a child wrote and setting its frames aside, and `/usage` and the JSON output's
`usage` counting the child's tokens.

The model is tests/support/model_server.py (threaded: two children's requests are answered
at once; 11 input and 7 output tokens per answer) or the scripted-model plugin over ACP."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from acp.schema import ContentToolCallContent, TextContentBlock, ToolCallProgress, ToolCallStart, ToolCallUpdate

from bingo.kernel.frames import AgentFrame, Frame, live
from bingo.store import SessionStore
from tests.e2e._acp import Recorder, connected
from tests.e2e._acp import text as acp_text
from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import gone, model_requests, tool, use_scripted_model
from tests.e2e._scripted import text as say
from tests.e2e.test_terminal import WAIT, terminal
from tests.support.model_server import ModelServer, Reply

REVIEWER = "---\nname: reviewer\ndescription: looks over a change\n---\nYou look over changes.\n"


def _reviewer(box: Sandbox) -> None:
    agents = box.bingo_home / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "reviewer.md").write_text(REVIEWER, encoding="utf-8")


def _anthropic(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"}


def _delegate(call_id: str, description: str, prompt: str, agent: str | None = None) -> tuple[Any, ...]:
    input: dict[str, Any] = {"description": description, "prompt": prompt}
    if agent is not None:
        input["agent"] = agent
    return ("tool", call_id, "agent", input)


def _run(box: Sandbox, replies: list[Reply], *args: str) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    with ModelServer(replies) as server:
        result = box.run(*args, env=_anthropic(server))
        bodies = server.bodies
    assert no_traceback(result), result.stderr
    return result, bodies


def _texts(body: Any) -> str:
    """Every text the request sent, tool results' included, as one string."""
    return json.dumps(body["messages"])


def _session(box: Sandbox) -> list[Frame]:
    with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
        (info,) = store.sessions(str(box.project))
        return store.frames(info.id)


def _wait_for(files: Path, count: int) -> list[int]:
    """The pids the children's commands wrote, once `count` of them have."""
    import time

    deadline = time.monotonic() + WAIT
    while True:
        pids = [p.read_text().strip() for p in files.glob("pid.*")]
        if len(pids) >= count and all(pids):
            return [int(p) for p in pids]
        assert time.monotonic() < deadline, f"the children's commands did not start: {pids}"
        time.sleep(0.05)


def _until_gone(pid: int) -> None:
    import time

    deadline = time.monotonic() + WAIT
    while not gone(pid):
        assert time.monotonic() < deadline, f"the child's command {pid} still runs"
        time.sleep(0.05)


def test_two_running_children_each_show_a_live_line_and_ctrl_c_stops_both(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}, "permissions": {"allow": ["bash"]}})
    pids = tmp_path / "pids"
    pids.mkdir()
    # Each child runs one command that writes its pid and sleeps; both are running at once.
    command = f"echo $$ > $(mktemp -p {pids} pid.XXXXXX); exec sleep 60"
    replies: list[Reply] = [
        [_delegate("a1", "first look", "look at one"), _delegate("a2", "second look", "look at two")],
        [("tool", "b1", "bash", {"command": command})],
        [("tool", "b1", "bash", {"command": command})],
        [("text", "not reached")],
        [("text", "not reached")],
        [("text", "not reached")],
    ]
    servers: list[ModelServer] = []
    with terminal(box, replies, server=servers) as screen:
        screen.child.send("look at both\r")
        sleeping = _wait_for(pids, 2)
        # Each child is one live line under its `agent` call: the agent and what it does.
        screen.expect(r"⋯ agent first look · general: bash echo \$\$")
        screen.expect(r"⋯ agent second look · general: bash echo \$\$", timeout=WAIT)
        asked = len(servers[0].requests)
        assert asked == 3  # the parent's request and each child's first
        screen.child.sendcontrol("c")
        screen.expect("the turn was interrupted")
        screen.prompt()
        # Both children stopped: their commands are gone, and neither asked the model again.
        for pid in sleeping:
            _until_gone(pid)
        assert len(servers[0].requests) == asked
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert len(servers[0].requests) == asked


def test_a_childs_question_names_its_agent_on_a_terminal_and_in_print_mode(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _reviewer(box)
    box.settings({"sandbox": {"mode": "off"}})  # bash is asked about
    replies: list[Reply] = [
        [_delegate("a1", "check it", "run the check", "reviewer")],
        [("tool", "b1", "bash", {"command": "echo checked > checked.txt"})],
        [("text", "checked it")],
        [("text", "The reviewer checked it.")],
    ]
    with terminal(box, replies) as screen:
        screen.child.send("have it checked\r")
        screen.expect(r"agent reviewer wants to run bash\n +echo checked > checked.txt\n +\[y\] yes, once")
        screen.child.send("y")
        screen.expect(r"The reviewer checked it\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert (box.project / "checked.txt").read_text() == "checked\n"

    # Where nobody can be asked, the refusal the person reads names the agent too.
    (box.project / "checked.txt").unlink()
    result, bodies = _run(box, replies, "-p", "have it checked")
    assert result.returncode == 0, result.stderr
    assert "bingo: agent reviewer: bash is not allowed here" in result.stderr
    assert not (box.project / "checked.txt").exists()
    assert len(bodies) == 4


def test_resume_shows_the_childs_frames_as_the_agents_and_the_model_is_never_sent_them(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("the notes\n", encoding="utf-8")
    replies: list[Reply] = [
        [("text", "Asking a helper."), _delegate("a1", "read the notes", "what do the notes say?")],
        [("text", "Looking around first."), ("tool", "r1", "read", {"path": "notes.txt"})],
        [("text", "They say: the notes.")],
        [("text", "Done delegating.")],
        [("text", "Next answer.")],
    ]
    with ModelServer(replies) as server:
        first = box.run("-p", "delegate the reading", env=_anthropic(server))
        assert first.returncode == 0, first.stderr
        env = {**box.env, **_anthropic(server)}
        shown = _resumed(box, env)
        second = box.run("-p", "-c", "and next?", env=_anthropic(server))
        bodies = server.bodies
    assert second.returncode == 0, second.stderr
    # Shown on -c under the agent call, each line the agent's.
    assert re.search(r"✓ agent read the notes\n +agent general › > what do the notes say\?", shown), shown
    assert "agent general › Looking around first." in shown
    assert "agent general › → read notes.txt" in shown
    assert "agent general › They say: the notes." in shown
    # The model is told the child's answer as the call's result, never the child's own turn.
    continued = _texts(bodies[-1])
    assert "They say: the notes." in continued
    assert "Looking around first." not in continued
    assert "what do the notes say?" in continued  # the parent's own call of agent, as it made it
    assert not any("Looking around first." in _texts(body) for body in bodies[3:])


def _resumed(box: Sandbox, env: dict[str, str]) -> str:
    """What `bingo -c` shows as it opens on a terminal (its recap), then Ctrl-D."""
    import pexpect

    from tests.e2e._bingo import BINGO
    from tests.e2e.test_terminal import Screen

    child = pexpect.spawn(
        BINGO,
        ["-c"],
        cwd=str(box.project),
        env={**env, "TERM": "xterm", "LANG": "C.UTF-8", "PROMPT_TOOLKIT_NO_CPR": "1"},
        dimensions=(60, 160),
        encoding="utf-8",
        timeout=WAIT,
    )
    try:
        screen = Screen(child)
        screen.expect(r"Done delegating\.")  # the recap's last line (its lines hold `>` too)
        screen.prompt()
        shown = screen.text()
        # Typed, not Ctrl-D: a key that meets the terminal before bingo has it in raw mode is
        # the line discipline's, and /exit is read as a line either way.
        child.send("/exit\r")
        assert screen.exits() == 0
        return shown
    finally:
        child.close(force=True)


def test_usage_and_the_json_output_count_the_childs_tokens(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    replies: list[Reply] = [
        [_delegate("a1", "count", "say something")],
        [("text", "something")],
        [("text", "It said something.")],
    ]
    result, bodies = _run(box, replies, "-p", "--output-format", "json", "delegate it")
    assert result.returncode == 0, result.stderr
    assert len(bodies) == 3
    usage = json.loads(result.stdout)["usage"]
    # 11 input and 7 output tokens per answer: the parent's two and the child's one.
    assert (usage["input_tokens"], usage["output_tokens"]) == (33, 21)
    shown, _ = _run(box, [], "-p", "-c", "/usage")
    rows = [line.split() for line in shown.stdout.splitlines()]
    assert ["this", "session", "33", "0", "0", "21"] in rows


def test_rewind_undoes_what_a_child_wrote_and_sets_its_frames_aside(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})
    (box.project / "kept.txt").write_text("as it was\n", encoding="utf-8")
    replies: list[Reply] = [
        [_delegate("a1", "write", "write the files")],
        [
            ("tool", "w1", "write", {"path": "made.txt", "content": "a child made this\n"}),
            ("tool", "b1", "bash", {"command": "echo changed by a child > kept.txt"}),
        ],
        [("text", "wrote them")],
        [("text", "The child wrote them.")],
    ]
    result, _ = _run(box, replies, "--allow", "write", "--allow", "bash", "-p", "have them written")
    assert result.returncode == 0, result.stderr
    assert (box.project / "made.txt").exists()
    assert (box.project / "kept.txt").read_text() == "changed by a child\n"
    kept = [f for f in _session(box) if isinstance(f, AgentFrame)]
    assert kept and {f.agent for f in kept} == {"general"} and {f.call_id for f in kept} == {"a1"}
    assert [f for f in live(_session(box)) if isinstance(f, AgentFrame)] == kept

    listed, _ = _run(box, [], "-p", "-c", "/rewind")
    assert "· 2 files changed since" in listed.stdout, listed.stdout
    rewound, _ = _run(box, [], "-p", "-c", "/rewind 1")
    assert rewound.returncode == 0, rewound.stderr
    assert not (box.project / "made.txt").exists()
    assert (box.project / "kept.txt").read_text() == "as it was\n"
    # The child's frames are set aside with the prompt's turn: kept, no longer the session's.
    after = _session(box)
    assert [f for f in after if isinstance(f, AgentFrame)] == kept
    assert not [f for f in live(after) if isinstance(f, AgentFrame)]


def _acp(coro: Coroutine[Any, Any, None]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(60):
            await coro

    asyncio.run(bounded())


def _content(update: ToolCallStart | ToolCallProgress | ToolCallUpdate) -> str:
    return "\n".join(
        c.content.text
        for c in update.content or []
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    )


def test_over_acp_a_childs_progress_updates_the_agent_call_and_its_question_names_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _reviewer(box)
    (box.project / "notes.txt").write_text("the notes\n", encoding="utf-8")
    use_scripted_model(
        box,
        [
            [tool("a1", "agent", {"description": "look", "prompt": "look and check", "agent": "reviewer"})],
            [say("reading"), tool("r1", "read", {"path": "notes.txt"})],
            [tool("b1", "bash", {"command": "echo ok > ok.txt"})],
            [say("looked")],
            [say("The reviewer looked.")],
        ],
        sandbox={"mode": "off"},  # bash is asked about
    )
    client, loaded = Recorder(answers=["allow_once"]), Recorder()

    async def go() -> None:
        async with connected(box, client) as conn:
            session = await conn.new_session(cwd=str(box.project))
            answer = await conn.prompt(session_id=session.session_id, prompt=[acp_text("have a look")])
            assert answer.stop_reason == "end_turn"
        async with connected(box, loaded) as conn:  # a second bingo loads the thread
            await conn.load_session(cwd=str(box.project), session_id=session.session_id)

    _acp(go())
    assert len(model_requests(box)) == 5
    assert (box.project / "ok.txt").read_text() == "ok\n"
    # The child's calls are no cards of their own: its progress updates the agent call's.
    cards = [u.tool_call_id for u in client.calls() if isinstance(u, ToolCallStart)]
    assert cards == ["a1"], cards
    progress = [_content(u) for u in client.calls() if isinstance(u, ToolCallProgress) and u.tool_call_id == "a1"]
    assert "reviewer: read notes.txt" in progress
    assert "reviewer: bash echo ok > ok.txt" in progress
    # Its question is put on the agent call's card, naming the agent.
    ((asked, _),) = client.asked
    assert asked.tool_call_id == "a1"
    assert "agent reviewer wants to run bash echo ok > ok.txt" in _content(asked)
    assert client.statuses("a1")[-1] == "completed"
    # Loaded again, the child's steps are replayed on the agent call's card as they were seen.
    replayed = [_content(u) for u in loaded.calls() if isinstance(u, ToolCallProgress) and u.tool_call_id == "a1"]
    assert "reviewer: → read notes.txt" in replayed
    assert "reviewer: → bash echo ok > ok.txt" in replayed
    assert [u.tool_call_id for u in loaded.calls() if isinstance(u, ToolCallStart)] == ["a1"]


_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}


def _git(box: Sandbox, *args: str) -> str:
    env = {**box.env, **_GIT_ENV, "GIT_CEILING_DIRECTORIES": str(box.root)}
    done = subprocess.run(["git", *args], cwd=box.project, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_rewind_names_the_worktree_an_isolated_child_wrote_in_and_leaves_it_alone(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (box.project / ".git").rmdir()
    _git(box, "init", "-q", "-b", "main")
    (box.project / "README.md").write_text("hello\n", encoding="utf-8")
    _git(box, "add", "README.md")
    _git(box, "commit", "-q", "-m", "first")
    agents = box.bingo_home / "agents"
    agents.mkdir(parents=True)
    (agents / "builder.md").write_text(
        "---\nname: builder\ndescription: builds\nisolation: worktree\n---\nBuild.\n", encoding="utf-8"
    )
    box.settings({"sandbox": {"mode": "off"}})
    replies: list[Reply] = [
        [_delegate("a1", "add a file", "add it", "builder")],
        [("tool", "w1", "write", {"path": "added.txt", "content": "from the child\n"})],
        [("text", "Added it.")],
        [("text", "ok")],
    ]
    result, _ = _run(box, replies, "--allow", "write", "-p", "have it added")
    assert result.returncode == 0, result.stderr
    branch = _git(box, "branch", "--list", "bingo/agent-builder-*", "--format=%(refname:short)").strip()
    (worktree,) = (box.project / ".git" / "bingo-worktrees").iterdir()
    assert (worktree / "added.txt").exists()

    rewound, _ = _run(box, [], "-p", "-c", "/rewind 1")
    assert rewound.returncode == 0, rewound.stderr
    assert (
        f"not rewound: what agent builder wrote in the git worktree {worktree} (branch {branch}): "
        "merge or drop it with git" in rewound.stdout
    ), rewound.stdout
    assert (worktree / "added.txt").read_text(encoding="utf-8") == "from the child\n"  # left alone
    assert branch in _git(box, "branch", "--list")
