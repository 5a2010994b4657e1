"""The built-in tools: `read`, `glob`, `grep` and `bash`.

Each implements the kernel's `Tool` protocol in-process (source `builtin`); the kernel
treats them exactly as it treats a bridged tool, except for the traits they declare. This
package owns what the tools do, their input schemas and their bounds; whether a call may
run is the gate's business, not theirs.
"""

from __future__ import annotations

from ..kernel.interfaces import Tool as _Tool
from ._bash import BashTool
from ._glob import GlobTool
from ._grep import GrepTool
from ._read import ReadTool

__all__ = ["BashTool", "GlobTool", "GrepTool", "ReadTool", "builtin_tools"]


def builtin_tools() -> list[_Tool]:
    """A fresh instance of every built-in tool: read, glob, grep, bash."""
    return [ReadTool(), GlobTool(), GrepTool(), BashTool()]
