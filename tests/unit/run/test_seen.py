"""What is seen and kept of a child conversation (ADR-0049): the `AgentFrame` a child's frame
is kept as (never in the parent's history, set aside by a rewind, its usage counted), the
child's surface (its turn as the parent's call's live line, its questions naming the agent),
and the recap of a continued session showing the child's frames as the agent's."""

from __future__ import annotations

import asyncio
from io import StringIO
from pathlib import Path

import msgspec
import pytest
from rich.console import Console
from rich.text import Text

from bingo.kernel.errors import GateError
from bingo.kernel.frames import (
    AgentFrame,
    AssistantFrame,
    Frame,
    PromptFrame,
    RewindFrame,
    ToolCallFrame,
    ToolResultFrame,
    decode_frame,
    encode_frame,
    history,
    live,
    spent,
)
from bingo.kernel.interfaces import Declined, PermissionAnswer
from bingo.run._seen import ChildSurface
from bingo.surfaces.terminal import Opening
from bingo.surfaces.terminal._opening import recap
from bingo.wire import CommandOutcome, Json, Message, Notice, TextBlock, TextPart, ToolOutput, ToolUseBlock, Usage


def _said(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def _child(frame: Frame, call_id: str = "a1", agent: str = "reviewer", turn: int = 1) -> AgentFrame:
    assert not isinstance(frame, (AgentFrame, RewindFrame))
    return AgentFrame(call_id=call_id, agent=agent, frame=frame, turn=turn)


_CALL = Message(
    role="assistant", content=[ToolUseBlock(id="a1", name="agent", input={"description": "look", "prompt": "go"})]
)
_SESSION: list[Frame] = [
    PromptFrame(text="delegate", turn=1),
    AssistantFrame(message=_CALL, turn=1, usage=Usage(input_tokens=10, output_tokens=2)),
    ToolCallFrame(call_id="a1", name="agent", input={"description": "look", "prompt": "go"}, turn=1),
    _child(PromptFrame(text="go", turn=1)),
    _child(AssistantFrame(message=_said("child thinking"), turn=1, usage=Usage(input_tokens=5, output_tokens=3))),
    ToolResultFrame(call_id="a1", output=ToolOutput(parts=[TextPart(text="child answer")]), turn=1),
    AssistantFrame(message=_said("done"), turn=1, usage=Usage(input_tokens=20, output_tokens=1)),
]


def test_an_agent_frame_is_kept_and_read_back_whole() -> None:
    for frame in _SESSION:
        assert decode_frame(encode_frame(frame)) == frame
    assert b'"kind":"agent"' in encode_frame(_SESSION[3])


def test_the_parents_history_never_holds_a_childs_frames() -> None:
    messages = history(_SESSION)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert "child thinking" not in msgspec.json.encode(messages).decode()
    assert "child answer" in msgspec.json.encode(messages).decode()  # its answer: the call's result


def test_the_sessions_usage_counts_the_childs_responses() -> None:
    assert spent(_SESSION) == Usage(input_tokens=35, output_tokens=6)


def test_a_rewind_sets_a_childs_frames_aside_with_its_parents_turn() -> None:
    frames = [*_SESSION, RewindFrame(to=0, turn=1)]
    assert live(frames) == []
    frames = [*_SESSION, PromptFrame(text="again", turn=2), RewindFrame(to=len(_SESSION), turn=2)]
    assert [f for f in live(frames) if isinstance(f, AgentFrame)] == _SESSION[3:5]


class _Parent:
    """A parent run's surface: what the child's surface passes on."""

    def __init__(self) -> None:
        self.progress: list[tuple[str, str]] = []
        self.lines: list[str] = []
        self.asked: list[str] = []

    def text(self, text: str) -> None:
        self.lines.append(f"text {text}")

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        self.lines.append(f"started {call_id}")

    def tool_progress(self, call_id: str, tail: str) -> None:
        self.progress.append((call_id, tail))

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        self.lines.append(f"finished {call_id}")

    def waiting(self, what: str) -> None:
        self.lines.append(f"waiting {what}")

    def refused(self, call_id: str, name: str, why: str) -> None:
        self.lines.append(f"refused {call_id} {why}")

    def notice(self, notice: Notice) -> None:
        self.lines.append(f"notice {notice.message}")

    def outcome(self, outcome: CommandOutcome) -> None:
        self.lines.append("outcome")

    def end(self) -> None:
        return None

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer | Declined:
        self.asked.append(f"permission {name}")
        return "once"

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self.asked.append(question)
        return "yes"


class _AsksForAgents(_Parent):
    async def agent_permission(
        self, call_id: str, agent: str, name: str, input: Json, always: str, by: str, cwd: str
    ) -> PermissionAnswer | Declined:
        self.asked.append(f"{call_id} {agent} {name} {by} in {cwd}")
        return "always"


class _ShowsWhoAsks(_Parent):
    async def permission_asked(self, name: str, input: Json, always: str, by: str) -> PermissionAnswer | Declined:
        self.asked.append(f"{name} · {by}")
        return "no"


def test_a_childs_turn_is_one_live_line_on_the_parents_call() -> None:
    parent = _Parent()
    child = ChildSurface(parent, call_id="a1", agent="reviewer")
    child.text("Let me look.\n")
    child.text("First the ")
    child.tool_started("c1", "bash", {"command": "ls -la\nwc -l x"})
    child.tool_progress("c1", "one\ntwo\n")
    child.text("ignored while a call runs")
    child.tool_finished("c1", "bash", ToolOutput(parts=[TextPart(text="ok")]), 0.1)
    child.tool_started("c2", "read", {"path": "x.py"})
    child.tool_finished("c2", "read", ToolOutput(parts=[TextPart(text="no")], is_error=True), 0.1)
    assert parent.progress == [
        ("a1", "reviewer: Let me look."),
        ("a1", "reviewer: First the"),
        ("a1", "reviewer: bash ls -la (+1 line)"),
        ("a1", "reviewer: bash ls -la (+1 line) · two"),
        ("a1", "reviewer: ✓ bash ls -la (+1 line)"),
        ("a1", "reviewer: read x.py"),
        ("a1", "reviewer: ✗ read x.py"),
    ]
    assert parent.lines == []  # no call of the child's is shown as the parent's own
    child.waiting("waiting for bash to answer its cancel")
    child.refused("c3", "bash", "bash is denied by the rule 'bash' in permissions.deny")
    assert parent.lines == [
        "waiting agent reviewer: waiting for bash to answer its cancel",
        "refused c3 agent reviewer: bash is denied by the rule 'bash' in permissions.deny",
    ]


def test_a_live_line_is_one_bounded_line() -> None:
    parent = _Parent()
    ChildSurface(parent, call_id="a1", agent="r").tool_started("c1", "bash", {"command": "x" * 500})
    ((_, line),) = parent.progress
    assert "\n" not in line and len(line) <= 120


def test_a_childs_question_names_the_agent_whatever_the_parents_surface() -> None:
    asyncio.run(_names_the_agent())


async def _names_the_agent() -> None:
    own = _AsksForAgents()
    child = ChildSurface(own, call_id="a1", agent="reviewer", cwd="/wt")
    assert await child.permission("bash", {}, "bash(ls)") == "always"
    assert await child.permission_asked("bash", {}, "r", "hook h asks") == "always"
    assert own.asked == ["a1 reviewer bash  in /wt", "a1 reviewer bash hook h asks in /wt"]
    who = _ShowsWhoAsks()
    assert await ChildSurface(who, call_id="a1", agent="reviewer").permission("bash", {}, "r") == "no"
    assert who.asked == ["bash · asked by agent reviewer"]
    plain = _Parent()
    child = ChildSurface(plain, call_id="a1", agent="reviewer")
    assert await child.permission("bash", {}, "r") == "once"
    assert await child.ask("go on?", ["yes", "no"]) == "yes"
    assert plain.asked == ["permission bash", "agent reviewer asks: go on?"]


def test_nobody_to_ask_stays_a_gate_error() -> None:
    class _Nobody(_Parent):
        async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer | Declined:
            raise GateError("no person to ask")

    with pytest.raises(GateError):
        asyncio.run(ChildSurface(_Nobody(), call_id="a1", agent="r").permission("bash", {}, "r"))


def _shown(*drawn: object) -> str:
    out = StringIO()
    console = Console(file=out, width=100, color_system=None)
    for one in drawn:
        console.print(one, soft_wrap=isinstance(one, Text))
    return out.getvalue()


def test_the_recap_shows_a_childs_frames_under_its_call_as_the_agents() -> None:
    agents = [f for f in _SESSION if isinstance(f, AgentFrame)]
    calls = Message(
        role="assistant", content=[TextBlock(text="sure"), ToolUseBlock(id="c9", name="bash", input={"command": "x"})]
    )
    agents.append(_child(AssistantFrame(message=calls, turn=1)))
    agents.append(_child(PromptFrame(text="elsewhere \x1b[2J", turn=1), call_id="b2", agent="other"))
    opening = Opening(version="1", provider="p", model="m", cwd="/", past=history(_SESSION), agents=agents)
    shown = _shown(*recap(opening))
    assert (
        "✓ agent look\n"
        "  agent reviewer › > go\n"
        "  agent reviewer › child thinking\n"
        "  agent reviewer › sure\n"
        "  agent reviewer › → bash x\n"
    ) in shown
    assert "other" not in shown  # a call the history does not hold shows nothing


def test_the_recap_shows_the_last_lines_of_a_long_child() -> None:
    agents = [_child(AssistantFrame(message=_said(f"line {n}"), turn=1)) for n in range(30)]
    opening = Opening(version="1", provider="p", model="m", cwd="/", past=history(_SESSION), agents=agents)
    shown = _shown(*recap(opening))
    assert "  agent reviewer › … 18 earlier lines\n  agent reviewer › line 18\n" in shown
    assert "line 29" in shown and "line 17\n" not in shown


def test_the_worktrees_children_ran_in_are_read_back_while_they_are_there(tmp_path: Path) -> None:
    from bingo.kernel.frames import NoticeFrame
    from bingo.run._seen import worktree_notice, worktrees

    there, gone = tmp_path / "wt one", tmp_path / "gone"
    there.mkdir()
    frames: list[Frame] = [
        _child(NoticeFrame(notice=worktree_notice("builder", str(there), "bingo/agent-builder-1"), turn=1)),
        _child(NoticeFrame(notice=worktree_notice("other", str(gone), "bingo/agent-other-2"), turn=1)),
        NoticeFrame(notice=worktree_notice("parent", str(there), "b"), turn=1),  # not a child's
    ]
    assert worktrees(frames) == [("builder", str(there), "bingo/agent-builder-1")]


def test_the_terminal_asks_for_a_child_naming_it_and_previews_where_the_child_works() -> None:
    from bingo.surfaces.terminal import TerminalSurface

    async def go() -> tuple[str, list[str | None], PermissionAnswer | Declined]:
        surface = TerminalSurface(console=Console(file=StringIO()))
        where: list[str | None] = []

        async def dry_run(name: str, input: Json, cwd: str | None) -> ToolOutput | None:
            where.append(cwd)
            return None

        surface.dry_run = dry_run
        asked = asyncio.ensure_future(
            surface.agent_permission("a1", "builder", "write", {"path": "x"}, "write(x)", "", "/wt/agent-builder-1")
        )
        while not surface.questions:
            await asyncio.sleep(0)
        question = surface.questions[0]
        question.answer.set_result("once")
        return question.text, where, await asked

    assert asyncio.run(go()) == ("agent builder wants to run write", ["/wt/agent-builder-1"], "once")
