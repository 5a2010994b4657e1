"""The built-in slash commands that read the kernel's own state: `/help`, `/tools`, `/compact`.

Each implements the same `Command` interface a plugin's command does. Commands that belong
to another layer live there (`/plugins` in the bridge; `/sessions`, `/exit` and `/quit`, every
surface's, in `surfaces._commands`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec

from ..wire import (
    CommandOutcome,
    CommandSpec,
    Completion,
    StackView,
    TableView,
    TextOutcome,
    TextView,
    ToolTraits,
    View,
    ViewOutcome,
)
from .gate import Gate, Verdict
from .interfaces import CommandContext
from .registry import BUILTIN, Registry

__all__ = ["CompactCommand", "HelpCommand", "ToolsCommand"]


def _traits_text(traits: ToolTraits) -> str:
    words = [
        "trusted" if traits.trusted else "untrusted",
        "read-only" if traits.read_only else "writes",
        "parallel" if traits.concurrency_safe else "serial",
        f"interrupt {traits.interrupt}",
    ]
    return ", ".join(words)


class HelpCommand(msgspec.Struct):
    """`/help`: every command with its hint, grouped by family."""

    registry: Registry
    spec: CommandSpec = CommandSpec(name="help", hint="list every command", instant=True, family="bingo")
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        families: dict[str, list[list[str | int | float | None]]] = {}
        for name in sorted(self.registry.commands):
            spec = self.registry.commands[name].spec
            usage = "/" + name + (f" {spec.args.hint}" if spec.args.kind == "free" and spec.args.hint else "")
            families.setdefault(spec.family, []).append([usage, spec.hint])
        order = sorted(families, key=lambda f: (f != "bingo", f))
        tables: list[View] = [
            TableView(title=family, columns=["command", "what it does"], rows=families[family])
            for family in order
        ]
        return ViewOutcome(view=StackView(children=tables))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class ToolsCommand(msgspec.Struct):
    """`/tools`: every tool, its traits, and what the gate would do with it."""

    registry: Registry
    gate: Gate
    spec: CommandSpec = CommandSpec(name="tools", hint="list every tool and what the gate does with it", instant=True, family="bingo")
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        rows: list[list[str | int | float | None]] = []
        for name in sorted(self.registry.tools):
            tool = self.registry.tools[name]
            decision = self.gate.decide(name, tool.traits)
            gate = {Verdict.ALLOW: "runs", Verdict.ASK: "asks", Verdict.DENY: "denied"}[decision.verdict]
            if decision.rule:
                gate += f" ({decision.rule})"
            origin = tool.source if tool.source == BUILTIN else f"plugin {tool.source}"
            rows.append([name, origin, _traits_text(tool.traits), gate])
        if not rows:
            return ViewOutcome(view=TextView(text="no tools"))
        return ViewOutcome(view=TableView(title="tools", columns=["tool", "from", "traits", "gate"], rows=rows))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class CompactCommand(msgspec.Struct):
    """`/compact`: compact the history now."""

    compact: Callable[[], Awaitable[bool]]
    spec: CommandSpec = CommandSpec(name="compact", hint="compact the conversation history now", family="bingo")
    source: str = BUILTIN

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        done = await self.compact()
        return TextOutcome(text="history compacted" if done else "history kept as it was")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


