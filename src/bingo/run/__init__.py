"""Runs: one conversation behind one surface (`Run`), opened by the one factory every surface
asks (`RunFactory`), with bingo's own commands in one table (`TABLE`). Above the surfaces
and below the app, which composes the process and asks the factory for runs."""

from ._agent import AgentTool
from ._brought import bring_in
from ._child import ChildRun
from ._chooser import ModelChooser
from ._commands import EVERYWHERE, PLACES, TABLE, Entry, commands_for, elsewhere
from ._editor import editor_mcp
from ._factory import RunFactory, opening, start_sandbox
from ._run import Place, Run, current_run
from ._serve import serve_editor, serve_rooms, serve_run, serve_script
from ._session import NOTICE_FRAMES, RunSession, compacted, take_up

__all__ = [
    "EVERYWHERE",
    "NOTICE_FRAMES",
    "PLACES",
    "TABLE",
    "AgentTool",
    "ChildRun",
    "Entry",
    "ModelChooser",
    "Place",
    "Run",
    "RunFactory",
    "RunSession",
    "bring_in",
    "commands_for",
    "compacted",
    "current_run",
    "editor_mcp",
    "elsewhere",
    "opening",
    "serve_editor",
    "serve_rooms",
    "serve_run",
    "serve_script",
    "start_sandbox",
    "take_up",
]
