"""The built-in tools: `read`, `glob`, `grep` and `bash`.

Each implements the kernel's `Tool` protocol in-process (source `builtin`); the kernel
treats them exactly as it treats a bridged tool, except for the traits they declare. This
package owns what the tools do, their input schemas and their bounds; whether a call may
run is the gate's business, not theirs.

Importing the package imports no tool: `builtin_tools()` answers stand-ins that know each
tool's name and traits (what `/tools` and the gate read) and import the tool's module the
first time its spec is read or it is called. A tool's module builds its input schema when
imported, which a run that never talks to a model has no use for. The tool classes are
exported lazily too (`from bingo.tools import BashTool` imports `_bash.py` then).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ..kernel.interfaces import Tool as _Tool
from ..kernel.interfaces import ToolCall as _ToolCall
from ..kernel.registry import BUILTIN as _BUILTIN
from ..wire import ToolOutput as _ToolOutput
from ..wire import ToolSpec as _ToolSpec
from ..wire import ToolTraits as _ToolTraits

if _TYPE_CHECKING:
    from ._bash import BashTool
    from ._glob import GlobTool
    from ._grep import GrepTool
    from ._read import ReadTool

__all__ = ["BashTool", "GlobTool", "GrepTool", "ReadTool", "builtin_tools"]

_FINDING = _ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")
_CLASSES: dict[str, tuple[str, str, _ToolTraits]] = {
    # name: (module, class, traits); a test holds these traits to each class's own.
    "read": ("_read", "ReadTool", _FINDING),
    "glob": ("_glob", "GlobTool", _FINDING),
    "grep": ("_grep", "GrepTool", _FINDING),
    "bash": ("_bash", "BashTool", _ToolTraits(interrupt="cancel")),
}
_EXPORTS = {cls: module for module, cls, _ in _CLASSES.values()}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


class _Builtin:
    """A built-in tool, imported when first needed: its name and traits are known without it."""

    __slots__ = ("_impl", "name", "traits")

    def __init__(self, name: str) -> None:
        self.name = name
        self.traits = _CLASSES[name][2]
        self._impl: _Tool | None = None

    def _tool(self) -> _Tool:
        if self._impl is None:
            module, cls, _ = _CLASSES[self.name]
            made: _Tool = getattr(importlib.import_module(f"{__name__}.{module}"), cls)()
            self._impl = made
        return self._impl

    @property
    def spec(self) -> _ToolSpec:
        return self._tool().spec

    @property
    def source(self) -> str:
        return _BUILTIN

    async def call(self, call: _ToolCall) -> _ToolOutput:
        return await self._tool().call(call)


def builtin_tools() -> list[_Builtin]:
    """A fresh instance of every built-in tool: read, glob, grep, bash (each imported on its
    first use). Register them by `name`, which needs no import."""
    return [_Builtin(name) for name in _CLASSES]
