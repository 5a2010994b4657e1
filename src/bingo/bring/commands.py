"""Markdown commands: `NAME.md` files whose body is a prompt (INTERFACE.md section 11).

Owns finding them in their four places (`~/.bingo/commands/`, `~/.claude/commands/`, then
the project's `.bingo/commands/` and `.claude/commands/`, under its trust: the caller passes
only the places it may read), the name (`sub/NAME.md` is `sub:NAME`; a project's wins), the
optional front matter (`description`, `argument-hint`; a file whose front matter is broken
is one notice and not loaded), and expanding the body with what the person typed
(`expand`: `$ARGUMENTS`, `$1`…`$9` by shell-style words, the appended `ARGUMENTS:` line).
Nothing in a file is run: `` !`cmd` `` and `@file` stay the text they are. Which names are
refused (bingo's own, a plugin's) is the caller's (bring/_slash.py).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ._files import Layer, layers, read_markdown

__all__ = ["MarkdownCommandFile", "command_places", "expand", "find_commands"]

_HINT_MAX = 200
"""Characters of a description or argument hint kept (they are shown in /help)."""
_DEPTH = 4
"""Directories below a commands directory looked into (`a/b/c/NAME.md` is `/a:b:c:NAME`)."""
_ARG = re.compile(r"\$ARGUMENTS|\$([1-9])")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True, slots=True)
class MarkdownCommandFile:
    """One markdown command as loaded: its name (`sub:NAME`), file, description, argument
    hint, body (as read at start) and whose it is."""

    name: str
    path: Path
    description: str
    argument_hint: str
    body: str
    whose: str


def command_places(home: Path, user_home: Path, project: Path | None) -> list[Layer]:
    """The four places, the user's first; the project's only when `project` is given."""
    return layers("commands", home, user_home, project, ("claude",))


def _one_line(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):  # `argument-hint: [pr-number]` is a YAML list: shown as written
        value = " ".join(f"[{item}]" for item in value)  # pyright: ignore[reportUnknownVariableType]
    words = " ".join(str(value).split())
    return words if len(words) <= _HINT_MAX else words[: _HINT_MAX - 1] + "…"


def _walk(directory: Path) -> list[tuple[str, Path]]:
    """(name, path) of every `*.md` below `directory`, sorted by name."""
    out: list[tuple[str, Path]] = []
    base = len(directory.parts)
    for top, dirs, names in os.walk(directory):
        depth = len(Path(top).parts) - base
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < _DEPTH)
        parts = Path(top).parts[base:]
        for name in sorted(names):
            if not name.endswith(".md") or name.startswith("."):
                continue
            words = [*parts, name[: -len(".md")]]
            if all(_NAME.match(word) for word in words):
                out.append((":".join(words), Path(top) / name))
    return sorted(out)


def find_commands(places: Iterable[Layer], say: Callable[[str], None]) -> dict[str, MarkdownCommandFile]:
    """Every markdown command of `places`, by name: a later layer's (the project's) wins the
    name over an earlier's; within one layer the first place's. `say` gets one line per file
    that cannot be loaded."""
    found: dict[str, MarkdownCommandFile] = {}
    for layer in places:
        if not layer.directory.is_dir():
            continue
        for name, path in _walk(layer.directory):
            read = read_markdown(path, layer)
            if read is None:
                continue
            if read.problem is not None or read.front is None:
                say(f"command {path} is not loaded: {read.problem}")
                continue
            fields = read.front.fields
            mine = found.get(name)
            if mine is not None and mine.whose == layer.whose:
                continue
            body = read.front.body.strip("\n")
            description = _one_line(fields.get("description")) or _one_line(body.split("\n", 1)[0].lstrip("# "))
            hint = _one_line(fields.get("argument-hint"))
            found[name] = MarkdownCommandFile(name, path, description, hint, body, layer.whose)
    return found


def _words(args: str) -> list[str]:
    """`args` split as a shell would (quotes group, backslashes escape); an unclosed quote
    splits at blanks instead, never an error."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand(body: str, args: str) -> str:
    """The prompt `body` makes with `args`: `$ARGUMENTS` is `args` as typed, `$1`…`$9` its
    words (shell-style quoting; a missing one is empty), in one pass (what `args` holds is
    never expanded again). A body without `$ARGUMENTS` gets `ARGUMENTS: args` appended when
    `args` is not empty."""
    args = args.strip()
    words = _words(args)

    def one(match: re.Match[str]) -> str:
        digit = match.group(1)
        if digit is None:
            return args
        index = int(digit) - 1
        return words[index] if index < len(words) else ""

    text = _ARG.sub(one, body)
    if "$ARGUMENTS" not in body and args:
        text = f"{text}\n\nARGUMENTS: {args}"
    return text
