"""Agent Skills: directories holding a `SKILL.md` (INTERFACE.md section 11).

Owns finding skills in their six places (`~/.bingo/skills/`, `~/.agents/skills/`,
`~/.claude/skills/`, then the project's `.bingo/`, `.agents/` and `.claude/` ones, under its
trust: the caller passes only the places it may read), checking each one's front matter
(`name`: lowercase letters, digits and `-`, at most 64; `description`: at most 1024
characters; one notice per bad file, the others load), the rule that a project's skill wins
the name (and, within one layer, the first place in that order), listing the other files
beside each `SKILL.md`, and the catalogue the system prompt carries: each skill's name and
description, within `CATALOGUE_CHARS` (ADR-0045 says why that bound and what happens past
it). It does not run anything a skill holds (its scripts are files the model may read or
run through `bash`, under the gate and the sandbox like any other command), does not offer
the `skill` tool (tools/_skill.py) or the slash commands (bring/_slash.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ._files import DESCRIPTION_MAX, NAME_MAX, Layer, layers, name_and_description, read_markdown

__all__ = [
    "CATALOGUE_CHARS",
    "DESCRIPTION_MAX",
    "NAME_MAX",
    "Skill",
    "catalogue",
    "find_skills",
    "skill_places",
]

CATALOGUE_CHARS = 16_000
"""Characters the system prompt's skill catalogue takes at most (about 4 000 tokens: 2 % of
a 200 000-token window, 3 % of a 128 000 one). Past it, descriptions are cut, then skills
are named without one, then counted (ADR-0045)."""
_CUT_DESCRIPTION = 160
"""Characters of a description kept once the whole catalogue would pass its bound."""
_COUNTED = 128
"""Characters kept for the last line, which counts the skills not listed."""
_FILES_LISTED = 200
"""Files beside a `SKILL.md` the `skill` tool names; the rest are counted."""
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill as loaded: its name, description, directory, body (what followed the front
    matter, as read at start), and whose it is (`user` or `project`)."""

    name: str
    description: str
    directory: Path
    body: str
    whose: str

    def files(self) -> tuple[list[Path], int]:
        """The other files of the skill (absolute paths, sorted, `SKILL.md` left out, hidden
        files and directories too), at most `_FILES_LISTED`, and how many more there are."""
        found: list[Path] = []
        more = 0
        for top, dirs, names in os.walk(self.directory):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                path = Path(top) / name
                if name.startswith(".") or path == self.directory / SKILL_FILE:
                    continue
                if len(found) < _FILES_LISTED:
                    found.append(path)
                else:
                    more += 1
        return found, more


def skill_places(home: Path, user_home: Path, project: Path | None) -> list[Layer]:
    """The six places, the user's first; the project's only when `project` is given (a
    trusted project's)."""
    return layers("skills", home, user_home, project, ("agents", "claude"))


def _problem(fields: dict[str, object]) -> str | None:
    return name_and_description(fields, "skill", _NAME, "lowercase letters, digits and -")


def _is_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # a link to a directory too: whether it stays inside is read_markdown's
    except OSError:
        return False


def find_skills(places: Iterable[Layer], say: Callable[[str], None]) -> dict[str, Skill]:
    """Every skill of `places`, by name: a later layer's (the project's) wins the name over an
    earlier's; within one layer the first place's. `say` gets one line per skill that cannot
    be loaded, naming its file."""
    found: dict[str, Skill] = {}
    for layer in places:
        try:
            entries = sorted(os.scandir(layer.directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or not _is_directory(entry):
                continue  # a skill is a directory: a file beside them (notes.md) is none
            path = Path(entry.path) / SKILL_FILE
            read = read_markdown(path, layer)
            if read is None:
                continue
            front = read.front
            problem = read.problem
            if front is not None and problem is None:
                problem = _problem(front.fields) if front.present else "it has no front matter (name, description)"
            if problem is not None or front is None:
                say(f"skill {path} is not loaded: {problem}")
                continue
            name = str(front.fields["name"])
            description = " ".join(str(front.fields["description"]).split())
            mine = found.get(name)
            if mine is not None and mine.whose == layer.whose:
                continue  # the same layer's earlier place keeps it
            found[name] = Skill(name, description, Path(entry.path), front.body.strip("\n"), layer.whose)
    return found


def catalogue(skills: dict[str, Skill], limit: int = CATALOGUE_CHARS) -> str:
    """The system prompt's section on skills ("" when there are none), at most `limit`
    characters of list: every name and description; past the bound, descriptions cut to
    `_CUT_DESCRIPTION`; past that, names alone; past that, a count."""
    if not skills:
        return ""
    names = sorted(skills)
    head = (
        "# Skills\n\nSkills are instructions the person installed for particular tasks. When a "
        "task matches a skill's description, call the `skill` tool with its name first and follow "
        "what it returns; read the skill's other files with `read` when it says to.\n\n"
    )

    def lines(cut: int | None) -> list[str]:
        out: list[str] = []
        for name in names:
            words = skills[name].description
            if cut is not None and len(words) > cut:
                words = words[: cut - 1] + "…"
            out.append(f"- {name}: {words}")
        return out

    listed = lines(None)
    if sum(len(line) + 1 for line in listed) > limit:
        listed = lines(_CUT_DESCRIPTION)
    if sum(len(line) + 1 for line in listed) > limit:
        kept: list[str] = []
        used = 0
        for line, name in zip(listed, names):
            shown = line if used + len(line) + 1 <= limit * 3 // 4 else f"- {name}"
            if used + len(shown) + 1 > limit - _COUNTED:
                break
            kept.append(shown)
            used += len(shown) + 1
        rest = len(names) - len(kept)
        if rest:
            kept.append(f"- … and {rest} more skills, not listed here: the `skill` tool takes any of their names")
        listed = kept
    return head + "\n".join(listed)
