"""Surfaces: where a person (or a pipe) meets bingo. `print` is plain text; the terminal
surface (`surfaces.terminal`) is imported only when it is used, so --print stays fast."""

from ._escape import escape, escape_view
from ._seam import Driver, Surface
from .print import PrintSurface

__all__ = ["Driver", "PrintSurface", "Surface", "escape", "escape_view"]
