"""The person at the terminal before the terminal surface's loop runs: project trust is
asked before plugins start, and plugins start before the loop; so is the session
`--resume` with no id continues, chosen from a list (`choose_session`). Owns nothing else; the
question is escaped (`surfaces.escape`) as everything the terminal shows: it names the
project's directories and plugins before anything of them is trusted."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...kernel.errors import GateError, SessionError
from ...kernel.interfaces import PermissionAnswer
from ...wire import Json
from .._escape import escape

if TYPE_CHECKING:
    from ...store import SessionInfo

__all__ = ["StartAsker", "choose_session", "session_rows"]


class StartAsker:
    """The person at the terminal before the terminal surface runs (project trust is asked
    before plugins start, and they start before the surface's loop)."""

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask yet")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        """Put `question` as the surface puts every question (`_input.answer`: single keys,
        Esc is no)."""
        import asyncio

        from ._input import answer
        from ._surface import Question

        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        try:
            said = await answer(Question(text=question, choices=choices or None, answer=future))
        except EOFError:  # Ctrl-D: no answer is a no
            raise GateError("no answer") from None
        print(escape(f"? {question} → {said}"))
        return said


_SESSIONS_LISTED = 200
"""Sessions a list to choose from holds (the latest); older ones are resumed by id."""


def _ago(when: dt.datetime, now: dt.datetime) -> str:
    seconds = (now - when).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return when.strftime("%Y-%m-%d %H:%M")


def session_rows(sessions: Sequence[SessionInfo], now: dt.datetime | None = None) -> list[str]:
    """One row per session to choose from: when it was last used, its first prompt, its id.
    The first prompt is foreign text: the list escapes and cuts each row (`_answer.listed`)."""
    now = now or dt.datetime.now(dt.UTC)
    return [f"{_ago(s.updated, now):>16}  {s.title or '(no prompt)'}  · {s.id}" for s in sessions]


async def choose_session(sessions: Sequence[SessionInfo]) -> str | None:
    """The id of the session the person picks from `sessions` (the latest first; the first
    `_SESSIONS_LISTED` of them); None on Esc.

    Raises:
        KeyboardInterrupt: Ctrl-C.  SessionError: Ctrl-D (nothing chosen), or there is
            none to choose (the project has no session yet).
    """
    from ._answer import listed

    if not sessions:
        raise SessionError("there is no session to continue in this project", 'start one with bingo "PROMPT"')

    shown = list(sessions[:_SESSIONS_LISTED])
    more = len(sessions) - len(shown)
    head = [
        (
            "bold",
            "continue which session of this project?"
            + (f" (the latest {len(shown)}; bingo --resume ID continues an older one)" if more else "")
            + "\n",
        )
    ]
    try:
        at = await listed(head, session_rows(shown), esc="Esc starts a new session")
    except EOFError:
        raise SessionError("no session was chosen", "run bingo --resume again, or bingo -c for the latest") from None
    return None if at is None else shown[at].id
