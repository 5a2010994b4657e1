"""`/sandbox`: the policy in force (INTERFACE.md §9).

Owns the command and its View: the mechanism in force (or what is missing, or that the
person turned it off), what every confined process gets, each grant with where it came
from, and each plugin's. The facts are the run's `Sandbox`.
"""

from __future__ import annotations

from ..kernel.interfaces import CommandContext
from ..kernel.registry import BUILTIN
from ..wire import CommandOutcome, CommandSpec, Completion, StackView, TableView, TextView, View, ViewOutcome
from ._build import PROTECTED, SECRET_PATHS
from ._runtime import Sandbox

__all__ = ["SandboxCommand", "plugin_sandbox_words"]


def plugin_sandbox_words(sandbox: Sandbox | None, name: str) -> str:
    """What `/plugins` says of plugin `name`'s sandbox: confined or not (and why), then its
    own grants with where each came from."""
    if sandbox is None:
        return "unconfined"
    off = sandbox.plugin_off(name)
    if not sandbox.on:
        state = "unconfined (sandbox off)"
    elif sandbox.missing is not None:
        state = "unconfined (the sandbox is not in force)"
    elif off is not None:
        state = f'unconfined (mode "off" in {off.where})'
    else:
        state = "confined"
    extra = [
        f"{grant} ({where})"
        for grant, where in sandbox.plugin_grants(name)
        if where != "every plugin" and not grant.startswith("unconfined")
    ]
    return state + ("; granted " + "; ".join(extra) if extra else "")


class SandboxCommand:
    """`/sandbox`."""

    __slots__ = ("sandbox",)
    spec = CommandSpec(
        name="sandbox",
        hint="show the sandbox in force: its mechanism, each grant and where it came from",
        instant=True,
        family="bingo",
    )
    source = BUILTIN

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        box = self.sandbox
        lines = [f"sandbox: {box.state()}"]
        if box.in_force:
            lines += [
                "every confined process (bash, each plugin and stdio MCP server):",
                "  reads everything but the secret paths ("
                + ", ".join("~/" + p for p in SECRET_PATHS)
                + ", the browsers' profiles, ~/.bingo, sandbox.deny)",
                "  writes the project (not "
                + ", ".join(PROTECTED)
                + "), its own TMPDIR, /dev/null and the terminal; a plugin its dataDir too",
                "  reaches the network only by HTTP(S) through bingo's proxy, to granted hosts (others are asked about, or refused)",
                "  has no secrets in its environment (API keys, tokens, SSH_AUTH_SOCK, AWS_*) unless sandbox.env.keep names them",
            ]
        children: list[View] = [TextView(text="\n".join(lines))]
        rows: list[list[str | int | float | None]] = [[what, grant, where] for what, grant, where in box.rows()]
        children.append(TableView(title="grants", columns=["what", "grant", "from"], rows=rows))
        return ViewOutcome(view=StackView(children=children))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []
