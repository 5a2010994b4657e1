"""The slash commands what people bring makes: `/NAME ARGS` for each markdown command and
each skill, `/skills`, and `/agents` (the agent files, ADR-0049).

Owns the `Command`s (a markdown command's prompt is its body expanded; a skill's is its
body with `ARGS` appended), their specs as `/help` and completion show them (the
description as the hint, `argument-hint` as the args' hint), and the rule for names: one that
is bingo's own or a plugin's command is refused, with one notice, and a skill whose name a
markdown command has keeps its `skill` tool but not the slash command.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from ..kernel.interfaces import Command, CommandContext
from ..kernel.registry import BUILTIN
from ..wire import CommandArgs, CommandOutcome, CommandSpec, Completion, PromptOutcome, TableView, ViewOutcome
from .agents import AgentFile
from .commands import MarkdownCommandFile, expand
from .skills import Skill

__all__ = ["MarkdownCommand", "SkillCommand", "SkillsCommand", "slash_commands"]

SOURCE = "bring"
"""The `source` of the commands and hooks what people bring makes (not a plugin's name)."""


class MarkdownCommand:
    """`/NAME ARGS` of a markdown command: its body, expanded, as the person's prompt."""

    __slots__ = ("file", "spec")
    source = SOURCE

    def __init__(self, file: MarkdownCommandFile) -> None:
        self.file = file
        hint = file.description or f"the prompt in {file.path.name}"
        self.spec = CommandSpec(
            name=file.name,
            hint=f"{hint} ({file.whose})",
            args=CommandArgs(kind="free", hint=file.argument_hint or None),
            family="commands",
        )

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        return PromptOutcome(text=expand(self.file.body, args))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class SkillCommand:
    """`/NAME ARGS` of a skill: its body, with `ARGS` appended, as the person's prompt."""

    __slots__ = ("skill", "spec")
    source = SOURCE

    def __init__(self, skill: Skill) -> None:
        self.skill = skill
        words = skill.description if len(skill.description) <= 120 else skill.description[:119] + "…"
        self.spec = CommandSpec(name=skill.name, hint=words, args=CommandArgs(kind="free"), family="skills")

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        text = f"Base directory for this skill: {self.skill.directory}\n\n{self.skill.body}"
        args = args.strip()
        if args:
            text += f"\n\nARGUMENTS: {args}"
        return PromptOutcome(text=text)

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class SkillsCommand:
    """`/skills`: every skill, its description and where it is."""

    __slots__ = ("_skills",)
    spec = CommandSpec(name="skills", hint="list the skills the model can use", instant=True, family="bingo")
    source = BUILTIN

    def __init__(self, skills: Mapping[str, Skill]) -> None:
        self._skills = skills

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        rows: list[list[str | int | float | None]] = [
            [name, skill.description, str(skill.directory)] for name, skill in sorted(self._skills.items())
        ]
        title = "skills" if rows else "skills: none (put a directory holding SKILL.md in ~/.bingo/skills/)"
        return ViewOutcome(view=TableView(title=title, columns=["skill", "description", "where"], rows=rows))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


class AgentsCommand:
    """`/agents`: every agent file, its description, its tools, model and where it is."""

    __slots__ = ("_agents",)
    spec = CommandSpec(name="agents", hint="list the agents the model can hand a task to", instant=True, family="bingo")
    source = BUILTIN

    def __init__(self, agents: Mapping[str, AgentFile]) -> None:
        self._agents = agents

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        rows: list[list[str | int | float | None]] = [
            [
                name,
                agent.description,
                "all" if agent.tools is None else ", ".join(agent.tools) or "none",
                agent.model or "the conversation's",
                "worktree" if agent.isolation else "",
                str(agent.path),
            ]
            for name, agent in sorted(self._agents.items())
        ]
        title = "agents" if rows else "agents: none (put NAME.md files with name and description in ~/.bingo/agents/)"
        columns = ["agent", "description", "tools", "model", "isolation", "where"]
        return ViewOutcome(view=TableView(title=title, columns=columns, rows=rows))

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        return []


def slash_commands(
    commands: Mapping[str, MarkdownCommandFile],
    skills: Mapping[str, Skill],
    *,
    taken: Collection[str],
    plugins: Mapping[str, str],
    say: Callable[[str], None],
    bare: Mapping[str, MarkdownCommandFile] | None = None,
    long: Mapping[str, Skill] | None = None,
) -> dict[str, Command]:
    """The commands what people bring offers, by name: each markdown command, then each
    skill whose name no markdown command has. A name in `taken` (bingo's own) or `plugins`
    (a plugin's command, with its plugin) is refused, with one line to `say`. Then each of
    `bare` (a package's command by its bare name, also offered as `/PLUGIN:NAME`) whose name
    nothing else has, without a word when another has it: its long name still works. And each
    of `long`, a package's skill by its long name (`PLUGIN:NAME`), that no command has."""
    out: dict[str, Command] = {}
    wanted: list[tuple[str, str, Command]] = [
        (name, f"command {file.path}", MarkdownCommand(file)) for name, file in sorted(commands.items())
    ]
    wanted += [
        (name, f"skill {skill.directory}", SkillCommand(skill))
        for name, skill in sorted(skills.items())
        if name not in commands
    ]
    for name, what, command in wanted:
        if name in taken:
            say(f"{what}: /{name} is bingo's own command, so it is not offered as /{name}; rename the file")
        elif name in plugins:
            say(
                f"{what}: /{name} is plugin {plugins[name]}'s command, so it is not offered as /{name}; rename the file"
            )
        else:
            out[name] = command
    for name, file in sorted((bare or {}).items()):
        if name not in taken and name not in plugins and name not in out:
            out[name] = MarkdownCommand(file)
    for name, skill in sorted((long or {}).items()):
        if name not in taken and name not in plugins and name not in out:
            out[name] = SkillCommand(skill)
    return out
