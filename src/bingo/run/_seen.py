"""What the person sees, and the session keeps, of a child conversation (a subagent,
INTERFACE.md §15, ADR-0049).

Owns what `attach` gives a child run (`ChildRun`) as it opens, before its turn starts:
  - `ChildSurface`, its `watch` and its conversation's asker: the parent run's surface, seen
    through the parent's `agent` call. The child's turn is one live line on that call
    (`tool_progress`: the terminal's line under the call, an editor's `tool_call_update` of
    the call's card), `NAME: what it is doing`; a question it asks names the agent (a surface
    that can say so itself, `AsksForAgents`, puts the gate's question with the agent named,
    an editor on the parent's call's card; any other is asked with the agent named as who
    asks); a wait or a refusal is said with the agent's name first.
  - where its frames go (`on_frame`): the parent's stored session, each as an `AgentFrame`
    naming the call and the agent, so `--resume` and `session/load` show it as the agent's,
    the parent's history never holds it, and a rewind sets it aside with the parent's frames
    around it; the usage of each of its model responses counts, as it is spent, in the
    parent run's (`/usage`, the status line, `--output-format json`) and, from the frames,
    in the session's.

A child that ran in a git worktree (`isolation: worktree`) leaves one more frame, a notice
naming the worktree and its branch (`worktree_notice`), so that `/rewind` can say which
worktrees it leaves alone (`worktrees`): checkpoints never record them.

It opens no run and runs nothing (the `agent` tool does, through the factory).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.frames import AgentFrame, AssistantFrame, Frame, NoticeFrame, RewindFrame, plus
from ..kernel.interfaces import Declined, PermissionAnswer, ShowsWhoAsks
from ..surfaces import AsksForAgents, Surface, one_line
from ..wire import CommandOutcome, Json, Notice, ToolOutput

if TYPE_CHECKING:
    from ._child import ChildRun

__all__ = ["ChildSurface", "attach", "worktree_notice", "worktrees"]

_LINE = 120
"""Characters of what a child is doing kept for its live line (the surface cuts it again)."""


def attach(child: ChildRun) -> None:
    """Show `child` on its parent run's surface and keep its frames in its parent's session
    (see the module). Called as the child opens, before its turn starts."""
    parent = child.parent
    surface = ChildSurface(parent.surface, call_id=child.call_id, agent=child.name, cwd=str(child.cwd))
    child.watch = surface
    child.conversation.asker = surface
    conversation = parent.conversation
    call_id, agent = child.call_id, child.name

    def keep(frame: Frame) -> None:
        if isinstance(frame, (RewindFrame, AgentFrame)):
            return  # a child neither rewinds nor runs a child of its own
        if isinstance(frame, AssistantFrame) and frame.usage is not None:
            conversation.used = plus(conversation.used, frame.usage)
        # Through the parent's log (its session, seen by a surface that watches the log: a
        # script's stream-json writes the child's messages as lines of their own).
        conversation.log.append(AgentFrame(call_id=call_id, agent=agent, frame=frame, turn=conversation.turn))

    child.on_frame = keep

    def ended(child: ChildRun) -> None:
        if child.worktree is not None:
            notice = worktree_notice(agent, str(child.worktree.path), child.worktree.branch)
            keep(NoticeFrame(notice=notice, turn=child.conversation.turn))

    child.on_end.append(ended)


_WORKED = re.compile(r"agent (.+) ran in the git worktree (.+) on the branch (\S+)")


def worktree_notice(agent: str, path: str, branch: str) -> Notice:
    """The notice a child that ran in a git worktree leaves in its parent's session."""
    return Notice(source="bingo", message=f"agent {agent} ran in the git worktree {path} on the branch {branch}")


def worktrees(frames: list[Frame]) -> list[tuple[str, str, str]]:
    """The git worktrees children ran in, among `frames`, that are still there: (agent,
    path, branch) each, in order."""
    found: list[tuple[str, str, str]] = []
    for frame in frames:
        if isinstance(frame, AgentFrame) and isinstance(frame.frame, NoticeFrame):
            notice = frame.frame.notice
            worked = _WORKED.fullmatch(notice.message) if notice.source == "bingo" else None
            if worked is not None and Path(worked.group(2)).is_dir():
                found.append((worked.group(1), worked.group(2), worked.group(3)))
    return found


class _Call:
    __slots__ = ("about", "name")

    def __init__(self, name: str, about: str) -> None:
        self.name, self.about = name, about


class ChildSurface:
    """A child conversation's surface (a `Surface`): its parent run's `parent`, through the
    parent's `agent` call `call_id`, the child's turn as that call's live line."""

    __slots__ = ("_agent", "_call", "_calls", "_cwd", "_parent", "_text")

    def __init__(self, parent: Surface, *, call_id: str, agent: str, cwd: str = "") -> None:
        self._parent = parent
        self._cwd = cwd
        """The child's working directory (its worktree, if it has one): where the preview of
        a call it asks about is worked out."""
        self._call = call_id
        self._agent = agent
        self._calls: dict[str, _Call] = {}
        """The child's calls running now, by its call id, the latest last."""
        self._text = ""
        """The tail of the text the child's model is writing now."""

    def _doing(self, what: str) -> None:
        """The live line: `NAME: what` (escaped by the surface that shows it)."""
        self._parent.tool_progress(self._call, one_line(f"{self._agent}: {what}")[:_LINE])

    # --- TurnEvents -----------------------------------------------------------------------

    def text(self, text: str) -> None:
        self._text = (self._text + text)[-4 * _LINE :]
        lines = [line for line in self._text.splitlines() if line.strip()]
        if lines and not self._calls:
            self._doing(lines[-1].strip())

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        from ..surfaces._calls import subject

        self._text = ""
        about = subject(name, input)
        self._calls[call_id] = _Call(name, f"{name} {about}" if about else name)
        self._doing(self._calls[call_id].about)

    def tool_progress(self, call_id: str, tail: str) -> None:
        call = self._calls.get(call_id)
        lines = tail.strip().splitlines()
        if call is not None and lines:
            self._doing(f"{call.about} · {lines[-1].strip()}")

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        call = self._calls.pop(call_id, None)
        about = call.about if call is not None else name
        self._doing(f"{'✗' if output.is_error else '✓'} {about}")

    def waiting(self, what: str) -> None:
        self._parent.waiting(f"agent {self._agent}: {what}")

    def refused(self, call_id: str, name: str, why: str) -> None:
        self._parent.refused(call_id, name, f"agent {self._agent}: {why}")

    # --- notices, outcomes, the end of a turn ---------------------------------------------

    def notice(self, notice: Notice) -> None:
        self._parent.notice(notice)

    def outcome(self, outcome: CommandOutcome) -> None:
        return None  # a child runs no command: what it answers is the agent call's result

    def end(self) -> None:
        return None

    # --- Asker: the parent's person, told which agent asks -------------------------------

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer | Declined:
        return await self.permission_asked(name, input, always, "")

    async def permission_asked(self, name: str, input: Json, always: str, by: str) -> PermissionAnswer | Declined:
        parent = self._parent
        if isinstance(parent, AsksForAgents):
            return await parent.agent_permission(self._call, self._agent, name, input, always, by, self._cwd)
        if isinstance(parent, ShowsWhoAsks):
            asks = f"asked by agent {self._agent}" + (f"; {by}" if by else "")
            return await parent.permission_asked(name, input, always, asks)
        return await parent.permission(name, input, always)

    async def ask(self, question: str, choices: list[str] | None) -> str:
        return await self._parent.ask(f"agent {self._agent} asks: {question}", choices)
