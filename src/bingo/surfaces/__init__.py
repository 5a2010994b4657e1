"""Surfaces: where a person (or a pipe) meets bingo. `print` is plain text; the terminal
surface (`surfaces.terminal`) is imported only when it is used, so --print stays fast."""

from ._commands import EXIT_COMMANDS, ClearCommand, ExitCommand, SessionsCommand, UsageCommand
from ._escape import escape, escape_view, one_line
from ._seam import AsksForAgents, Driver, RunHandle, Surface
from .print import PrintSurface

__all__ = [
    "EXIT_COMMANDS",
    "AsksForAgents",
    "ClearCommand",
    "Driver",
    "ExitCommand",
    "PrintSurface",
    "RunHandle",
    "SessionsCommand",
    "Surface",
    "UsageCommand",
    "escape",
    "escape_view",
    "one_line",
]
