"""View: one value a person sees, drawn by every surface, with a text fold for all of them.

Owns the six View shapes and their fold to plain text (what `--print`, a pipe and an IM
channel show). It does not draw anything richer: the terminal surface does that.
"""

from typing import Annotated, TypeAlias

import msgspec

from ._base import Wire

__all__ = [
    "CodeView",
    "ListView",
    "MarkdownView",
    "StackView",
    "TableView",
    "TextView",
    "View",
    "fold",
]

Cell: TypeAlias = str | int | float | None


class _View(Wire, frozen=True, tag_field="type"):
    pass


class TextView(_View, frozen=True, tag="text"):
    """Plain text."""

    text: str


class MarkdownView(_View, frozen=True, tag="markdown"):
    """Markdown, rendered where the surface can."""

    text: str


class CodeView(_View, frozen=True, tag="code"):
    """Source code, highlighted where the surface can."""

    text: str
    language: str | None = None


class TableView(_View, frozen=True, tag="table"):
    """A table; folds to aligned columns under a header row."""

    columns: list[str]
    rows: list[list[Cell]]
    title: str | None = None


class ListView(_View, frozen=True, tag="list"):
    """A list of views, bulleted or numbered."""

    items: "list[View]"
    ordered: bool = False


class StackView(_View, frozen=True, tag="stack"):
    """Views one above the other."""

    children: "list[View]"


View: TypeAlias = Annotated[
    TextView | MarkdownView | CodeView | TableView | ListView | StackView,
    msgspec.Meta(description="Something for a person to see. Every View has a text fold."),
]


def _cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _is_number(value: Cell) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _fold_table(view: TableView) -> str:
    width = max([len(view.columns)] + [len(row) for row in view.rows])
    header = view.columns + [""] * (width - len(view.columns))
    body = [[_cell(c) for c in row] + [""] * (width - len(row)) for row in view.rows]
    numeric = [
        bool(view.rows) and all(i >= len(r) or r[i] is None or _is_number(r[i]) for r in view.rows)
        for i in range(width)
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(width)]

    def line(cells: list[str]) -> str:
        out = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)]
        return "  ".join(out).rstrip()

    lines = [view.title] if view.title else []
    lines.append(line(header))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(line(row) for row in body)
    return "\n".join(lines)


def fold(view: View) -> str:
    """The plain-text fold of a view: what every surface without drawing shows."""
    match view:
        case TextView(text=text) | MarkdownView(text=text) | CodeView(text=text):
            return text
        case TableView():
            return _fold_table(view)
        case ListView(items=items, ordered=ordered):
            lines: list[str] = []
            for n, item in enumerate(items, 1):
                marker = f"{n}. " if ordered else "- "
                first, *rest = fold(item).split("\n") or [""]
                lines.append(marker + first)
                lines.extend(" " * len(marker) + r for r in rest)
            return "\n".join(lines)
        case StackView(children=children):
            return "\n\n".join(fold(child) for child in children)
