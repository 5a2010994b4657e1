"""The change `write` and `edit` make, as the person sees it: a bounded unified diff, and the
counts the model is told (`+3 −1 lines`); and the line endings a change keeps.

Owns the diff of a text against the same text with some line-aligned regions replaced
(`Span`s), in time linear in the file plus the size of the regions: lines outside the spans
are never compared, so a one-line edit of a 10 MB file diffs a few lines. Lines are split on
`\\n` only (as `read` splits them), and a region is compared line by line: its common first
and last lines are trimmed, and what is left is matched by difflib when it is small enough,
else shown as one replacement. It does not read or write files.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

import msgspec

__all__ = ["CONTEXT", "MAX_DIFF_LINE", "MAX_DIFF_LINES", "Diff", "Span", "eol_of", "lines_of", "to_eol", "unified"]

CONTEXT = 3
"""Unchanged lines shown around each change, as `diff -u` shows them."""
MAX_DIFF_LINES = 200
"""Lines of diff shown at most (headers included); the rest is counted in a closing line."""
MAX_DIFF_LINE = 400
"""Characters shown of one diff line; the rest is replaced by a marker."""
_MATCHED = 250_000
"""The largest product of a region's remaining old and new line counts that difflib matches
(its cost grows with that product); past it the region is one replacement."""

_Op = tuple[str, int, int, int, int]
"""An opcode as difflib gives it: tag, old lines i1..i2, new lines j1..j2."""


class Span(msgspec.Struct, frozen=True):
    """`old[start:end]`, which begins at a line's start and ends after a `\\n` (or at the end of
    the text), replaced by `new`, which ends after a `\\n` too unless it ends the text;
    `line` is the 0-based number of the line at `start`."""

    start: int
    end: int
    new: str
    line: int


class Diff(msgspec.Struct, frozen=True):
    """A change: lines added and removed, and the unified diff, cut at `MAX_DIFF_LINES`."""

    added: int
    removed: int
    text: str


def lines_of(text: str) -> list[str]:
    """`text`'s lines, each with its `\\n`; a last line without one is kept as it is."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def eol_of(text: str) -> str:
    """The line ending most of `text`'s lines end with: `\\r\\n` or `\\n` (a tie, or none, `\\n`)."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf > text.count("\n") - crlf else "\n"


def to_eol(text: str, eol: str) -> str:
    """`text` with every line ending (`\\n` or `\\r\\n`) made `eol`."""
    if eol == "\r\n":
        return text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text.replace("\r\n", "\n")


def unified(old: str, spans: list[Span], old_name: str, new_name: str) -> Diff:
    """The diff of `old` against `old` with each of `spans` (in order, not overlapping)
    replaced, headed `--- old_name` / `+++ new_name`. Unchanged lines between spans are never
    split or compared: only the few shown as context are taken from `old`."""
    pieces: list[_Piece] = []
    added = removed = 0
    pos = line = shift = 0  # where the last span ended: offset, old line; new minus old line
    for span in spans:
        if span.line > line:
            pieces.append(_between(old, pos, span.start, line, line + shift, span.line - line))
        a, b = lines_of(old[span.start : span.end]), lines_of(span.new)
        for tag, i1, i2, j1, j2 in _opcodes(a, b):
            at_a, at_b = span.line + i1, span.line + shift + j1
            if tag == "equal":
                pieces.append(
                    _equal(at_a, at_b, i2 - i1, a[i1 : min(i2, i1 + 2 * CONTEXT)], a[max(i1, i2 - CONTEXT) : i2])
                )
            else:
                removed += i2 - i1
                added += j2 - j1
                pieces.append(_Piece(tag=tag, a=at_a, b=at_b, removed=a[i1:i2], added=b[j1:j2]))
        shift += len(b) - len(a)
        line, pos = span.line + len(a), span.end
    if not added and not removed:
        return Diff(added=0, removed=0, text="")
    after = _lines_from(old, pos, CONTEXT)
    if after:
        pieces.append(_equal(line, line + shift, len(after), after, after))
    out = _Out()
    out.add(f"--- {old_name}")
    out.add(f"+++ {new_name}")
    for hunk in _hunks(_coalesced(pieces)):
        _emit(out, hunk)
    return Diff(added=added, removed=removed, text=out.text())


class _Piece(msgspec.Struct, frozen=True):
    """A run of the diff: equal lines, or lines removed and added, at old line `a` and new
    line `b` (0-based). An equal run keeps only the lines a hunk may show of it: `head`, its
    first lines (all of them when it has at most 2 × CONTEXT), and `tail`, its last."""

    tag: str
    a: int
    b: int
    size: int = 0
    head: list[str] = []
    tail: list[str] = []
    removed: list[str] = []
    added: list[str] = []


def _equal(a: int, b: int, size: int, head: list[str], tail: list[str]) -> _Piece:
    return _Piece(tag="equal", a=a, b=b, size=size, head=head[: 2 * CONTEXT], tail=tail[-CONTEXT:] if CONTEXT else [])


def _between(old: str, start: int, end: int, a: int, b: int, size: int) -> _Piece:
    """The unchanged lines of `old[start:end]` (`size` of them), fetched at its two ends only."""
    head = _lines_from(old, start, min(size, 2 * CONTEXT))
    tail: list[str] = []
    at = end
    while len(tail) < min(size, CONTEXT) and at > start:
        begin = old.rfind("\n", start, at - 1) + 1 or start
        tail.append(old[begin:at])
        at = begin
    tail.reverse()
    return _equal(a, b, size, head, tail)


def _lines_from(old: str, start: int, count: int) -> list[str]:
    lines: list[str] = []
    while len(lines) < count and start < len(old):
        found = old.find("\n", start)
        end = len(old) if found < 0 else found + 1
        lines.append(old[start:end])
        start = end
    return lines


def _coalesced(pieces: list[_Piece]) -> list[_Piece]:
    """`pieces` with each run of equal pieces made one."""
    out: list[_Piece] = []
    for piece in pieces:
        last = out[-1] if out else None
        if last is None or last.tag != "equal" or piece.tag != "equal":
            out.append(piece)
            continue
        # The first's head is all of it when it is short, the second's tail likewise.
        head = last.head + (piece.head if last.size < 2 * CONTEXT else [])
        tail = (last.tail if piece.size < CONTEXT else []) + piece.tail
        out[-1] = _equal(last.a, last.b, last.size + piece.size, head, tail)
    return out


def _hunks(pieces: list[_Piece]) -> Iterator[list[_Piece]]:
    """The pieces in hunks, CONTEXT equal lines around each change (as difflib groups)."""
    hunk: list[_Piece] = []
    for n, piece in enumerate(pieces):
        if piece.tag != "equal":
            hunk.append(piece)
            continue
        first, last = n == 0, n == len(pieces) - 1
        if first:
            hunk.append(
                _equal(
                    piece.a + piece.size - len(piece.tail),
                    piece.b + piece.size - len(piece.tail),
                    len(piece.tail),
                    piece.tail,
                    piece.tail,
                )
            )
        elif last or piece.size > 2 * CONTEXT:
            shown = piece.head[:CONTEXT]
            hunk.append(_equal(piece.a, piece.b, len(shown), shown, shown))
            yield hunk
            hunk = []
            if not last:
                skip = piece.size - len(piece.tail)
                hunk.append(_equal(piece.a + skip, piece.b + skip, len(piece.tail), piece.tail, piece.tail))
        else:
            hunk.append(piece)
    if any(piece.tag != "equal" for piece in hunk):
        yield hunk


def _range(start: int, length: int) -> str:
    """A hunk header's range, 1-based, as `diff -u` writes it."""
    if length == 1:
        return str(start + 1)
    return f"{start if not length else start + 1},{length}"


def _emit(out: _Out, hunk: list[_Piece]) -> None:
    old_size = sum(p.size if p.tag == "equal" else len(p.removed) for p in hunk)
    new_size = sum(p.size if p.tag == "equal" else len(p.added) for p in hunk)
    out.add(f"@@ -{_range(hunk[0].a, old_size)} +{_range(hunk[0].b, new_size)} @@")
    for piece in hunk:
        if piece.tag == "equal":
            _lines(out, " ", piece.head)
            continue
        _lines(out, "-", piece.removed)
        _lines(out, "+", piece.added)


def _lines(out: _Out, mark: str, lines: list[str]) -> None:
    """`lines` marked; once the diff is full only counted, so a 10 MB file costs no loop."""
    for n, line in enumerate(lines):
        if out.full():
            out.cut += len(lines) - n + (not lines[-1].endswith("\n"))
            return
        if line.endswith("\n"):
            out.add(mark + (line[:-2] if line.endswith("\r\n") else line[:-1]))
        else:
            out.add(mark + line)
            out.add("\\ No newline at end of file")


class _Out:
    """The diff's lines, kept up to `MAX_DIFF_LINES` and counted past it."""

    __slots__ = ("cut", "lines")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.cut = 0

    def full(self) -> bool:
        return len(self.lines) >= MAX_DIFF_LINES

    def add(self, line: str) -> None:
        if self.full():
            self.cut += 1
            return
        if len(line) > MAX_DIFF_LINE:
            line = f"{line[:MAX_DIFF_LINE]}… [line cut: {len(line) - MAX_DIFF_LINE} more characters]"
        self.lines.append(line)

    def text(self) -> str:
        if self.cut:
            return "\n".join([*self.lines, f"[diff cut: {self.cut} more lines]"])
        return "\n".join(self.lines)


def _opcodes(a: list[str], b: list[str]) -> list[_Op]:
    """difflib's opcodes for `a` → `b`, after trimming their common first and last lines."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    a_end, b_end = len(a) - tail, len(b) - tail
    ops: list[_Op] = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    middle_a, middle_b = a_end - head, b_end - head
    if middle_a and middle_b and (middle_a > 1 or middle_b > 1) and middle_a * middle_b <= _MATCHED:
        matcher = difflib.SequenceMatcher(None, a[head:a_end], b[head:b_end], autojunk=False)
        ops.extend((tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in matcher.get_opcodes())
    elif middle_a or middle_b:
        tag = "replace" if middle_a and middle_b else ("delete" if middle_a else "insert")
        ops.append((tag, head, a_end, head, b_end))
    if tail:
        ops.append(("equal", a_end, len(a), b_end, len(b)))
    return ops
