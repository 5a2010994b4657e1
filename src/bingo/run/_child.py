"""A child conversation: what the `agent` tool runs (INTERFACE.md §15, ADR-0049).

A `ChildRun` is opened only by the run factory (`RunFactory.child`), on the process's one
registry, gate, hooks, sandbox and plugins, so every call it makes passes the one choke point
a parent's calls pass (`Conversation._call_tool`: `tool.before` hooks and command hooks,
then the gate, then the tool). It owns one conversation with a fresh history, the tools it
may offer, its agent's name and description, the parent's call that opened it, the frames
its conversation writes (passed to `on_frame`, for whoever keeps them), its turn
events (passed to `watch`, for whoever shows them), its interrupt, and its worktree when its
agent asks for one. It draws nothing and stores nothing itself: what a person sees of a
child, and where its frames are kept, are its watchers' (issue 33's other half).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.dispatch import ChooseModel
from ..kernel.errors import BingoError
from ..kernel.frames import Frame
from ..kernel.interfaces import TurnEvents
from ..kernel.registry import BUILTIN
from ..kernel.turn import Conversation, TurnResult
from ..wire import Json, TextBlock, ToolOutput

if TYPE_CHECKING:
    from ._run import Run
    from ._worktree import Worktree

__all__ = ["CLAUDE_ALIASES", "GENERAL", "ChildRun"]

GENERAL = "general"
"""The name of a child whose call names no agent: a helper with the parent's tools."""

CLAUDE_ALIASES = {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-5", "haiku": "claude-haiku-4-5"}
"""Claude Code's short model names in agent files, as the built-in `anthropic` provider's
model ids: with any other provider a name is passed as written (ADR-0049)."""


class ChildRun:
    """One child conversation of a parent run, for one `agent` call (see the module)."""

    __slots__ = (
        "_choose",
        "_stopped",
        "call_id",
        "conversation",
        "cwd",
        "description",
        "model",
        "name",
        "on_end",
        "on_frame",
        "parent",
        "result",
        "watch",
        "worktree",
    )

    def __init__(
        self,
        *,
        parent: Run,
        name: str,
        description: str,
        call_id: str,
        cwd: Path,
        choose: ChooseModel,
        model: str | None,
        conversation: Callable[[ChildRun], Conversation],
        worktree: Worktree | None = None,
    ) -> None:
        self.parent = parent
        """The run whose model called `agent` (it keeps its live children: `Run.children`)."""
        self.name = name
        """The agent's name (`GENERAL` when the call named none)."""
        self.description = description
        """The call's `description`: a few words on the task."""
        self.call_id = call_id
        """The parent's call of `agent` that opened this child (its toolUse id)."""
        self.cwd = cwd
        self.worktree = worktree
        """The worktree the child works in (`isolation: worktree`), or None."""
        self.model = model
        """The model its agent names (None: the parent's)."""
        self._choose = choose
        self.on_frame: Callable[[Frame], None] | None = None
        """Called with each frame as it is written (where a session keeps them)."""
        self.watch: TurnEvents | None = None
        """Told the child's turn events (its text, its calls): where a live line comes from."""
        self.on_end: list[Callable[[ChildRun], None]] = []
        """Called once the child's turn is over (its `result` set), before it is let go."""
        self.result: TurnResult | None = None
        self._stopped = False
        self.conversation = conversation(self)

    # --- the run ---------------------------------------------------------------------

    async def run(self, prompt: str) -> TurnResult:
        """Run the child's one turn on `prompt` with the model its agent names (else the
        parent's), and answer how it ended. The model is chosen through the parent run's own
        choice, so `--max-turns` counts the child's requests too."""
        conversation = self.conversation
        if self._stopped:
            self.result = TurnResult("interrupted", "the agent was interrupted before it started")
            return self.result
        try:
            provider, model = self._choose()
        except BingoError as exc:  # no model to be had
            self.result = TurnResult("failed", exc.line())
            return self.result
        wanted = self.model or model
        if provider.spec.name == "anthropic" and provider.source == BUILTIN:
            wanted = CLAUDE_ALIASES.get(wanted, wanted)
        conversation.provider, conversation.model = provider, wanted
        self.result = await conversation.run_turn(prompt)
        return self.result

    def answer(self) -> str:
        """The child's final text: the text of its last message (what the parent is told)."""
        for message in reversed(self.conversation.messages):
            if message.role == "assistant":
                return "".join(block.text for block in message.content if isinstance(block, TextBlock)).strip()
        return ""

    def interrupt(self) -> list[str]:
        """Interrupt the child's turn (the parent's interrupt reaches it here); the names of
        its calls still being waited for. Before its turn starts, it will not start."""
        self._stopped = True
        if self.result is not None:
            return []
        return self.conversation.interrupt()

    def abandon(self) -> list[str]:
        """Stop waiting for the child's interrupted calls (a second interrupt)."""
        return self.conversation.abandon()

    def ended(self) -> None:
        """The child's turn is over: its `on_end` callbacks are told, each once."""
        callbacks, self.on_end = self.on_end, []
        for callback in callbacks:
            callback(self)

    # --- SessionLog: where its frames go ----------------------------------------------

    def append(self, frame: Frame) -> None:
        if self.on_frame is not None:
            self.on_frame(frame)

    # --- TurnEvents: what its turn shows, passed to `watch` ---------------------------

    def text(self, text: str) -> None:
        if self.watch is not None:
            self.watch.text(text)

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        if self.watch is not None:
            self.watch.tool_started(call_id, name, input)

    def tool_progress(self, call_id: str, tail: str) -> None:
        if self.watch is not None:
            self.watch.tool_progress(call_id, tail)

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        if self.watch is not None:
            self.watch.tool_finished(call_id, name, output, seconds)

    def waiting(self, what: str) -> None:
        if self.watch is not None:
            self.watch.waiting(what)

    def refused(self, call_id: str, name: str, why: str) -> None:
        if self.watch is not None:
            self.watch.refused(call_id, name, why)
