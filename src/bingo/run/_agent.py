"""The built-in `agent` tool: hand a task to a child conversation (INTERFACE.md §15).

Owns the tool's spec and input (`{"description", "prompt", "agent"?}`), its traits (trusted
and read-only, so the gate runs it without a rule unless one denies it: every call its child
makes passes the gate itself; safe to run beside the other calls of one message, which is
how several children run at once; `block` on interrupt, so the parent's interrupt reaches the
child and the parent waits for the child's turn to end), the bound on children running at
once (`agents.maxConcurrent`), and what the parent's model is told: the child's final text,
or why there is none, and the worktree its changes are in. The child itself is the factory's
(`RunFactory.child`) and `_child.py`'s.
"""

from __future__ import annotations

import asyncio
import difflib
from typing import TYPE_CHECKING, Annotated

import msgspec

from ..kernel.errors import BingoError
from ..kernel.interfaces import ToolCall
from ..kernel.registry import BUILTIN
from ..wire import Json, TextPart, ToolOutput, ToolSpec, ToolTraits
from ._child import GENERAL
from ._run import current_run

if TYPE_CHECKING:
    from ._child import ChildRun
    from ._factory import RunFactory

__all__ = ["AGENT_TRAITS", "AgentInput", "AgentTool"]

AGENT_TRAITS = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="block")
_WORDS = (
    "Hand a self-contained task to a child conversation (a subagent). It starts with a fresh "
    "history holding only your prompt, has the tools its agent names (all of yours when you "
    "name no agent) and answers with its final text, which is all you get back: say in the "
    "prompt everything it needs and what to report. Several agent calls in one message run "
    "at once. The system prompt lists the agents there are."
)
_LISTED = 50
"""Agents named in an unknown-agent error at most; the rest counted."""


class AgentInput(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The `agent` tool's input (as `tools._common.Input`: unknown fields ignored)."""

    description: Annotated[str, msgspec.Meta(description="The task in a few words (3 to 5).")]
    prompt: Annotated[str, msgspec.Meta(description="The whole task for the child: what to do, and what to report.")]
    agent: Annotated[
        str | None, msgspec.Meta(description="The agent to give it to, by a name the system prompt lists.")
    ] = None


_SCHEMA: dict[str, Json] = {
    "description": "The `agent` tool's input (as `tools._common.Input`: unknown fields ignored).",
    "type": "object",
    "properties": {
        "description": {"description": "The task in a few words (3 to 5).", "type": "string"},
        "prompt": {"description": "The whole task for the child: what to do, and what to report.", "type": "string"},
        "agent": {
            "description": "The agent to give it to, by a name the system prompt lists.",
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "default": None,
        },
    },
    "required": ["description", "prompt"],
}
"""AgentInput's JSON Schema, as data: every run's first request carries it, and building it
(`tools._common.schema_of`, the process's first `msgspec.json.schema`) cost more than the
rest of the tools' specs (ADR-0043). tests/unit/tools/test_specs.py holds it equal to
AgentInput's."""


class AgentTool:
    """The `agent` tool of a process (a kernel `Tool`), over its run factory (set once the
    factory is made: the tool is registered before, with bingo's other tools)."""

    __slots__ = ("_slots", "_spec", "factory")

    def __init__(self, factory: RunFactory | None = None) -> None:
        self.factory = factory
        self._spec: ToolSpec | None = None
        self._slots: asyncio.Semaphore | None = None

    @property
    def spec(self) -> ToolSpec:
        if self._spec is None:
            self._spec = ToolSpec(name="agent", description=_WORDS, input_schema=_SCHEMA)
        return self._spec

    @property
    def traits(self) -> ToolTraits:
        return AGENT_TRAITS

    @property
    def source(self) -> str:
        return BUILTIN

    async def call(self, call: ToolCall) -> ToolOutput:
        from ..tools._common import error_output, parse_input

        args = parse_input(AgentInput, call.input, "agent")
        if isinstance(args, ToolOutput):
            return args
        description, prompt, named = args.description, args.prompt, args.agent
        factory, parent = self.factory, current_run()
        if factory is None or parent is None:
            return error_output("agent: there is no conversation here to open a child of")
        agents = factory.agents()
        agent = None
        if named:
            agent = agents.get(named)
            if agent is None:
                return error_output(_unknown(named, sorted(agents)))
        if not prompt.strip():
            return error_output("agent: the prompt is empty: say what the child is to do and report")
        if self._slots is None:
            self._slots = asyncio.Semaphore(factory.settings.agents_max_concurrent)
        async with self._slots:
            if call.interrupted.is_set():
                return error_output("agent was not run: the turn was interrupted")
            try:
                child = await factory.child(
                    parent, agent=agent, description=description, call_id=call.call_id, cwd=call.cwd
                )
            except BingoError as exc:
                return error_output(f"agent {agent.name if agent else GENERAL}: {exc.line()}")

            def stop() -> None:
                child.interrupt()  # the parent's interrupt reaches the child

            def abandon() -> None:
                child.abandon()  # a second one: its calls are not waited for

            unhook = call.interrupted.on_set(stop)
            unabandon = call.abandoned.on_set(abandon)
            try:
                await child.run(prompt)
            finally:
                unhook()
                unabandon()
                said = await factory.let_go(child)
        return _told(child, said)


def _unknown(named: str, known: list[str]) -> str:
    near = difflib.get_close_matches(named, known, n=1)
    hint = f" Did you mean {near[0]}?" if near else ""
    listed = ", ".join(known[:_LISTED]) + (f" and {len(known) - _LISTED} more" if len(known) > _LISTED else "")
    return (
        f"agent: there is no agent named {named[:80]!r}.{hint} The agents: {listed or 'none'}; "
        "or leave `agent` out for a general helper with your tools."
    )


def _told(child: ChildRun, said: str) -> ToolOutput:
    """What the parent's model is told of `child`: its final text (and where its changes
    are), or why it has none."""
    result = child.result
    answer = child.answer()
    if result is None or result.status != "done":
        why = result.reason if result is not None else "it did not run"
        text = f"agent {child.name} did not finish: {why}"
        if answer:
            text += f"\n\nWhat it said last:\n{answer}"
        if said:
            text += f"\n\n{said}"
        return ToolOutput(parts=[TextPart(text=text)], is_error=True)
    text = answer or f"(agent {child.name} ended without a final text)"
    if said:
        text += f"\n\n{said}"
    return ToolOutput(parts=[TextPart(text=text)])
