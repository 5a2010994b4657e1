"""Cutting a tool result that is too large for the context, and the note that says so.

Owns the cut (the text parts are kept in order up to the budget, ending at a line break when
one is near; images are kept) and the note the model reads: how much was left out and how to
get the rest. How to get the rest depends on the tool, so the built-in tools' ways are named
here (the registry reserves their names, so `read` from `builtin` is bingo's own `read`):
`read` is told the exact offset the next call starts at; any other tool, a plugin's
included, is told what to narrow. It does not decide the budget (the turn loop does, from the
window: ADR-0021) and never touches `display`, which is the person's, not the model's.
"""

from __future__ import annotations

import msgspec

from ..wire import Json, Part, TextPart, ToolOutput, is_object
from .registry import BUILTIN

__all__ = ["cut_output"]

_MIN_CHARS = 2_000
"""No budget cuts a result shorter than this: a note needs something to be a note about."""

_NEAR = 0.8
"""A cut moves back to the last line break when that keeps at least this share of the room."""

_NARROW: dict[str, str] = {
    "bash": (
        "To see the rest, run the command again with its output narrowed (head -n, tail -n, "
        "sed -n 'A,Bp' or grep), or redirected to a file that you then read with an offset."
    ),
    "grep": "To see the rest, search again more narrowly: a more specific pattern, a path or a glob.",
    "glob": "To see the rest, ask again more narrowly: a more specific pattern or a deeper path.",
}


def cut_output(output: ToolOutput, *, name: str, source: str, input: Json, chars: int) -> ToolOutput:
    """`output`, its text cut to `chars` characters in all (at least `_MIN_CHARS`) with a note
    at the end; `output` itself when it fits."""
    room = max(chars, _MIN_CHARS)
    total = sum(len(p.text) for p in output.parts if isinstance(p, TextPart))
    if total <= room:
        return output
    parts: list[Part] = []
    whole_lines, left = 0, room
    for part in output.parts:
        if not isinstance(part, TextPart):
            parts.append(part)
            continue
        if left <= 0:
            continue
        text = part.text
        if len(text) > left:
            text = text[:left]
            at = text.rfind("\n")
            if at >= int(left * _NEAR):
                text = text[:at]  # the break itself is left out: every line kept is whole
                whole_lines = text.count("\n") + 1
            else:
                whole_lines = text.count("\n")  # the last line kept is part of one
        left -= len(text)
        parts.append(TextPart(text=text))
    kept = room - left
    note = (
        f"\n[bingo cut this result to fit the context: {total - kept} of its {total} characters "
        f"were left out; one result may hold about {room} characters. {_how(name, source, input, whole_lines)}]"
    )
    texts = [i for i, p in enumerate(parts) if isinstance(p, TextPart)]
    if texts:
        last = parts[texts[-1]]
        assert isinstance(last, TextPart)
        parts[texts[-1]] = TextPart(text=last.text + note)
    else:
        parts.append(TextPart(text=note.lstrip("\n")))
    return msgspec.structs.replace(output, parts=parts)


def _how(name: str, source: str, input: Json, whole_lines: int) -> str:
    """How to get what was left out of a result of `name`; `whole_lines` is how many whole
    lines the cut part kept."""
    if source == BUILTIN and name == "read":
        offset = input.get("offset", 1) if is_object(input) else 1
        start = offset if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0 else 1
        # read answers one numbered line per line of the file, so the whole lines kept say
        # where the rest starts.
        following = start + whole_lines
        # A tenth less than was kept: later lines have longer numbers, and read adds a note.
        limit = max(1, whole_lines - whole_lines // 10)
        return (
            f"The rest starts at line {following}: read again with offset={following}"
            f" and limit={limit} to see about as much as fits."
        )
    if source == BUILTIN and name in _NARROW:
        return _NARROW[name]
    return f"To see the rest, call {name} again asking for less (narrower input)."
