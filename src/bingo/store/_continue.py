"""Which session a run continues, and the rules that keep it one run's and one project's
(ADR-0029).

Owns the choice for `-c` and `--resume` (a terminal or `-p`), and the check an editor's
`session/load` and a channel room make: the session is claimed for the run (one writer per
session: a second run is refused in words), and a session of another project is continued
only when named by its whole id. Named by a prefix, the person is asked on a terminal (the
question names both projects), and elsewhere it is refused with a line saying to give the
whole id. It does not open a run's session for writing (a run's `RunSession` does: `bingo.run`) nor
rebuild its history.
"""

from __future__ import annotations

from collections.abc import Callable

from ..kernel.errors import GateError, SessionError
from ..kernel.interfaces import AskFn
from .session import SessionStore

__all__ = ["continue_session", "load_session"]


async def continue_session(
    store: SessionStore,
    project: str,
    *,
    latest: bool,
    resume: str | None,
    ask: AskFn | None,
    say: Callable[[str], None],
) -> str | None:
    """The session a run continues (`latest`: `-c`; `resume`: `--resume ID`), claimed for it;
    None when it starts a new one. `ask` is the person at a terminal (None: nobody, `-p`);
    `say` tells them a session of another project continues here.

    Raises:
        SessionError: nothing to continue, another run writes it, or it is another
            project's, named by a prefix, and the person did not say yes (or could not).
    """
    if latest:
        found = store.latest(project)
        if found is None:
            raise SessionError("there is no session to continue in this project", 'start one with bingo "PROMPT"')
    elif resume:
        found = store.find(resume, project)
        owner = store.info(found).project
        if owner != project:
            if found != resume:
                await _ask_to_cross(found, owner, project, ask)
            say(f"session {found} belongs to another project, {owner}; it continues here, in {project}")
    else:
        return None
    store.claim(found)
    return found


async def _ask_to_cross(session: str, owner: str, project: str, ask: AskFn | None) -> None:
    """Raise SessionError unless the person says yes to continuing another project's session."""
    refused = SessionError(
        f"session {session} belongs to another project, {owner}",
        f"continue it there, or give its whole id to continue it here: bingo --resume {session}",
    )
    if ask is None:
        raise refused
    try:
        answer = await ask(
            f"session {session} belongs to another project, {owner}: continue it here, in {project}?", ["yes", "no"]
        )
    except GateError:
        raise refused from None
    if answer.strip().lower() not in ("yes", "y"):
        raise refused


def load_session(store: SessionStore, session: str, project: str, say: Callable[[str], None] | None) -> str:
    """`session`, named by its whole id (an editor's `session/load`, a channel room's),
    claimed for the caller. Another project's is continued when `say` is given (an editor
    named it: `say` tells it so) and refused when not (a room never crosses: nobody named
    its session).

    Raises:
        SessionError: no session has that whole id, it is another project's and `say` is
            None, or another run writes it.
    """
    found = store.find(session)
    if found != session:
        raise SessionError(f"no session {session}", "a session is loaded by its whole id, as bingo gave it")
    owner = store.info(found).project
    if owner != project:
        if say is None:
            raise SessionError(f"session {session} belongs to another project, {owner}", "it is continued there")
        say(f"session {session} belongs to another project, {owner}; it continues here, in {project}")
    store.claim(found)
    return found
