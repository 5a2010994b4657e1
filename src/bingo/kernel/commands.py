"""The built-in slash commands that read the kernel's own state: `/help`, `/tools`,
`/compact`, `/context` and `/model`.

Each implements the same `Command` interface a plugin's command does, over what it is given
(a run binds them: `run._commands.TABLE`, the one table of bingo's commands). Commands that
belong to another layer live there (`/plugins` in the bridge; `/sessions`, `/usage`,
`/clear`, `/exit` and `/quit` in `surfaces._commands`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..wire import (
    CommandArgs,
    CommandOutcome,
    CommandSpec,
    Completion,
    ErrorOutcome,
    StackView,
    TableView,
    TextOutcome,
    TextView,
    ToolTraits,
    View,
    ViewOutcome,
)
from .compaction import CHARS_PER_TOKEN, estimate_tokens
from .gate import Gate, Verdict
from .interfaces import CommandContext
from .registry import BUILTIN, Registry
from .turn import Compacted, Conversation

__all__ = ["CompactCommand", "ContextCommand", "HelpCommand", "ModelCommand", "ToolsCommand"]


def _traits_text(traits: ToolTraits) -> str:
    words = [
        "trusted" if traits.trusted else "untrusted",
        "read-only" if traits.read_only else "writes",
        "parallel" if traits.concurrency_safe else "serial",
        f"interrupt {traits.interrupt}",
    ]
    return ", ".join(words)


class HelpCommand:
    """`/help`: every command the run offers with its hint, grouped by family; then, in one
    line, bingo's commands offered elsewhere and not here (`elsewhere`)."""

    __slots__ = ("_elsewhere", "_listed")
    spec = CommandSpec(name="help", hint="list every command", instant=True, family="bingo")
    source = BUILTIN

    def __init__(self, listed: Callable[[], list[CommandSpec]], elsewhere: str | None = None) -> None:
        self._listed = listed
        """Every command the run offers (the dispatcher's), by name."""
        self._elsewhere = elsewhere

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        families: dict[str, list[list[str | int | float | None]]] = {}
        for spec in self._listed():
            usage = "/" + spec.name + (f" {spec.args.hint}" if spec.args.kind == "free" and spec.args.hint else "")
            families.setdefault(spec.family, []).append([usage, spec.hint])
        order = sorted(families, key=lambda f: (f != "bingo", f))
        tables: list[View] = [
            TableView(title=family, columns=["command", "what it does"], rows=families[family]) for family in order
        ]
        if self._elsewhere:
            tables.append(TextView(text=self._elsewhere))
        return ViewOutcome(view=StackView(children=tables))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class ToolsCommand:
    """`/tools`: every tool, its traits, and what the gate would do with it."""

    __slots__ = ("gate", "registry")
    spec = CommandSpec(
        name="tools", hint="list every tool and what the gate does with it", instant=True, family="bingo"
    )
    source = BUILTIN

    def __init__(self, registry: Registry, gate: Gate) -> None:
        self.registry = registry
        self.gate = gate

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        rows: list[list[str | int | float | None]] = []
        for name in sorted(self.registry.tools):
            tool = self.registry.tools[name]
            decision = self.gate.decide(name, tool.traits)
            gate = {Verdict.ALLOW: "runs", Verdict.ASK: "asks", Verdict.DENY: "denied"}[decision.verdict]
            if decision.rule:
                gate += f" ({decision.rule})"
            elif decision.verdict is Verdict.ALLOW and name == "bash" and self.gate.sandboxed:
                gate += " (in the sandbox)"
            narrowed = self.gate.narrowed(name)
            if narrowed:
                words = {Verdict.ALLOW: "allowed", Verdict.ASK: "asked", Verdict.DENY: "denied"}
                gate += "; some calls " + ", ".join(f"{words[v]} by {rule}" for v, rule in narrowed)
            origin = tool.source if tool.source == BUILTIN else f"plugin {tool.source}"
            rows.append([name, origin, _traits_text(tool.traits), gate])
        if not rows:
            return ViewOutcome(view=TextView(text="no tools"))
        return ViewOutcome(view=TableView(title="tools", columns=["tool", "from", "traits", "gate"], rows=rows))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class CompactCommand:
    """`/compact`: compact the history now, by the strategy compaction uses when it is needed."""

    __slots__ = ("compact",)
    spec = CommandSpec(name="compact", hint="compact the conversation history now", family="bingo")
    source = BUILTIN

    def __init__(self, compact: Callable[[], Awaitable[Compacted]]) -> None:
        self.compact = compact

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        done = await self.compact()
        match done.status:
            case "compacted":
                return TextOutcome(
                    text=f"history compacted by {done.by}: about {done.before} tokens to about {done.after}"
                )
            case "nothing" if not done.by:
                return TextOutcome(text="nothing to compact: this session has no history yet")
            case "nothing":
                return TextOutcome(text="nothing to compact: the history is only the latest exchange")
            case "interrupted":
                return ErrorOutcome(message="compaction was interrupted; the history is kept as it was")
            case "failed":
                return ErrorOutcome(message="compaction failed (the notices say why); the history is kept as it was")

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class ContextCommand:
    """`/context`: what the model is told besides the conversation: the system prompt (with
    the AGENTS.md files it holds), the window and budget, and the latest turn's context pieces."""

    __slots__ = ("choose_model", "conversation")
    spec = CommandSpec(
        name="context", hint="show the system prompt and what the model's context holds", instant=True, family="bingo"
    )
    source = BUILTIN

    def __init__(self, conversation: Conversation, choose_model: Callable[[], None]) -> None:
        self.conversation = conversation
        self.choose_model = choose_model
        """Chooses the run's model if no turn has yet (the window is the model's)."""

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        self.choose_model()
        conversation = self.conversation
        system = conversation.system or ""
        window = conversation.window()
        model = (
            f"{conversation.provider.spec.name} {conversation.model}"
            if conversation.provider is not None
            else "no model chosen yet"
        )
        sizes = TableView(
            title="context",
            columns=["what", "tokens (estimated)"],
            rows=[
                [f"window ({model})", window],
                ["compaction past", conversation.budget()],
                ["one tool result at most", conversation.result_budget()],
                ["system prompt", len(system) // CHARS_PER_TOKEN],
                ["history", estimate_tokens(conversation.messages)],
            ],
        )
        children: list[View] = [TextView(text="system prompt:"), TextView(text=system or "(none)"), sizes]
        pieces = conversation.pieces
        if pieces:
            rows: list[list[str | int | float | None]] = [[p.title or "", p.priority, len(p.text)] for p in pieces]
            children.append(
                TableView(
                    title="context pieces of the latest turn", columns=["title", "priority", "characters"], rows=rows
                )
            )
        else:
            children.append(TextView(text="the latest turn had no context pieces"))
        return ViewOutcome(view=StackView(children=children))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class ModelCommand:
    """`/model [NAME]`: the model this session's requests name from now on (the provider
    stays); with no NAME, the model in use and the ones its provider lists. The choice is the
    conversation's, so every later request of the run uses it (ADR-0035)."""

    __slots__ = ("choose_model", "conversation")
    spec = CommandSpec(
        name="model",
        hint="show the model, or switch this session to another",
        args=CommandArgs(kind="free", hint="NAME"),
        instant=True,
        family="bingo",
    )
    source = BUILTIN

    def __init__(self, conversation: Conversation, choose_model: Callable[[], None]) -> None:
        self.conversation = conversation
        self.choose_model = choose_model
        """Chooses the run's model if no turn has yet."""

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        self.choose_model()
        conversation = self.conversation
        provider = conversation.provider
        if provider is None:
            return ErrorOutcome(
                message="no model provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or pass --provider"
            )
        known = list(provider.spec.models or [])
        name = args.strip()
        if not name:
            listed = (
                f"{provider.spec.name} lists: {', '.join(known)}" if known else f"{provider.spec.name} lists no models"
            )
            return TextOutcome(
                text=f"the model is {conversation.model} (via {provider.spec.name}); {listed}; /model NAME switches to another"
            )
        if any(char.isspace() for char in name) or len(name) > _MODEL_NAME_MAX:
            return ErrorOutcome(message=f"{name[:_MODEL_NAME_MAX]!r} is not a model name: /model NAME takes one word")
        conversation.model = name
        unknown = f" (not one {provider.spec.name} lists; it is sent as it is)" if known and name not in known else ""
        return TextOutcome(
            text=f'the model is now {name} (via {provider.spec.name}) until bingo exits{unknown}; "model" in settings, or --model, chooses it for every run'
        )

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        provider = self.conversation.provider
        return (
            [Completion(value=name) for name in (provider.spec.models or []) if name.startswith(partial)]
            if provider is not None
            else []
        )


_MODEL_NAME_MAX = 200
"""Characters of a model name `/model` takes (a provider's names are far shorter)."""
