"""The built-in tools: `read`, `glob`, `grep`, `bash`, `write` and `edit`; and `skill`,
made over the skills a run has (`SkillTool`, registered by the app when there are any).

Each implements the kernel's `Tool` protocol in-process (source `builtin`); the kernel
treats them exactly as it treats a bridged tool, except for the traits they declare. This
package owns what the tools do, their input schemas and their bounds; whether a call may
run is the gate's business, not theirs.

Importing the package imports no tool: `builtin_tools()` answers stand-ins that know each
tool's name and traits (what `/tools` and the gate read) and its spec, which is data
(`_specs.py`: a run's first request reads every spec, and needs no tool's module for it),
and import the tool's module the first time it is called. The tool classes are
exported lazily too (`from bingo.tools import BashTool` imports `_bash.py` then).

`preview` asks `write` or `edit` what a call would do without doing it, for the question
that asks the person about it (ADR-0034).

The tools of one `builtin_tools()` share a `Seen` ledger: what `read`, `write` and `edit` last
saw of each file in each session, so `write` and `edit` refuse to change a file the model has
not read, or that changed since (ADR-0019). It is made when the first of them is, and no
plugin's tool ever sees it.

`read`, `write` and `edit` reach a file through `FILES` (`_files.py`): the local disk, or the
files of the editor that drives the session, when it offers its own.
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
    from ..sandbox import Sandbox
    from ._bash import BashTool
    from ._common import Seen
    from ._edit import EditTool
    from ._files import FILES, Declined, Files
    from ._glob import GlobTool
    from ._grep import GrepTool
    from ._read import ReadTool
    from ._skill import SkillTool
    from ._write import WriteTool

__all__ = [
    "FILES",
    "BashTool",
    "Declined",
    "EditTool",
    "Files",
    "GlobTool",
    "GrepTool",
    "ReadTool",
    "SkillTool",
    "WriteTool",
    "builtin_tools",
    "preview",
]

_FINDING = _ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")
_CHANGING = _ToolTraits(trusted=True)
_CLASSES: dict[str, tuple[str, str, _ToolTraits]] = {
    # name: (module, class, traits); a test holds these traits to each class's own.
    "read": ("_read", "ReadTool", _FINDING),
    "glob": ("_glob", "GlobTool", _FINDING),
    "grep": ("_grep", "GrepTool", _FINDING),
    "bash": ("_bash", "BashTool", _ToolTraits(interrupt="cancel")),
    "write": ("_write", "WriteTool", _CHANGING),
    "edit": ("_edit", "EditTool", _CHANGING),
}
_SEEING = frozenset({"read", "write", "edit"})
"""The tools made with the shared ledger."""
_CHANGERS = frozenset({"write", "edit"})
"""The tools made knowing the project, which a link must not lead them out of (ADR-0026)."""
_EXPORTS = {cls: module for module, cls, _ in _CLASSES.values()} | {
    "FILES": "_files",
    "Declined": "_files",
    "Files": "_files",
    "SkillTool": "_skill",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


class _Shared:
    """What the built-in tools of one `builtin_tools()` share, made on first use."""

    __slots__ = ("_seen", "project", "sandbox")

    def __init__(self, project: str | None, sandbox: Sandbox | None = None) -> None:
        self._seen: Seen | None = None
        self.project = project
        self.sandbox = sandbox
        """The run's sandbox, which `bash` runs its commands in (None: never confined)."""

    def seen(self) -> Seen:
        if self._seen is None:
            from ._common import Seen

            self._seen = Seen()
        return self._seen


class _Builtin:
    """A built-in tool, imported when first needed: its name and traits are known without it."""

    __slots__ = ("_impl", "_shared", "name", "traits")

    def __init__(self, name: str, shared: _Shared) -> None:
        self.name = name
        self.traits = _CLASSES[name][2]
        self._shared = shared
        self._impl: _Tool | None = None

    def _tool(self) -> _Tool:
        if self._impl is None:
            module, cls, _ = _CLASSES[self.name]
            kind = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
            if self.name in _CHANGERS:
                made: _Tool = kind(self._shared.seen(), project=self._shared.project)
            elif self.name == "bash":
                made = kind(sandbox=self._shared.sandbox)
            else:
                made = kind(self._shared.seen()) if self.name in _SEEING else kind()
            self._impl = made
        return self._impl

    @property
    def spec(self) -> _ToolSpec:
        from ._specs import SPECS  # data: no tool's module is imported for its spec (ADR-0043)

        return SPECS[self.name]

    @property
    def source(self) -> str:
        return _BUILTIN

    async def call(self, call: _ToolCall) -> _ToolOutput:
        return await self._tool().call(call)

    async def preview(self, call: _ToolCall) -> _ToolOutput | None:
        """What `call` would do, with nothing written (`write` and `edit`); None for a tool
        that has no dry run."""
        if self.name not in _CHANGERS:
            return None
        tool = self._tool()
        dry = getattr(tool, "preview", None)
        return await dry(call) if dry is not None else None


async def preview(tool: _Tool | None, call: _ToolCall) -> _ToolOutput | None:
    """What a built-in `tool` would do with `call`, with nothing written (ADR-0034): the
    diff `edit` or `write` would make, or its refusal, as the call would answer; None for
    any other tool (a bridged tool has no dry run)."""
    return await tool.preview(call) if isinstance(tool, _Builtin) else None


def builtin_tools(project: str | None = None, *, sandbox: Sandbox | None = None) -> list[_Builtin]:
    """A fresh instance of every built-in tool: read, glob, grep, bash, write, edit (each
    imported on its first use), read, write and edit sharing one fresh `Seen` ledger, write
    and edit knowing the `project` root (none: each call's working directory is the only
    root they keep to), `bash` running its commands in `sandbox` when it is in force.
    Register them by `name`, which needs no import."""
    shared = _Shared(project, sandbox)
    return [_Builtin(name, shared) for name in _CLASSES]
