"""A View as the HTML a Matrix client draws (`formatted_body`, format `org.matrix.custom.html`).

Owns the one mapping from the six View shapes to the subset of HTML the Matrix spec lists
for messages: a table is a `<table>` with a `<thead>` row, code is `<pre><code>` (with a
`language-` class a client may highlight), a list is `<ul>`/`<ol>`, a stack is its children
one after the other. Every string is escaped (`html.escape`) after the surface's own escape
of control characters, so nothing a plugin or model wrote becomes markup. Markdown is shown
as preformatted text: bingo carries no markdown renderer, and the text fold of the same
View is the message's `body` anyway.
"""

from __future__ import annotations

from html import escape as html_escape

from ...wire import CodeView, ListView, MarkdownView, StackView, TableView, TextView, View

__all__ = ["view_html"]


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
    rows = "".join("<tr>" + "".join(f"<td>{_cell(c)}</td>" for c in [*row, *[None] * (width - len(row))]) + "</tr>" for row in view.rows)
    title = f"<p><strong>{html_escape(view.title)}</strong></p>" if view.title else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def view_html(view: View) -> str:
    """The HTML of `view` (already passed through `escape_view`), every string escaped."""
    match view:
        case TextView(text=text):
            return _text(text)
        case MarkdownView(text=text):
            return f"<pre>{html_escape(text)}</pre>"
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
