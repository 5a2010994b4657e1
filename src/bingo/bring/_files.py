"""Reading what a layer brings: one markdown file, bounded, only inside its layer.

Owns the bound on a skill's or command's file (`MAX_FILE`) and reading it through
`kernel.files.read_layer_file` (a regular file whose real path is inside its layer: never a
link out of it, a FIFO or a file of /proc), decoded and split into front matter and body.
What is read for the model is read once, at start: a project's files are what its trust
pinned, not what they became later.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..kernel.files import LayerFile, read_layer_file
from ._front import Front, FrontError, split_front

__all__ = ["MAX_FILE", "Layer", "Read", "read_markdown"]

MAX_FILE = 262_144
"""Bytes of one `SKILL.md` or command file read at most; a longer one is refused with a
notice (the body is submitted as a prompt whole, so it is never cut silently)."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One place things are read from: its directory, whose it is (`user` or `project`),
    and the root a file must really be inside (the user's home, or the project)."""

    directory: Path
    whose: str
    root: Path


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
