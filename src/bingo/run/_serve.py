"""Each surface served its runs by the factory: a channel's rooms, an editor's sessions, a
script's one run, and the terminal's or a print's one run. The app chooses the surface and
makes the factory; what a surface is then given, and when its run is closed, is here, one
function a surface.

It does not choose the surface or compose the process (`app.py`), and it draws nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..kernel.dispatch import ChooseModel
from ..surfaces import Surface
from ._editor import editor_mcp
from ._factory import RunFactory, opening
from ._run import Run
from ._session import RunSession

if TYPE_CHECKING:
    from ..surfaces.acp import AcpLog
    from ..surfaces.script import ScriptSurface

__all__ = ["serve_editor", "serve_rooms", "serve_run", "serve_script"]


async def serve_rooms(factory: RunFactory, *, cwd: Path, environ: dict[str, str]) -> int:
    """Be a bot in the channel's rooms (`--channel matrix`): each room a run in `cwd`, all
    with one system prompt, its problems said at start."""
    from ..surfaces.channel import serve_matrix

    system = factory.system(cwd)

    def make_room(room: Surface, session_id: str | None) -> Run:
        return factory.open(room, "room", cwd=cwd, resume=session_id, system=system)

    return await serve_matrix(factory.settings.matrix, environ=environ, data_dir=factory.data_dir, make_room=make_room)


async def serve_editor(factory: RunFactory, surface: AcpLog, *, plugins: set[str]) -> int:
    """Be an editor's agent (`--acp`): each session a run in the directory the editor names,
    a stored one continued (its SessionError tells the editor); the MCP servers the editor
    passes are hosted for the process, beside its `plugins`, and gone on return."""
    from .. import __version__
    from ..surfaces.acp import serve_acp

    def make_session(editor: Surface, where: str, session_id: str, stored: bool) -> Run:
        if stored:  # session/load
            return factory.open(editor, "editor", cwd=Path(where), resume=session_id)
        return factory.open(editor, "editor", cwd=Path(where), session=factory.session(planned=session_id))

    async with contextlib.AsyncExitStack() as editor_plugins:
        host_mcp = editor_mcp(
            editor_plugins,
            registry=factory.registry,
            notices=factory.notices,
            settings=factory.settings,
            data_dir=factory.data_dir,
            plugins=plugins,
            sandbox=factory.sandbox,
        )
        return await serve_acp(log=surface, make=make_session, version=__version__, host_mcp=host_mcp)


async def serve_script(
    factory: RunFactory,
    surface: ScriptSurface,
    prompt: str,
    *,
    session: RunSession,
    recording: Callable[[], None],
    max_turns: int | None,
    schema: dict[str, Any] | None,
    cwd: Path,
    plugins: list[str],
) -> int:
    """A script's one run (`--output-format json|stream-json`) on the process's `session`;
    `recording` stops the session's recording of the start's notices once the run keeps its
    own."""
    from ..surfaces.script import run_script

    def make(choose: ChooseModel) -> Run:
        run = factory.open(surface, "print", cwd=cwd, session=session, choose_model=choose)
        recording()
        return run

    return await run_script(
        make,
        surface,
        prompt,
        choose_model=factory.choose_model,
        max_turns=max_turns,
        schema=schema,
        cwd=str(cwd),
        plugins=plugins,
    )


async def serve_run(
    factory: RunFactory,
    surface: Surface,
    prompt: str | None,
    *,
    interactive: bool,
    session: RunSession,
    recording: Callable[[], None],
    max_turns: int | None,
    cwd: Path,
    user_home: Path,
) -> int:
    """The one run of a print (`-p`, its `prompt` submitted, Ctrl-C interrupting) or of the
    terminal (the person's conversation, `prompt` its first message), on the process's
    `session`, at most `max_turns` model requests; closed on return."""
    limit = None
    if max_turns is not None:
        from ..surfaces.script import TurnLimit

        limit = TurnLimit(factory.choose_model, max_turns)
    run = factory.open(surface, "terminal" if interactive else "print", cwd=cwd, session=session, choose_model=limit)
    recording()  # the run keeps its own notices now
    try:
        if prompt is not None and not interactive:
            return await run.submit_with_interrupts(prompt)
        from ..surfaces.terminal import TerminalSurface, interact

        assert isinstance(surface, TerminalSurface)  # the app chooses it for an interactive run
        surface.dry_run = run.preview
        factory.sandbox.hosts.ask, factory.sandbox.hosts.remember = surface.ask, run.remember_host
        factory.plugins.sign_ins.listen(surface.ask)
        return await interact(
            run,
            surface,
            first=prompt,
            opening=opening(run, factory.choose_model, cwd=cwd, home=user_home),
            used=run.used,
            session=run.session_id,
            unsent=run.take_unsent,
            model=run.model,
        )
    finally:
        run.close()
