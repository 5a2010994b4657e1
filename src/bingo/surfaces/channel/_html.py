"""A View as the HTML a Matrix client draws (`formatted_body`, format `org.matrix.custom.html`).

Owns the one mapping from the six View shapes to the subset of HTML the Matrix spec lists
for messages: a table is a `<table>` with a `<thead>` row, code is `<pre><code>` (with a
`language-` class a client may highlight), a list is `<ul>`/`<ol>`, a stack is its children
one after the other. Every string is escaped (`html.escape`) after the surface's own escape
of control characters, so nothing a plugin or model wrote becomes markup.

Markdown (the model's answers, a `markdown` View) is drawn by markdown-it-py, which bingo
has already (rich's own markdown parser), in its CommonMark preset with tables, raw HTML
off (an HTML tag in the text is shown as the text it is), images off (a Matrix client loads
only `mxc://` images; the link is kept) and links only of the schemes markdown-it deems
safe. It is imported at the first markdown a room is sent. Text with no markup at all gets
no HTML: its `body` says it all (ADR-0037).
"""

from __future__ import annotations

from html import escape as html_escape
from typing import TYPE_CHECKING

from ...wire import CodeView, ListView, MarkdownView, StackView, TableView, TextView, View

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["markdown_html", "view_html"]

_markdown: list[MarkdownIt] = []
"""The one parser, made at first use."""

_PLAIN = frozenset({"text", "softbreak"})
"""The inline tokens of text with no markup."""


def _parser() -> MarkdownIt:
    if not _markdown:
        from markdown_it import MarkdownIt

        # html off: a tag in the text is text; breaks: a line break in a chat message is one.
        _markdown.append(MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table").disable("image"))
    return _markdown[0]


def markdown_html(text: str) -> str | None:
    """The HTML of markdown `text` (already passed through `escape`), or None when it has no
    markup (plain paragraphs: the `body` is the message then)."""
    parser = _parser()
    tokens = parser.parse(text)
    plain = all(
        token.type in ("paragraph_open", "paragraph_close")
        or (token.type == "inline" and all(child.type in _PLAIN for child in token.children or []))
        for token in tokens
    )
    if plain:
        return None
    return parser.renderer.render(tokens, parser.options, {}).strip()


def _text(text: str) -> str:
    """Plain text as HTML: escaped, with its line breaks kept."""
    return html_escape(text).replace("\n", "<br/>")


def _cell(value: str | int | float | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return html_escape(str(value))


def _table(view: TableView) -> str:
    width = max([len(view.columns)] + [len(row) for row in view.rows])
    head = "".join(f"<th>{_cell(c)}</th>" for c in [*view.columns, *[""] * (width - len(view.columns))])
    rows = "".join(
        "<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in [*row, *[None] * (width - len(row))]) + "</tr>"
        for row in view.rows
    )
    title = f"<p><strong>{html_escape(view.title)}</strong></p>" if view.title else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def view_html(view: View) -> str:
    """The HTML of `view` (already passed through `escape_view`), every string escaped."""
    match view:
        case TextView(text=text):
            return _text(text)
        case MarkdownView(text=text):
            return markdown_html(text) or _text(text)
        case CodeView(text=text, language=language):
            kind = f' class="language-{html_escape(language, quote=True)}"' if language else ""
            return f"<pre><code{kind}>{html_escape(text)}</code></pre>"
        case TableView():
            return _table(view)
        case ListView(items=items, ordered=ordered):
            tag = "ol" if ordered else "ul"
            return f"<{tag}>" + "".join(f"<li>{view_html(item)}</li>" for item in items) + f"</{tag}>"
        case StackView(children=children):
            return "".join(f"<div>{view_html(child)}</div>" for child in children)
