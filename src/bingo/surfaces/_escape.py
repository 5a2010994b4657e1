"""The output sanitiser: what every string bingo did not write itself passes through on its
way to the terminal, stdout or stderr (INTERFACE.md §8).

Owns the one rule for foreign text (a plugin's, a model's, a tool's, a file's name):

  - C0 and C1 controls other than newline and tab, DEL, and ESC above all, are shown as
    `\\x1b` (four visible characters), so no escape sequence a plugin sends can set the
    window title, clear the screen or write the clipboard (OSC 52); `\\r\\n` becomes `\\n`;
  - invisible format characters (Unicode category Cf: bidi overrides and isolates, zero
    widths, the BOM, tag characters) are shown as their code point, `<U+202E>`, so text
    cannot reorder or hide itself; a lone surrogate (a file name that is not UTF-8) is shown
    as the byte it stands for, `\\xe9`, or as its code point, and never fails the write;
  - everything else, ordinary Unicode, emoji and CJK included, passes untouched. The joiners
    U+200C/U+200D pass where a script or an emoji sequence uses them (between two visible
    non-ASCII characters), and so do the tag characters of a subdivision flag.

`escape` is called on every streamed delta, so a string with nothing to escape costs a
`str.isprintable` (a precompiled search past it) and is returned as it is. `escape_view`
applies the rule to every string a View holds, for a surface to fold: the fold itself
(`wire.view.fold`) stays unescaped, because it is also what a model reads.

It does not decide where text goes, and it does not escape rich markup: the surfaces hand
rich `Text`, never markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from ..wire import CodeView, ListView, MarkdownView, StackView, TableView, TextView, View

__all__ = ["NEWLINE_SHOWN", "escape", "escape_view", "one_line"]

NEWLINE_SHOWN = "⏎"
"""How a newline is shown in text kept on one line (a command in a permission question)."""

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
"""C0 without tab and newline, DEL, C1."""
_FORMAT = (
    # Unicode category Cf as of Unicode 15.1 (a unit test checks this against the running
    # Python's unicodedata: computing it at import would cost a scan of 1.1 M code points).
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_SURROGATES = "\ud800-\udfff"
_UNSAFE = _CONTROLS + _FORMAT + _SURROGATES

_ANY = re.compile(f"[{_UNSAFE}]")
"""The fast path: a string this finds nothing in is returned as it is."""

_VISIBLE = rf"[^\s\x00-\x7f{_UNSAFE}]"
"""A visible non-ASCII character: what a joiner may sit between (no ASCII name needs one)."""
_KEPT = (
    r"\r\n"  # a CRLF line end: shown as the newline it means
    rf"|(?<={_VISIBLE})[\u200c\u200d](?={_VISIBLE})"  # ZWNJ/ZWJ inside a word or emoji sequence
    r"|\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,7}\U000e007f"  # 🏴 + tags: a subdivision flag
)
_PATTERN = re.compile(f"({_KEPT})|[{_UNSAFE}]")


def _shown(found: re.Match[str]) -> str:
    kept = found.group(1)
    if kept is not None:
        return "\n" if kept == "\r\n" else kept
    point = ord(found.group())
    if point <= 0x9F:
        return f"\\x{point:02x}"
    if 0xDC80 <= point <= 0xDCFF:  # surrogateescape: a byte of a name that is not UTF-8
        return f"\\x{point - 0xDC00:02x}"
    return f"<U+{point:04X}>"


def escape(text: str) -> str:
    """`text` with every control and invisible format character shown escaped; `text`
    itself when there is none. Idempotent: escaping twice changes nothing."""
    # Everything escaped is non-printable to str.isprintable (Cc, Cf, Cs), which runs at C
    # speed; the regex, slowed by its astral ranges, is for what it cannot clear (a newline,
    # a tab, a no-break space, a code point this Python's Unicode does not know).
    if text.isprintable() or text.replace("\n", " ").replace("\t", " ").isprintable():
        return text
    if _ANY.search(text) is None:
        return text
    return _PATTERN.sub(_shown, text)


def one_line(text: str) -> str:
    """`text` escaped and kept on one line with each newline shown as ⏎, never folded into
    a space: in a command a newline ends one command and starts another
    (`ls #'⏎touch x #'` runs `touch x`), and a person asked about it must see that."""
    return escape(text).replace("\n", NEWLINE_SHOWN)


def escape_view(view: View, also: Callable[[str], str] | None = None) -> View:
    """`view` with every string it holds escaped (text, a table's title, columns and cells,
    a code view's language), then passed through `also` when given (a room's paths), the
    same shape otherwise."""
    replace = msgspec.structs.replace

    def one(text: str) -> str:
        return also(escape(text)) if also is not None else escape(text)

    def cell(value: str | int | float | None) -> str | int | float | None:
        return one(value) if isinstance(value, str) else value

    match view:
        case TextView(text=text) | MarkdownView(text=text):
            return replace(view, text=one(text))
        case CodeView(text=text, language=language):
            return replace(view, text=one(text), language=escape(language) if language is not None else None)
        case TableView(title=title, columns=columns, rows=rows):
            return replace(
                view,
                title=one(title) if title is not None else None,
                columns=[one(c) for c in columns],
                rows=[[cell(c) for c in row] for row in rows],
            )
        case ListView(items=items):
            return replace(view, items=[escape_view(item, also) for item in items])
        case StackView(children=children):
            return replace(view, children=[escape_view(child, also) for child in children])
