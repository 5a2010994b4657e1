"""What an editor is shown of a View: its markdown fold, and a diff View as ACP diffs.

Owns the markdown fold (INTERFACE.md §7: "a View reaches the client as its markdown fold"):
a table is a markdown table, code a fenced block, a list a markdown list, a stack its
children apart, plain text with its line breaks kept. And the reading of a unified diff (the
`code` View with language `diff` that `write` and `edit` answer with) back into one ACP
`diff` per hunk: the hunk's old lines and its new lines, so the editor draws the change
itself. It does not escape: the caller escapes the View first (`escape_view`), as every
surface does.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...wire import CodeView, ListView, MarkdownView, StackView, TableView, TextView, View
from ._schema import DiffContent

__all__ = ["diffs_of", "markdown"]

_HUNK = re.compile(r"@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _cell(value: str | int | float | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(view: TableView) -> str:
    width = max([len(view.columns)] + [len(row) for row in view.rows])
    header = [_cell(c) for c in view.columns] + [""] * (width - len(view.columns))
    numeric = [
        bool(view.rows)
        and all(
            i >= len(r) or r[i] is None or (isinstance(r[i], (int, float)) and not isinstance(r[i], bool))
            for r in view.rows
        )
        for i in range(width)
    ]
    lines = [f"**{_cell(view.title)}**", ""] if view.title else []
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(" ---: " if num else " --- " for num in numeric) + "|")
    for row in view.rows:
        cells = [_cell(c) for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(view: View) -> str:
    """The markdown fold of `view`."""
    match view:
        case MarkdownView(text=text):
            return text
        case TextView(text=text):
            # Each line its own: a markdown paragraph would join them.
            return "  \n".join(text.split("\n"))
        case CodeView(text=text, language=language):
            fence = _fence(text)
            return f"{fence}{language or ''}\n{text}\n{fence}"
        case TableView():
            return _table(view)
        case ListView(items=items, ordered=ordered):
            lines: list[str] = []
            for n, item in enumerate(items, 1):
                marker = f"{n}. " if ordered else "- "
                first, *rest = markdown(item).split("\n")
                lines.append(marker + first)
                lines.extend((" " * len(marker) + line) if line else "" for line in rest)
            return "\n".join(lines)
        case StackView(children=children):
            return "\n\n".join(markdown(child) for child in children)


def diffs_of(view: View, cwd: str) -> list[DiffContent] | None:
    """The ACP diffs of a unified diff View (`code`, language `diff`), one per hunk, with
    paths made absolute from `cwd`; None when `view` is no such diff."""
    if not isinstance(view, CodeView) or view.language != "diff":
        return None
    lines = view.text.split("\n")
    if len(lines) < 3 or not lines[0].startswith("--- ") or not lines[1].startswith("+++ "):
        return None
    created = lines[0][4:] == "/dev/null"
    path = Path(lines[1][4:])
    where = str(path if path.is_absolute() else Path(cwd) / path)
    found: list[DiffContent] = []
    old: list[str] | None = None
    new: list[str] = []

    def close() -> None:
        if old is not None:
            found.append(DiffContent(path=where, old_text=None if created else "\n".join(old), new_text="\n".join(new)))

    for line in lines[2:]:
        if _HUNK.match(line):
            close()
            old, new = [], []
        elif old is None:
            continue
        elif line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        # "\ No newline at end of file" and a closing "[diff cut: …]" line are not content.
    close()
    return found or None
