"""`/plugins`: each plugin with its layer, path, version, state, what it contributes and its
sandbox grants.

Owns the command and its View; the facts come from `PluginHost.status()`.
"""

from __future__ import annotations

from ..kernel.interfaces import CommandContext
from ..kernel.registry import BUILTIN
from ..sandbox import Sandbox, plugin_sandbox_words
from ..wire import CommandOutcome, CommandSpec, Completion, StackView, TableView, TextView, ViewOutcome
from .host import PluginHost

__all__ = ["PluginsCommand"]


class PluginsCommand:
    """`/plugins`."""

    __slots__ = ("host", "sandbox", "trust")
    spec = CommandSpec(
        name="plugins", hint="list plugins, their state and what they contribute", instant=True, family="bingo"
    )
    source = BUILTIN

    def __init__(self, host: PluginHost, trust: str, sandbox: Sandbox | None = None) -> None:
        self.host = host
        self.trust = trust
        """One line on the project's trust (`trust.trust_summary`), shown above the table."""
        self.sandbox = sandbox
        """The run's sandbox: each plugin's grants are named (INTERFACE.md §9)."""

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        statuses = self.host.status()
        if not statuses:
            return ViewOutcome(
                view=TextView(
                    text=f"{self.trust}\nno plugins: install one in ~/.bingo/plugins/<name>/ or <project>/.bingo/plugins/<name>/"
                )
            )
        rows: list[list[str | int | float | None]] = []
        for s in statuses:
            state = s.state if not s.why else f"{s.state}: {s.why}"
            rows.append(
                [
                    s.name,
                    s.layer,
                    s.version,
                    state,
                    ", ".join(s.contributes),
                    plugin_sandbox_words(self.sandbox, s.name),
                    str(s.path),
                ]
            )
        table = TableView(
            title="plugins",
            columns=["plugin", "layer", "version", "state", "contributes", "sandbox", "path"],
            rows=rows,
        )
        return ViewOutcome(view=StackView(children=[TextView(text=self.trust), table]))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []
