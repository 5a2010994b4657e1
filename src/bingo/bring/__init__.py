"""What users bring from other hosts: Agent Skills, markdown commands and command hooks in
Claude Code's shape (INTERFACE.md section 11; ADR-0045), and agent files (section 15,
`agents.py`; ADR-0049).

Sits on the floor of `tools` and `bridge`: it imports `wire`, `kernel` and `sandbox`, and
`run` and `app` import it. `bring()` reads, once at start, the user's places and, when the
project is trusted, the project's (an untrusted project's are left out, and trust's one
notice names them): the skills (`skills.py`), the markdown commands (`commands.py`), and a
kernel `Hook` for each command hook the settings hold (`hooks.py`), which the app registers
beside the plugins' hooks so that the turn loop's one choke point runs them for every call.
The slash commands they make, and `/skills`, are `_slash.py`'s; the `skill` tool is
`tools/_skill.py`'s. Front matter is YAML, read by PyYAML (`_front.py`), imported only when a
file with front matter is found.
"""

from __future__ import annotations

from ._bring import Brought, bring
from ._slash import AgentsCommand, MarkdownCommand, SkillCommand, SkillsCommand
from .agents import AgentFile, agent_catalogue, find_agents, offered_tools, parse_agent
from .commands import MarkdownCommandFile, expand, find_commands
from .hooks import EVENTS, CommandHook, claude_tool
from .skills import CATALOGUE_CHARS, Skill, catalogue, find_skills

__all__ = [
    "CATALOGUE_CHARS",
    "EVENTS",
    "AgentFile",
    "AgentsCommand",
    "Brought",
    "CommandHook",
    "MarkdownCommand",
    "MarkdownCommandFile",
    "Skill",
    "SkillCommand",
    "SkillsCommand",
    "agent_catalogue",
    "bring",
    "catalogue",
    "claude_tool",
    "expand",
    "find_agents",
    "find_commands",
    "find_skills",
    "offered_tools",
    "parse_agent",
]
