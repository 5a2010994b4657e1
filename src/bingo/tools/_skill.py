"""The `skill` tool: a skill's instructions and the paths of its other files, by name.

Owns the tool's spec (trusted and read-only: it reads only what was loaded at start, so the
gate runs it without a rule unless one denies it), its input (`{"name"}`) and its answer:
the skill's directory, its body, and its other files as absolute paths the model can `read`
(at most a few hundred, the rest counted). Which skills there are is the caller's
(`bring.skills`): the tool is given a lookup, and knows no place skills live.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Protocol

import msgspec

from ..kernel.interfaces import ToolCall
from ..wire import TextPart, ToolOutput, ToolSpec, ToolTraits
from ._common import BuiltinTool, Input, error_output, parse_input, schema_of

__all__ = ["SkillInput", "SkillLike", "SkillTool"]


class SkillLike(Protocol):
    """What the tool reads of a skill."""

    @property
    def directory(self) -> Path: ...

    @property
    def body(self) -> str: ...

    def files(self) -> tuple[list[Path], int]: ...


class SkillInput(Input, frozen=True):
    name: Annotated[str, msgspec.Meta(description="The skill's name, as the system prompt lists it.")]


class SkillTool(BuiltinTool):
    """Gives the model a skill's body and the paths of its other files."""

    _spec = ToolSpec(
        name="skill",
        description=(
            "Load a skill: its instructions, and the paths of the other files it holds (scripts, "
            "references, templates), which you can read with `read`. Call it when a task matches a "
            "skill the system prompt lists, before doing the task, and follow what it says."
        ),
        input_schema=schema_of(SkillInput),
    )
    _traits = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")

    def __init__(self, skills: Callable[[], Mapping[str, SkillLike]]) -> None:
        self._skills = skills

    async def call(self, call: ToolCall) -> ToolOutput:
        args = parse_input(SkillInput, call.input, "skill")
        if isinstance(args, ToolOutput):
            return args
        skills = self._skills()
        skill = skills.get(args.name)
        if skill is None:
            near = difflib.get_close_matches(args.name, list(skills), n=1)
            hint = f" Did you mean {near[0]}?" if near else ""
            listed = ", ".join(sorted(skills)[:50]) or "none"
            return error_output(f"skill: there is no skill named {args.name!r}.{hint} The skills: {listed}.")
        files, more = skill.files()
        text = f"Base directory for this skill: {skill.directory}\n\n{skill.body}"
        if files:
            text += "\n\nThe skill's other files (read them with `read` when its instructions say to):\n"
            text += "\n".join(f"- {path}" for path in files)
            if more:
                text += f"\n- … and {more} more under {skill.directory}"
        return ToolOutput(parts=[TextPart(text=text)])
