"""The `write` tool: create a file, or replace one the model has read, whole.

Owns what a replacement keeps of the file it replaces: its mode, its line endings (CRLF
stays CRLF) and whether it ends with a newline, none of which `read` shows the model; and
the parent directories a new file needs. The checks before an existing file is replaced
(read in this session, unchanged on disk since) and the atomic write are `edit`'s `load` and
`save`; the ledger is `Seen` (ADR-0019).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated

import msgspec

from ..kernel.interfaces import ToolCall
from ..wire import ToolOutput, ToolTraits
from ._common import (
    BuiltinTool,
    Input,
    Seen,
    Snapshot,
    display_path,
    error_output,
    leaves_root,
    parse_input,
    real_path,
    resolve,
    root_of,
    text_output,
)
from ._diff import Diff, Span, eol_of, to_eol, unified
from ._edit import Refusal, changed_output, led_out, load, save
from ._specs import spec

__all__ = ["WriteTool", "kept"]


class WriteInput(Input, frozen=True):
    """Input of the write tool."""

    path: Annotated[
        str,
        msgspec.Meta(description="The file to write: absolute, or relative to the working directory."),
    ]
    content: Annotated[str, msgspec.Meta(description="The file's whole new content.")]


_NOTHING = Snapshot(mtime_ns=0, size=0, digest=b"")
"""What a dry run saw: nothing (it is never put in the ledger)."""


class _Written(msgspec.Struct, frozen=True):
    seen: Snapshot
    diff: Diff
    created: bool
    lines: int


class WriteTool(BuiltinTool):
    """Creates a file, or replaces one read in this session."""

    _spec = spec("write")  # as data (`_specs.py`), held equal to WriteInput's schema by a test
    # Not read-only, so the gate asks; interrupt `block`: a write is never abandoned halfway.
    _traits = ToolTraits(trusted=True)

    def __init__(self, seen: Seen | None = None, *, project: str | None = None) -> None:
        self._seen = seen if seen is not None else Seen()
        self._project = project

    async def call(self, call: ToolCall) -> ToolOutput:
        return await self._run(call, dry=False)

    async def preview(self, call: ToolCall) -> ToolOutput:
        """What `call` would do, as `call` answers it, with nothing written or made: the
        diff (against /dev/null for a new file), or the refusal."""
        return await self._run(call, dry=True)

    async def _run(self, call: ToolCall, *, dry: bool) -> ToolOutput:
        args = parse_input(WriteInput, call.input, "write")
        if isinstance(args, ToolOutput):
            return args
        path = resolve(call.cwd, args.path)
        named = Path(os.path.normpath(path))
        target, shown = real_path(path), display_path(named, call.cwd)
        root = leaves_root(named, target, (self._project, call.cwd))
        if root is not None:
            return error_output(led_out(shown, target, root, self._project, "write"))
        last = self._seen.last(call.session, target)
        try:
            written = await asyncio.to_thread(
                _write, target, shown, args.content, last, root_of(named, (self._project, call.cwd)), dry=dry
            )
        except Refusal as refusal:
            return error_output(str(refusal))
        if not dry:
            self._seen.saw(call.session, target, written.seen)
        lines = f"{written.lines} line{'' if written.lines == 1 else 's'}"
        if written.created:
            return changed_output(f"created {shown}: {lines}", written.diff)
        if not written.diff.text:
            return text_output(f"{shown} already holds this content ({lines}); nothing changed.")
        return changed_output(
            f"wrote {shown}: +{written.diff.added} −{written.diff.removed} lines ({lines} in all)", written.diff
        )


def kept(old: str, content: str) -> str:
    """`content` as it replaces `old`: with `old`'s line endings when those are mostly CRLF,
    and ending with a newline exactly when `old` did (an empty `old` or `content` keeps none
    of this)."""
    if not old or not content:
        return content
    eol = eol_of(old)
    if eol == "\r\n":
        content = to_eol(content, eol)
    if old.endswith("\n") and not content.endswith("\n"):
        content += eol
    elif not old.endswith("\n") and content.endswith("\n"):
        content = content[: -2 if content.endswith("\r\n") else -1]
    return content


def _write(
    target: Path, shown: str, content: str, last: Snapshot | None, within: str | None, *, dry: bool = False
) -> _Written:
    """Write `content` to `target`, or with `dry` only say what writing it would do: nothing
    is written and no directory made."""
    before = load(target, shown, last, "write")
    if before is None:
        if dry:
            diff = unified("", [Span(start=0, end=0, new=content, line=0)], "/dev/null", shown)
            return _Written(seen=_NOTHING, diff=diff, created=True, lines=_count(content))
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Refusal(f"{shown} cannot be written: {exc.strerror or exc}.") from None
        diff = unified("", [Span(start=0, end=0, new=content, line=0)], "/dev/null", shown)
        seen = save(target, shown, content.encode("utf-8"), within=within)
        return _Written(seen=seen, diff=diff, created=True, lines=_count(content))
    old = before.decode("utf-8", errors="replace")
    content = kept(old, content)
    diff = unified(old, _span(old, content), shown, shown)
    data = content.encode("utf-8")
    # `load` gave bytes, so `last` is what was seen of them; the same bytes are not rewritten.
    if dry:
        return _Written(seen=last or _NOTHING, diff=diff, created=False, lines=_count(content))
    seen = last if last is not None and data == before else save(target, shown, data, within=within)
    return _Written(seen=seen, diff=diff, created=False, lines=_count(content))


def _count(text: str) -> int:
    """How many lines `text` has (a last one without a newline counts)."""
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


def _span(old: str, new: str) -> list[Span]:
    """`old` → `new` as at most one span: from the start of the first line that differs to
    the end of the last, both found by comparing blocks of characters, not lines."""
    if old == new:
        return []
    prefix = _common(old, new, 0, min(len(old), len(new)), 1)
    start = old.rfind("\n", 0, prefix) + 1
    limit = min(len(old), len(new)) - start
    suffix = _common(old, new, 0, limit, -1)
    # The unchanged tail begins at a line's start in both texts: just after a newline both
    # have there, or after the next newline inside the common tail, or at their ends.
    old_end, new_end = len(old) - suffix, len(new) - suffix
    if not (old_end and new_end and old[old_end - 1] == "\n" and new[new_end - 1] == "\n"):
        found = old.find("\n", old_end, len(old))
        moved = len(old) - old_end if found < 0 else found + 1 - old_end
        old_end, new_end = old_end + moved, new_end + moved
    return [Span(start=start, end=old_end, new=new[start:new_end], line=old.count("\n", 0, start))]


_STRIDE = 1 << 16
"""Characters compared at a time while looking for where two texts begin to differ."""


def _common(a: str, b: str, done: int, limit: int, way: int) -> int:
    """How many characters `a` and `b` share at their start (`way` 1) or end (-1), at most
    `limit`: whole blocks compared first, then the block that differs halved."""

    def same(lo: int, hi: int) -> bool:
        if way == 1:
            return a[lo:hi] == b[lo:hi]
        return a[len(a) - hi : len(a) - lo] == b[len(b) - hi : len(b) - lo]

    while done < limit and same(done, min(done + _STRIDE, limit)):
        done = min(done + _STRIDE, limit)
    hi = min(done + _STRIDE, limit)
    while done < hi:
        middle = (done + hi + 1) // 2
        if same(done, middle):
            done = middle
        else:
            hi = middle - 1
    return done
