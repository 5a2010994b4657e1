"""The person at the terminal before the terminal surface's loop runs: project trust is
asked before plugins start, and plugins start before the loop. Owns nothing else; the
question is escaped (`surfaces.escape`) as everything the terminal shows: it names the
project's directories and plugins before anything of them is trusted."""

from __future__ import annotations

from ...kernel.errors import GateError
from ...kernel.interfaces import PermissionAnswer
from ...wire import Json
from .._escape import escape

__all__ = ["StartAsker"]


class StartAsker:
    """The person at the terminal before the terminal surface runs (project trust is asked
    before plugins start, and they start before the surface's loop)."""

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask yet")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        from prompt_toolkit import PromptSession

        hint = f" [{'/'.join(choices)}]" if choices else ""
        try:
            return await PromptSession[str]().prompt_async(escape(f"{question}{hint}") + " ")
        except EOFError:  # Ctrl-D: no answer is a no
            raise GateError("no answer") from None
