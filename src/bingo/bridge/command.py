"""The bridged command: the kernel's `Command`, whose `run` is `command/run` and whose
`complete` is `command/complete`.

Owns the rule that completion is never an error: a failure, a late answer or a dead plugin
completes to nothing, and a plugin that answers -32601 offers no completion and is not
asked again this run. It does not parse arguments: `args` crosses as the raw text.
"""

from __future__ import annotations

from ..kernel.errors import MethodNotFound, PluginError
from ..kernel.interfaces import CommandContext
from ..wire import (
    CommandCompleteParams,
    CommandCompleteResult,
    CommandOutcome,
    CommandRunParams,
    CommandRunResult,
    CommandSpec,
    Completion,
    ErrorOutcome,
)
from ._link import Link, Unavailable

__all__ = ["BridgedCommand"]


class BridgedCommand:
    """A plugin's slash command, as the kernel sees it."""

    def __init__(self, link: Link, spec: CommandSpec) -> None:
        self._link = link
        self._spec = spec
        self._source = link.name
        self._completes = spec.args.kind == "free"

    @property
    def spec(self) -> CommandSpec:
        return self._spec

    @property
    def source(self) -> str:
        return self._source

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        """Run the command. A plugin that is not running answers an error outcome.

        Raises:
            PluginError: the call failed, was late, or the plugin died during it.
        """
        try:
            conn = await self._link.connection()
        except Unavailable as exc:
            return ErrorOutcome(message=exc.line())
        params = CommandRunParams(name=self._spec.name, args=args, cwd=ctx.cwd, session=ctx.session)
        result = await conn.call("command/run", params, CommandRunResult)
        return result.outcome

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        """Ways to finish `partial`; none whenever the plugin cannot say."""
        if not self._completes:
            return []
        try:
            conn = await self._link.connection()
            result = await conn.call(
                "command/complete",
                CommandCompleteParams(name=self._spec.name, partial=partial, cwd=cwd),
                CommandCompleteResult,
            )
        except PluginError as exc:
            if isinstance(exc, MethodNotFound):
                self._completes = False
            return []
        return result.completions
