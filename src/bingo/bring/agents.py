"""Agent files: markdown whose front matter names a subagent and whose body is its
instructions (INTERFACE.md section 15).

Owns finding them in their four places (`~/.bingo/agents/`, `~/.claude/agents/`, then the
project's `.bingo/agents/` and `.claude/agents/`, under its trust: the caller passes only the
places it may read; a plugin package's `agents/` is read as the user's), checking each one's
front matter (`name`: lowercase letters, digits, `-` and `_`, at most 64; `description`: at
most 1024 characters; `tools`: a list or a comma-separated string; `model`: a name, or
`inherit`; `isolation`: `worktree`; other keys, Claude Code's `color` among them, are
ignored; one notice per bad file, the others load), the rule that a project's agent wins the
name, the catalogue the system prompt carries, and matching the tools a file names (Claude
Code's names too: `Read`, `mcp__server__tool`) against the tools a run has. It runs nothing
(the `agent` tool, run/_agent.py, opens the child conversation).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ._files import Layer, layers, name_and_description, read_markdown

__all__ = [
    "AGENTS_CATALOGUE_CHARS",
    "AgentFile",
    "agent_catalogue",
    "agent_places",
    "find_agents",
    "offered_tools",
    "parse_agent",
]

MODEL_MAX = 200
TOOLS_MAX = 200
"""Tool names one file may list: more is not a person's list."""
AGENTS_CATALOGUE_CHARS = 8_000
"""Characters of the system prompt's list of agents at most; past it, descriptions are cut
and then the rest only counted (as the skills' catalogue does)."""
_CUT_DESCRIPTION = 160
_NAME = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*\Z")
_TOOL = re.compile(r"[A-Za-z0-9_*.:-]{1,200}\Z")
_ISOLATIONS = ("worktree",)
_NEVER = frozenset({"agent", "task"})
"""Tool names a child never gets, whatever its file says (bingo's `agent`, Claude Code's
`Task` and `Agent`): a child conversation opens no child of its own."""


@dataclass(frozen=True, slots=True)
class AgentFile:
    """One agent as loaded: its name, description, the tools it names (None: it names none,
    and has all of the parent's), its model (None: the parent's), its isolation (None or
    `worktree`), its instructions (the body, as read at start), its file and whose it is."""

    name: str
    description: str
    tools: tuple[str, ...] | None
    model: str | None
    isolation: str | None
    body: str
    path: Path
    whose: str


def agent_places(home: Path, user_home: Path, project: Path | None) -> list[Layer]:
    """The four places, the user's first; the project's only when `project` is given (a
    trusted project's)."""
    return layers("agents", home, user_home, project, ("claude",))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _tools(value: object) -> tuple[str, ...] | None | str:
    """The tool names of `tools:` (a list, or one comma-separated string), None when the key
    is absent or empty of value (YAML null), or a problem (a str prefixed with `!`)."""
    if value is None:
        return None
    if isinstance(value, str):
        items: list[object] = [item for item in value.split(",")]
    elif isinstance(value, list):
        items = list(value)  # pyright: ignore[reportUnknownArgumentType]
    else:
        return "!its tools is neither a list nor a comma-separated string of tool names"
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            return "!its tools list holds something that is not a tool name (a string)"
        name = item.strip()
        if not name:
            continue
        if not _TOOL.match(name):
            return (
                f"!its tools list holds {name[:80]!r}, which is not a tool name: list tools by name "
                "(Bash, Read, mcp__server__tool) and narrow what they may do with permissions rules"
            )
        names.append(name)
    if len(names) > TOOLS_MAX:
        return f"!its tools list names {len(names)} tools, over {TOOLS_MAX}"
    return tuple(dict.fromkeys(names))


def parse_agent(fields: dict[str, object], body: str, path: Path, whose: str) -> AgentFile | str:
    """The agent a file's front matter and body make, or the problem (one line) that keeps it
    from loading."""
    problem = name_and_description(fields, "agent", _NAME, "lowercase letters, digits, - and _")
    if problem is not None:
        return problem
    name, description = cast(str, fields["name"]), cast(str, fields["description"])
    tools = _tools(fields.get("tools"))
    if isinstance(tools, str):
        return tools[1:]
    model = fields.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip() or len(model) > MODEL_MAX):
        return f"its model is not a model's name (a string of at most {MODEL_MAX} characters), or `inherit`"
    model = _text(model)
    if model is not None:
        model = model.strip()
        model = None if model == "inherit" else model
    isolation = fields.get("isolation")
    if isolation is not None and isolation not in _ISOLATIONS:
        shown = str(isolation)[:80]  # pyright: ignore[reportUnknownArgumentType]
        return f"its isolation {shown!r} is not one bingo knows: write `isolation: worktree`, or leave it out"
    return AgentFile(
        name=name,
        description=" ".join(description.split()),
        tools=tools,
        model=model,
        isolation=_text(isolation),
        body=body.strip("\n"),
        path=path,
        whose=whose,
    )


def find_agents(places: Iterable[Layer], say: Callable[[str], None]) -> dict[str, AgentFile]:
    """Every agent of `places`, by name: a later layer's (the project's) wins the name over
    an earlier's; within one layer the first place's, and within one place the first file in
    name order. `say` gets one line per file that cannot be loaded, naming it."""
    found: dict[str, AgentFile] = {}
    for layer in places:
        try:
            entries = sorted(os.scandir(layer.directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not entry.name.endswith(".md"):
                continue
            path = Path(entry.path)
            read = read_markdown(path, layer)
            if read is None:
                continue
            front, problem = read.front, read.problem
            agent: AgentFile | str | None = None
            if front is not None and problem is None:
                if front.present:
                    agent = parse_agent(front.fields, front.body, path, layer.whose)
                else:
                    agent = "it has no front matter (name, description)"
            if not isinstance(agent, AgentFile):
                say(f"agent {path} is not loaded: {problem or agent}")
                continue
            mine = found.get(agent.name)
            if mine is not None and mine.whose == layer.whose:
                continue  # the same layer's earlier place (or file) keeps it
            found[agent.name] = agent
    return found


def agent_catalogue(agents: dict[str, AgentFile], limit: int = AGENTS_CATALOGUE_CHARS) -> str:
    """The system prompt's section on subagents: how to hand a task to a child conversation,
    and each agent's name and description, within `limit` characters of list."""
    head = (
        "# Subagents\n\nThe `agent` tool hands a task to a child conversation that starts with "
        "nothing but the prompt you give it and answers with its final text. Use it for a "
        "self-contained task whose working would fill this conversation; several `agent` calls "
        "in one message run at once. Name an agent to give the task to it"
    )
    if not agents:
        return head + " (none is installed: leave `agent` out for a general helper with your tools)."
    lines = [f"- {name}: {agents[name].description}" for name in sorted(agents)]
    if sum(len(line) + 1 for line in lines) > limit:
        lines = [
            f"- {name}: {agents[name].description[: _CUT_DESCRIPTION - 1]}…"
            if len(agents[name].description) > _CUT_DESCRIPTION
            else f"- {name}: {agents[name].description}"
            for name in sorted(agents)
        ]
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit:
            kept.append(f"- … and {len(lines) - len(kept)} more agents, not listed here")
            break
        kept.append(line)
        used += len(line) + 1
    return head + ", or leave `agent` out for a general helper with your tools. The agents:\n\n" + "\n".join(kept)


def _bingo_name(name: str) -> str:
    """A tool name as a file may write it (Claude Code's `Read`, `mcp__server__tool`), in
    bingo's words (`read`, `plugin__server__tool`)."""
    if name.startswith("mcp__"):
        return "plugin__" + name.removeprefix("mcp__")
    if "__" not in name:
        return name.lower()
    return name


def offered_tools(named: tuple[str, ...] | None, available: Collection[str]) -> tuple[frozenset[str], list[str]]:
    """The tools of `available` a child whose file names `named` may use, and the names that
    matched none. None named: every available tool. Never `agent` (nor Claude Code's `Task`):
    a child opens no child. A `*` in a name matches any run of characters."""
    allowed = [name for name in available if name not in _NEVER]
    if named is None:
        return frozenset(allowed), []
    chosen: set[str] = set()
    unmatched: list[str] = []
    for written in named:
        want = _bingo_name(written)
        if want in _NEVER:
            continue
        if "*" in want:
            hits = [name for name in allowed if fnmatch.fnmatchcase(name, want)]
        else:
            hits = [name for name in allowed if name == want]
        if not hits:
            unmatched.append(written)
        chosen.update(hits)
    return frozenset(chosen), unmatched
