"""What a person sees of a tool call, in words any surface can draw (ADR-0034): the tidy
line a finished call leaves (`✓ edit calc.py (+4 −1)`), the first lines of a result, and what
a permission question shows above its keys (a diff, a command, the input as JSON).

Owns the words and the bounds; it draws nothing and picks no colour. Every string it returns
is escaped (`surfaces.escape`): names, paths, commands and results are foreign. The terminal
(`terminal/_draw.py`, `terminal/_input.py`) and the print surface style and place what it
gives; another surface (a room, an editor) may take the same lines.

It does not compute a diff: the tool does (`tools.preview`), so a preview reads no more than
the call itself would, and writes nothing.
"""

from __future__ import annotations

import json
import re
from typing import Literal

import msgspec

from ..kernel.frames import AssistantFrame, ChildFrame, CompactionFrame, NoticeFrame, PromptFrame
from ..wire import CodeView, Json, TextBlock, TextPart, ToolOutput, ToolUseBlock, is_object
from ._escape import escape, one_line

__all__ = [
    "AGENT_TEXT",
    "PREVIEW_LINES",
    "RESULT_LINES",
    "RESULT_WIDTH",
    "Preview",
    "agent_lines",
    "call_line",
    "cut",
    "preview_of",
    "result_lines",
    "result_text",
    "subject",
]

RESULT_LINES = 6
"""Lines of a result shown under its call; the rest is counted (`/result` shows it whole)."""
RESULT_WIDTH = 160
"""Characters of one result line shown; a longer one is cut with `…`."""
PREVIEW_LINES = 40
"""Lines a permission question shows of what it approves (fewer on a short screen)."""
_PREVIEW_KEPT = 2000
"""Lines of a preview kept for a surface to cut to its own height (the count says the rest)."""
_SUBJECT = 60
"""Characters of a call's argument summary on its line."""
_ERROR = 100
"""Characters of an error's first line on a failed call's line."""

_SUMMARISED = frozenset({"read", "glob", "grep", "write", "edit"})
"""Built-in tools whose line says all a person needs (the file, the counts): no result lines."""
_CHANGE_COUNTS = re.compile(r"\+(\d+) −(\d+) lines")
"""The counts `edit` and `write` tell the model (`+4 −1 lines`), pinned by a unit test."""
_CREATED = re.compile(r"^created .*: (\d+) lines?$")
"""What `write` tells the model of a new file (`created notes.md: 12 lines`)."""


def _first_line(text: str) -> tuple[str, int]:
    """`text`'s first non-blank line and how many lines follow it."""
    lines = text.strip("\n").splitlines() or [""]
    return lines[0].strip(), len(lines) - 1


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def subject(name: str, input: Json) -> str:
    """The call's argument in short, escaped, on one line: the command's first line for
    `bash` (with a count of the rest), the path for a file tool, the pattern for a search,
    a lone string argument as itself, else `key=value` pairs."""
    if not is_object(input) or not input:
        return "" if input in (None, {}) else _clip(one_line(json.dumps(input, ensure_ascii=False)), _SUBJECT)
    own = {
        "bash": "command",
        "read": "path",
        "write": "path",
        "edit": "path",
        "glob": "pattern",
        "grep": "pattern",
        "agent": "description",
    }.get(name)
    value = input.get(own) if own is not None else None
    if isinstance(value, str):
        first, more = _first_line(value)
        rest = f" (+{more} line{'s' if more != 1 else ''})" if more else ""
        return _clip(one_line(first), _SUBJECT) + rest
    if len(input) == 1:
        (only,) = input.values()
        if isinstance(only, str):
            return _clip(one_line(" ".join(only.split())), _SUBJECT)
    pairs = " ".join(
        f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
        for key, value in input.items()
    )
    return _clip(one_line(" ".join(pairs.split())), _SUBJECT)


def _said(output: ToolOutput) -> str:
    return "\n".join(p.text for p in output.parts if isinstance(p, TextPart))


def _counts(name: str, output: ToolOutput) -> str:
    """`(+4 −1)` for a change `edit` or `write` made, `(12 lines)` for a file `write` made."""
    if name not in ("edit", "write"):
        return ""
    said, _ = _first_line(_said(output))
    created = _CREATED.match(said)
    if name == "write" and created is not None:
        return f" ({created.group(1)} line{'s' if created.group(1) != '1' else ''})"
    counts = _CHANGE_COUNTS.search(said)
    return f" (+{counts.group(1)} −{counts.group(2)})" if counts is not None else ""


def call_line(name: str, input: Json, output: ToolOutput, *, error_width: int = _ERROR) -> str:
    """The line a finished call leaves, escaped: `✓ edit calc.py (+4 −1)`, or `✗ read x:
    the error's first line` (cut at `error_width` characters; a leading `read: ` dropped,
    the line names the tool already)."""
    about = subject(name, input)
    line = f"{'✗' if output.is_error else '✓'} {escape(name)}" + (f" {about}" if about else "")
    if not output.is_error:
        return line + _counts(name, output)
    first, _ = _first_line(_said(output))
    first = first.removeprefix(f"{name}: ")
    return line + (f": {_clip(one_line(first), error_width)}" if first else "")


def result_text(output: ToolOutput) -> str:
    """A result whole, escaped: its text parts, and each image as a line saying so."""
    pieces = [p.text if isinstance(p, TextPart) else f"[an image, {p.media_type}]" for p in output.parts]
    return escape("\n".join(pieces).strip("\n"))


def cut(text: str, lines: int, width: int) -> tuple[list[str], int]:
    """`text`'s first `lines` lines, each cut at `width` characters with `…`, and how many
    lines are left out."""
    rows = text.splitlines()
    return [_clip(row, width) for row in rows[:lines]], max(len(rows) - lines, 0)


def result_lines(
    name: str, output: ToolOutput, *, lines: int = RESULT_LINES, width: int = RESULT_WIDTH
) -> tuple[list[str], int]:
    """The first lines of a successful result a person is shown under its call (escaped),
    and how many more it has; nothing for a failed call (its line says why), a result with
    a View (the View is drawn) or a file tool's (its line says it all)."""
    if output.is_error or output.display is not None or name in _SUMMARISED:
        return [], 0
    return cut(result_text(output), lines, width)


class Preview(msgspec.Struct, frozen=True, kw_only=True):
    """What a permission question shows above its keys, escaped: a diff (`diff`), a command
    or a file's content (`text`), the input as indented JSON (`json`); `note` is a line
    said before it (why no diff is shown: the tool would refuse the call); `more` counts the
    lines left out past what `text` holds."""

    kind: Literal["diff", "text", "json"]
    text: str
    note: str = ""
    more: int = 0


def _kept(kind: Literal["diff", "text", "json"], text: str, note: str = "") -> Preview:
    rows = escape(text).splitlines()
    return Preview(
        kind=kind, text="\n".join(rows[:_PREVIEW_KEPT]), note=escape(note), more=max(len(rows) - _PREVIEW_KEPT, 0)
    )


def _as_json(input: Json) -> str:
    return json.dumps(input, ensure_ascii=False, indent=2)


def preview_of(name: str, input: Json, planned: ToolOutput | None) -> Preview:
    """What a question about calling `name` with `input` shows: the diff the tool's own
    dry run gave (`planned`, a CodeView of language diff), or why it would refuse the call
    (its error) above the input; the whole command for `bash`; else the input as JSON."""
    if planned is not None and planned.is_error:
        first, _ = _first_line(_said(planned))
        return _kept("json", _as_json(input), note=f"{name} will refuse this: {first}")
    if planned is not None and isinstance(planned.display, CodeView) and planned.display.language == "diff":
        return _kept("diff", planned.display.text)
    if planned is not None and not planned.display:
        said, _ = _first_line(_said(planned))
        if said:  # the tool says what it will do instead (nothing changes)
            return _kept("json", _as_json(input), note=said)
    command = input.get("command") if is_object(input) else None
    if name == "bash" and isinstance(command, str):
        return _kept("text", command.strip("\n"))
    return _kept("json", _as_json(input))


AGENT_TEXT = 300
"""Characters of one text of a subagent's model a past session shows (its answer is the
call's result, shown whole where results are)."""


def agent_lines(frame: ChildFrame) -> list[str]:
    """What a person is shown of one frame a subagent wrote (ADR-0049), as escaped lines:
    the prompt it was given (`> …`), its model's text (cut at AGENT_TEXT), each call it
    made (`→ bash ls`); a notice as itself and a compaction as one line; nothing for the
    rest (a call's result is its own business, its answer the parent's call's result)."""
    match frame:
        case PromptFrame(text=text):
            return [escape("> " + _clip(one_line(" ".join(text.split())), AGENT_TEXT))]
        case AssistantFrame(message=message):
            lines: list[str] = []
            for block in message.content:
                if isinstance(block, TextBlock) and block.text.strip():
                    lines.append(escape(_clip(one_line(" ".join(block.text.split())), AGENT_TEXT)))
                elif isinstance(block, ToolUseBlock):
                    about = subject(block.name, block.input)
                    lines.append(f"→ {escape(block.name)}" + (f" {about}" if about else ""))
            return lines
        case NoticeFrame(notice=notice):
            return [escape(f"{notice.source}: {notice.message}")]
        case CompactionFrame():
            return ["its conversation was compacted here"]
        case _:
            return []
