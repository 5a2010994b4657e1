"""How a tool call reads to the editor: its card's title (the tool and its main argument,
cut), kind and locations, what a permission question shows past the title, and what the
person is shown of its result (a View as its markdown fold or ACP diffs, else its text, cut
to SHOWN, and images). Every string from elsewhere passes `escape` (INTERFACE.md §8).

Pure: it sends nothing (`AcpSession` does).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...wire import ImagePart, Json, TextPart, ToolOutput, is_object
from .._escape import escape, escape_view, one_line
from ._markdown import diffs_of, markdown
from ._schema import Content, ImageBlock, Location, TextBlock, ToolCallContent, ToolCallStart, ToolKind

__all__ = ["SHOWN", "asked", "card", "key", "result_content", "title"]

_TITLE_ARGUMENT = 80
_QUESTION_ARGUMENT = 4000
"""Characters of a call's main argument a permission question shows past its title."""
_BLANKS = re.compile(r"[ \t]+")
"""Runs of blanks in a title, folded to one space; a newline is shown (`one_line`), never folded."""
"""Characters of a call's main argument its title shows."""

_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "glob": "search",
    "grep": "search",
    "bash": "execute",
}
_MAIN = {"bash": "command", "glob": "pattern", "grep": "pattern", "agent": "description"}
"""The input field a built-in's title shows; `path` for the rest, as the gate's rules read them."""

SHOWN = 16_000
"""Characters of a tool's text result the editor is shown (the model is given all of it)."""


def _shown(text: str) -> str:
    return (
        text if len(text) <= SHOWN else f"{text[:SHOWN]}\n[… {len(text) - SHOWN:,} more characters, given to the model]"
    )


def key(name: str, input: Json) -> str:
    return name + "\0" + json.dumps(input, sort_keys=True, default=str)


def _main_argument(name: str, input: Json) -> str | None:
    value = input.get(_MAIN.get(name, "path")) if is_object(input) else None
    return value if isinstance(value, str) and value else None


def title(name: str, input: Json) -> str:
    """How a call is named to the person: the tool and its main argument."""
    value = _main_argument(name, input)
    if value is None:
        return escape(name)
    shown = value if len(value) <= _TITLE_ARGUMENT else value[:_TITLE_ARGUMENT] + "…"
    return one_line(f"{name} {_BLANKS.sub(' ', shown.strip())}")


def asked(name: str, input: Json) -> list[ToolCallContent]:
    """What a permission question shows beyond its title: the main argument whole (to a
    bound), so a tail past the title's cut is seen before it is allowed."""
    value = _main_argument(name, input)
    if value is None or len(value) <= _TITLE_ARGUMENT:
        return []
    shown = (
        value
        if len(value) <= _QUESTION_ARGUMENT
        else value[:_QUESTION_ARGUMENT] + f"… ({len(value) - _QUESTION_ARGUMENT} more characters)"
    )
    return [Content(content=TextBlock(text=one_line(shown)))]


def _locations(name: str, input: Json, cwd: str) -> list[Location]:
    path = input.get("path") if is_object(input) and name in _KINDS else None
    if not isinstance(path, str) or not path:
        return []
    where = Path(path).expanduser()
    return [Location(path=str(where if where.is_absolute() else Path(cwd) / where))]


def card(
    acp_id: str, name: str, input: Json, status: str, content: list[ToolCallContent] | None, cwd: str
) -> ToolCallStart:
    """A call's card as it starts (`pending` while its question waits, else `in_progress`,
    or `failed`), its locations resolved against the session's `cwd`."""
    return ToolCallStart(
        tool_call_id=acp_id,
        title=title(name, input),
        kind=_KINDS.get(name, "other"),
        status="pending" if status == "pending" else "in_progress" if status == "in_progress" else "failed",
        content=content or [],
        locations=_locations(name, input, cwd),
        raw_input=input,
    )


def result_content(output: ToolOutput, cwd: str) -> list[ToolCallContent]:
    """What the person is shown of a result: its View (a diff as ACP diffs, anything
    else as its markdown fold), else (and for a failure) its text and images."""
    items: list[ToolCallContent] = []
    if output.display is not None:
        shown = escape_view(output.display)
        diffs = diffs_of(shown, cwd)
        items.extend(diffs if diffs is not None else [Content(content=TextBlock(text=markdown(shown)))])
    if output.display is None or output.is_error:
        for part in output.parts:
            if isinstance(part, TextPart) and part.text:
                items.append(Content(content=TextBlock(text=escape(_shown(part.text)))))
            elif isinstance(part, ImagePart):
                items.append(Content(content=ImageBlock(mime_type=part.media_type, data=part.data)))
    return items
