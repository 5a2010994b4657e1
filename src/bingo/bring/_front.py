"""Front matter: the YAML block between two `---` lines at the top of a `SKILL.md` or a
markdown command, and the body after it.

Owns splitting a file's text into its front matter and its body, and reading the front
matter as YAML with PyYAML's safe loader (imported here, on the first file that has front
matter: a run with no skills and no commands never imports it). YAML, not a subset of it:
real `SKILL.md` files use folded and literal multi-line descriptions (`>-`, `|`), quoted
strings with colons, and comments (ADR-0045). It does not check what the keys mean (the
skill's and the command's readers do) and reads no file (the caller hands it the text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FRONT_MAX", "Front", "FrontError", "split_front"]

FRONT_MAX = 16_384
"""Characters of front matter read at most: a name, a description of 1024 characters and a
few more keys fit many times over; past it the file is refused, never parsed."""
_VALUES_MAX = FRONT_MAX
"""Values (every key, item and scalar, each time it is reached) a front matter may hold at
most. A YAML alias repeats what its anchor names without copying it, so 16 KB of anchors each
listing the one before nine times stand for 9^9 values, which any reader of them (a hint
joined into one line) then makes: bingo ran out of memory. Text cannot hold more values than
characters, so past this bound only aliases can have made them."""


class FrontError(ValueError):
    """The front matter is not there, not closed, not YAML, or not a mapping: `str()` says
    which, in words a person fixes the file by."""


@dataclass(frozen=True, slots=True)
class Front:
    """A file's front matter (its keys as YAML gave them; {} when it has none) and body."""

    fields: dict[str, object]
    body: str
    present: bool


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def split_front(text: str) -> Front:
    """`text` cut into its front matter and body. A text that does not start with a `---`
    line has none (`present` False, the whole text its body).

    Raises:
        FrontError: it starts with `---` and the block is not closed, too long, not YAML,
            or not a mapping of keys.
    """
    text = text.removeprefix("\ufeff")
    lines = _lines(text)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return Front({}, text, False)
    size = 0
    for at, line in enumerate(lines[1:], start=1):
        if line.rstrip("\r\n").rstrip() in ("---", "..."):
            block = "".join(lines[1:at])
            body = "".join(lines[at + 1 :])
            return Front(_parse(block), body, True)
        size += len(line)
        if size > FRONT_MAX:
            raise FrontError(f"its front matter is longer than {FRONT_MAX} characters")
    raise FrontError("its front matter is not closed: add a line of three dashes (---) after it")


_PLAIN = re.compile(r"^([A-Za-z0-9_-]+):[ \t]+(?![|>'\"])(\S.*?)[ \t]*$")
"""A top-level `key: value` line whose value is written plain (not a block, not quoted)."""


def _quoted(block: str) -> str:
    """`block` with each top-level plain value written as a quoted YAML string: what Claude
    Code's own front matter reader retries with, so that `argument-hint: [pr] [priority]`
    (its documentation's own example, and not YAML) reads as the text it is."""
    lines: list[str] = []
    for line in block.splitlines():
        match = _PLAIN.match(line)
        if match is None:
            lines.append(line)
            continue
        value = match.group(2).replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{match.group(1)}: "{value}"')
    return "\n".join(lines)


def _load(text: str) -> object:
    import yaml  # lazily: only a file with front matter pays for it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # a safe loader, C or Python


def _values(data: object) -> int:
    """How many values `data` holds, each time it is reached, counting no further than one
    past `_VALUES_MAX`."""
    count, stack = 0, [data]
    while stack and count <= _VALUES_MAX:
        value = stack.pop()
        count += 1
        if isinstance(value, dict):
            stack.extend(value.keys())  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
            stack.extend(value.values())  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        elif isinstance(value, list):
            stack.extend(value)  # pyright: ignore[reportUnknownArgumentType]
    return count


def _parse(block: str) -> dict[str, object]:
    import yaml

    try:
        data = _load(block)
    except yaml.YAMLError as exc:
        try:
            data = _load(_quoted(block))
        except yaml.YAMLError:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or "it is not valid YAML"
            where = f" (line {mark.line + 2})" if mark is not None else ""
            raise FrontError(f"its front matter is not valid YAML{where}: {problem}") from None
    if data is None:
        return {}
    if _values(data) > _VALUES_MAX:
        raise FrontError(f"its front matter repeats itself through YAML aliases into over {_VALUES_MAX} values")
    if not isinstance(data, dict):
        raise FrontError("its front matter is not a mapping of keys (name: value)")
    fields: dict[str, object] = {}
    for key, value in data.items():  # pyright: ignore[reportUnknownVariableType]
        fields[str(key)] = value  # pyright: ignore[reportUnknownArgumentType]
    return fields
