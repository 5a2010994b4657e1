"""Reading what a layer brings: one markdown file, bounded, only inside its layer.

Owns the bound on a skill's or command's file (`MAX_FILE`) and reading it through
`kernel.files.read_layer_file` (a regular file whose real path is inside its layer: never a
link out of it, a FIFO or a file of /proc), decoded and split into front matter and body.
What is read for the model is read once, at start: a project's files are what its trust
pinned, not what they became later.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..kernel.files import LayerFile, read_layer_file
from ._front import Front, FrontError, split_front

__all__ = [
    "DESCRIPTION_MAX",
    "MAX_FILE",
    "NAME_MAX",
    "Layer",
    "Read",
    "layers",
    "name_and_description",
    "read_markdown",
]

MAX_FILE = 262_144
"""Bytes of one `SKILL.md` or command file read at most; a longer one is refused with a
notice (the body is submitted as a prompt whole, so it is never cut silently)."""
NAME_MAX = 64
"""Characters of a skill's or agent's name at most (the Agent Skills spec's bound)."""
DESCRIPTION_MAX = 1024
"""Characters of a skill's or agent's description at most (the same spec's)."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One place things are read from: its directory, whose it is (`user` or `project`),
    and the root a file must really be inside (the user's home, or the project)."""

    directory: Path
    whose: str
    root: Path


def layers(kind: str, home: Path, user_home: Path, project: Path | None, hosts: tuple[str, ...]) -> list[Layer]:
    """The places `kind` (skills, commands, agents) is read from, the user's first:
    `~/.bingo/KIND`, then `~/.HOST/KIND` for each other host that keeps them; the project's
    `.bingo/KIND` and `.HOST/KIND` only when `project` is given (a trusted project's)."""
    everywhere = Path("/")
    places = [Layer(home / kind, "user", everywhere)]
    places += [Layer(user_home / f".{host}" / kind, "user", everywhere) for host in hosts]
    if project is not None:
        places += [Layer(project / f".{host}" / kind, "project", project) for host in ("bingo", *hosts)]
    return places


def name_and_description(fields: dict[str, object], noun: str, name: re.Pattern[str], name_words: str) -> str | None:
    """Why a front matter's `name` and `description` cannot serve a `noun` (one line naming
    the fix), or None: `name` matches `name` (said as `name_words`), both within their
    bounds."""
    given, description = fields.get("name"), fields.get("description")
    if not isinstance(given, str) or not given:
        return f"its front matter has no name: add `name: my-{noun}` ({name_words})"
    if len(given) > NAME_MAX or not name.match(given):
        return f"its name {given[:80]!r} is not {name_words} (at most {NAME_MAX})"
    if not isinstance(description, str) or not description.strip():
        return "its front matter has no description: add `description: what it does and when to use it`"
    if len(description) > DESCRIPTION_MAX:
        return f"its description is {len(description)} characters, over {DESCRIPTION_MAX}"
    return None


@dataclass(frozen=True, slots=True)
class Read:
    """A file read: its front matter and body, or why it cannot be used (`problem`)."""

    front: Front | None
    problem: str | None = None


def read_markdown(path: Path, layer: Layer) -> Read | None:
    """The markdown file at `path` of `layer`, split; None when there is nothing there."""
    name = "your home" if layer.whose == "user" else "the project"
    found = read_layer_file(path, layer=layer.root, limit=MAX_FILE + 1, layer_name=name)
    if found is None:
        return None
    if not isinstance(found, LayerFile):
        return Read(None, found.why)
    if found.size > MAX_FILE:
        return Read(None, f"it is {found.size} bytes, over the {MAX_FILE} read")
    try:
        text = found.data.decode("utf-8")
    except UnicodeDecodeError:
        return Read(None, "it is not UTF-8 text")
    try:
        return Read(split_front(text))
    except FrontError as exc:
        return Read(None, str(exc))
