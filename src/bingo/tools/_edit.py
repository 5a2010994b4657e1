"""The `edit` tool: replace an exact string in a text file the model has read.

Owns the match (exact, once unless `replaceAll`; an LF `oldString` matches the same lines of
a CRLF file), the refusals the model can act on (absent, not unique, nothing to change, not
read in this session, changed on disk since, binary, not UTF-8, too large), the atomic
replacement that keeps the file's mode and line endings, and what both tools check before
they change a file that exists (`load`, which `write` uses too: the file on the disk first,
whoever gives its bytes) and where they may write (`led_out`: never through a link that
leads out of the project or working directory the path is named in, ADR-0026). The ledger it checks is
`Seen` (ADR-0019); the diff is `_diff`'s. Whether the call may run is the gate's business.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
from pathlib import Path
from typing import Annotated

import msgspec

from ..kernel.atomic import write_atomic
from ..kernel.files import open_regular
from ..kernel.interfaces import ToolCall
from ..wire import CodeView, TextPart, ToolOutput, ToolTraits
from ._common import (
    BINARY_SNIFF,
    BuiltinTool,
    Input,
    Seen,
    Snapshot,
    digest,
    display_path,
    error_output,
    is_binary,
    leaves_root,
    parse_input,
    real_path,
    resolve,
    root_of,
    unopened,
)
from ._diff import Diff, Span, eol_of, to_eol, unified
from ._files import FILES, Declined
from ._specs import spec

__all__ = ["MAX_FILE", "EditTool", "Refusal", "changed_output", "led_out", "load", "save"]

MAX_FILE = 64 * 1024 * 1024
"""The largest file `edit` and `write` change: both hold it in memory twice, as bytes and text."""


_NUMBERED = re.compile(r"(?: *\d+\t[^\n]*(?:\n|$))+\Z")
"""Text whose every line starts like a line of read's output (spaces, a number, a tab)."""


class EditInput(Input, frozen=True):
    """Input of the edit tool."""

    path: Annotated[
        str,
        msgspec.Meta(description="The file to change: absolute, or relative to the working directory. Read it first."),
    ]
    old_string: Annotated[
        str,
        msgspec.Meta(
            description=(
                "The exact text to replace, as the file holds it: whitespace and indentation "
                "included, without read's line-number prefix. It must occur once, unless replaceAll."
            )
        ),
    ]
    new_string: Annotated[str, msgspec.Meta(description="The text to put in its place (different from oldString).")]
    replace_all: Annotated[bool, msgspec.Meta(description="Replace every occurrence of oldString, not just one.")] = (
        False
    )


class Refusal(Exception):
    """Why a file is not changed; its text is the error output."""


class _Edited(msgspec.Struct, frozen=True):
    seen: Snapshot
    diff: Diff
    replacements: int


class EditTool(BuiltinTool):
    """Replaces an exact string in a text file read in this session."""

    _spec = spec("edit")  # as data (`_specs.py`), held equal to EditInput's schema by a test
    # Not read-only, so the gate asks; interrupt `block`: a replacement is never abandoned
    # halfway, and the model is told what happened to the file.
    _traits = ToolTraits(trusted=True)

    def __init__(self, seen: Seen | None = None, *, project: str | None = None) -> None:
        self._seen = seen if seen is not None else Seen()
        self._project = project

    async def call(self, call: ToolCall) -> ToolOutput:
        return await self._run(call, dry=False)

    async def preview(self, call: ToolCall) -> ToolOutput:
        """What `call` would do, as `call` answers it, with nothing written: the diff, or
        the refusal. It reads what the call would read, and no more (the same checks first)."""
        return await self._run(call, dry=True)

    async def _run(self, call: ToolCall, *, dry: bool) -> ToolOutput:
        args = parse_input(EditInput, call.input, "edit")
        if isinstance(args, ToolOutput):
            return args
        if not args.old_string:
            return error_output(
                "edit: oldString is empty. Give the exact text to replace; to create a file or replace all of it, use write."
            )
        if args.old_string == args.new_string:
            return error_output(
                "edit: oldString and newString are the same, so there is nothing to change. Give newString the text that should replace oldString."
            )
        path = resolve(call.cwd, args.path)
        named = Path(os.path.normpath(path))
        target, shown = real_path(path), display_path(named, call.cwd)
        root = leaves_root(named, target, (self._project, call.cwd))
        if root is not None:
            return error_output(led_out(shown, target, root, self._project, "edit"))
        last = self._seen.last(call.session, target)
        try:
            edited = await asyncio.to_thread(
                _edit, target, shown, args, last, root_of(named, (self._project, call.cwd)), dry=dry
            )
        except Refusal as refusal:
            return error_output(str(refusal))
        if not dry:
            self._seen.saw(call.session, target, edited.seen)
        n = edited.replacements
        said = (
            f"edited {shown}: {n} replacement{'' if n == 1 else 's'}, +{edited.diff.added} −{edited.diff.removed} lines"
        )
        return changed_output(said, edited.diff)


def led_out(shown: str, target: Path, root: str, project: str | None, verb: str) -> str:
    """What the model is told when a link leads `shown` out of `root` (ADR-0026)."""
    where = "the project" if root == project else "the working directory"
    return (
        f"{shown} leads to {target}, outside {where} ({root}): a symbolic link on the way (the file or a "
        f"directory above it) points out of it, and {verb} never follows a link out of {where}. "
        "If that file is the one meant, name it by its own path."
    )


def changed_output(said: str, diff: Diff) -> ToolOutput:
    """A change's answer: `said` for the model, and the diff for the person."""
    display = CodeView(text=diff.text, language="diff") if diff.text else None
    return ToolOutput(parts=[TextPart(text=said)], display=display)


def load(target: Path, shown: str, last: Snapshot | None, verb: str) -> bytes | None:
    """The bytes of `target` before `verb` changes it, or None when there is no such file.
    The file on the disk is checked first, whoever gives the bytes (an editor's buffer, or
    the disk when there is no editor or it declines the file): one path, the same checks.

    Raises:
        Refusal: it is not a regular file, it is read-only or too large, it has not been seen in this
            session (`last` is None), or its bytes are no longer the ones seen.
    """
    try:
        # Non-blocking, so a fifo is refused instead of waiting for a writer forever.
        fd, info = open_regular(target)
    except FileNotFoundError:
        fd, info = None, None
    except OSError as exc:
        raise Refusal(unopened(exc, shown, only=f"{verb} changes regular files only")) from None
    with contextlib.ExitStack() as closing:
        file = closing.enter_context(open(fd, "rb")) if fd is not None else None
        if info is not None:
            # The rename would replace a file its permissions protect; root's access() says
            # yes to everything, so no write bit at all counts as read-only too.
            if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
                raise Refusal(
                    f"{shown} is read-only ({stat.filemode(info.st_mode)}), so {verb} leaves it as it is. "
                    "If it should change, make it writable first (chmod u+w)."
                )
            last = _seen(info.st_size, shown, last, verb)
        files = FILES.get()  # an editor's own files, when it offers them (tools._files)
        if files is not None:
            try:
                data = files.read(target)
            except Declined:
                pass  # the disk's, below
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise Refusal(f"{shown} cannot be read: {exc.strerror or exc}.") from None
            else:
                return _unchanged(data, shown, _seen(len(data), shown, last, verb), verb)
        if file is None:
            return None
        try:
            data = file.read(MAX_FILE + 1)
        except OSError as exc:
            raise Refusal(f"{shown} cannot be read: {exc.strerror or exc}.") from None
        return _unchanged(data, shown, _seen(len(data), shown, last, verb), verb)


def _unchanged(data: bytes, shown: str, last: Snapshot, verb: str) -> bytes:
    """`data`, when they are the bytes `last` saw; Refusal otherwise."""
    if digest(data) != last.digest:
        then = (
            f"{last.size:,} bytes then, {len(data):,} now"
            if last.size != len(data)
            else "its bytes differ from what you read"
        )
        raise Refusal(f"{shown} has changed on disk since you last read it ({then}). Read it again, then {verb} it.")
    return data


def _seen(size: int, shown: str, last: Snapshot | None, verb: str) -> Snapshot:
    """`last`, when a file of `size` bytes may be changed; Refusal when it is too large or
    has not been seen in this session."""
    if size > MAX_FILE:
        raise Refusal(
            f"{shown} is {size:,} bytes; {verb} changes files up to {MAX_FILE:,} bytes. Use bash to change it."
        )
    if last is None:
        raise Refusal(
            f"{shown} has not been read in this session. Read it first (read {shown}), then {verb} it: "
            f"{verb} never changes a file you have not seen."
        )
    return last


def save(target: Path, shown: str, data: bytes, *, within: str | None = None) -> Snapshot:
    """Replace `target` with `data` atomically, its mode kept (`kernel.atomic.write_atomic`,
    never through a link, and with `within` never outside that root); what was written, as
    seen. An editor's files take it when the editor offers them and does not decline it.

    Raises:
        Refusal: it cannot be written.
    """
    files = FILES.get()
    if files is not None:
        try:
            files.write(target, data)
        except Declined:
            pass  # the disk's, below
        except OSError as exc:
            raise Refusal(f"{shown} cannot be written: {exc.strerror or exc}.") from None
        else:
            return Snapshot(
                mtime_ns=0, size=len(data), digest=digest(data)
            )  # an editor's buffer has no time of its own
    try:
        write_atomic(target, data, within=Path(within) if within is not None else None)
        stat = os.stat(target)
    except OSError as exc:
        raise Refusal(f"{shown} cannot be written: {exc.strerror or exc}.") from None
    return Snapshot(mtime_ns=stat.st_mtime_ns, size=stat.st_size, digest=digest(data))


def _edit(
    target: Path, shown: str, args: EditInput, last: Snapshot | None, within: str | None, *, dry: bool = False
) -> _Edited:
    data = load(target, shown, last, "edit")
    if data is None:
        raise Refusal(
            f"{shown} does not exist. Check the path (relative paths start at the working directory), "
            "or use write to create it."
        )
    if is_binary(data[:BINARY_SNIFF]):
        raise Refusal(f"{shown} is a binary file; edit changes text files only.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refusal(
            f"{shown} is not UTF-8 text (byte {exc.start:,} is not); edit changes UTF-8 files only. "
            "Use bash to change it, or write to replace it whole."
        ) from None
    old, new = _matched(text, args.old_string, args.new_string)
    first = text.find(old)
    if first < 0 and _NUMBERED.match(args.old_string):
        raise Refusal(
            f"{shown}: oldString was not found: it starts with read's line-number prefix (the number and "
            "the tab before each line), which is not in the file. Leave the prefix out and call edit again."
        )
    if first < 0:
        raise Refusal(
            f"{shown}: oldString was not found. It must match the file exactly, whitespace and "
            "indentation included, without read's line-number prefix; read the file again and copy the text to change."
        )
    if not args.replace_all and text.find(old, first + len(old)) >= 0:
        count = text.count(old)
        raise Refusal(
            f"{shown}: oldString occurs {count} times. Include more of the surrounding lines so that it "
            f"occurs once, or pass replaceAll: true to replace all {count}."
        )
    if old == new:
        raise Refusal(
            f"{shown}: oldString and newString differ only in line endings, and edit keeps the file's "
            "(CRLF). Use bash to change line endings."
        )
    positions = _positions(text, old, first) if args.replace_all else [first]
    # Replaced in the bytes, so the changed text is never encoded whole: a valid UTF-8 string
    # matches valid UTF-8 bytes exactly where it matches the text. One replacement in an
    # ASCII file (where offsets in the text are offsets in the bytes) is one copy, no search.
    old_bytes, new_bytes = old.encode("utf-8"), new.encode("utf-8")
    if len(positions) == 1 and len(text) == len(data):
        whole = memoryview(data)
        changed = b"".join((whole[:first], new_bytes, whole[first + len(old_bytes) :]))
    else:
        changed = data.replace(old_bytes, new_bytes, -1 if args.replace_all else 1)
    diff = unified(text, _spans(text, positions, len(old), new), shown, shown)
    if dry:  # nothing written: what the call would see is what it saw already
        return _Edited(seen=last or Snapshot(mtime_ns=0, size=0, digest=b""), diff=diff, replacements=len(positions))
    seen = save(target, shown, changed, within=within)
    return _Edited(seen=seen, diff=diff, replacements=len(positions))


def _matched(text: str, old: str, new: str) -> tuple[str, str]:
    """`old` and `new` as they are to be matched and put in `text`, line endings kept.

    `read` shows lines without their `\\r`, so an `old` with LF line breaks that is absent
    from a file with CRLF ones is matched as CRLF; `new` then gets CRLF too, and so it does
    whenever the file's lines mostly end in CRLF and `old` holds no lone LF (a one-line
    `old` included), so that inserted lines end like their neighbours."""
    # A one-character search is a memchr: a file with no CR at all costs next to nothing.
    if "\r" not in text or "\r\n" not in text:
        return old, new
    if "\n" in old and old not in text:
        as_crlf = to_eol(old, "\r\n")
        if as_crlf in text:
            return as_crlf, to_eol(new, "\r\n")
    if old.count("\n") == old.count("\r\n") and eol_of(text) == "\r\n":
        return old, to_eol(new, "\r\n")
    return old, new


def _positions(text: str, old: str, first: int) -> list[int]:
    """Where `old` occurs in `text` from `first` on, left to right and not overlapping (as
    `str.replace` finds them)."""
    found: list[int] = []
    at = first
    while at >= 0:
        found.append(at)
        at = text.find(old, at + len(old))
    return found


def _line_end(text: str, at: int) -> int:
    """The offset just past the line holding `at` (its `\\n` included), or the text's end."""
    found = text.find("\n", at)
    return len(text) if found < 0 else found + 1


def _spans(text: str, positions: list[int], length: int, new: str) -> list[Span]:
    """The whole lines each replacement touches, as spans of `text`; replacements that share
    a line share a span. Linear in the text: line numbers are counted on from the last span."""
    spans: list[Span] = []
    line = counted = 0  # the line number at offset `counted`, where the last span ended
    i = 0
    while i < len(positions):
        at = positions[i]
        # Looked for back to the last span's end only, so a long line is not walked again.
        start = text.rfind("\n", counted, at) + 1 or counted
        line += text.count("\n", counted, start)
        parts = [text[start:at], new]
        cursor = at + length
        end = _line_end(text, cursor)
        i += 1
        while i < len(positions) and positions[i] < end:
            parts += [text[cursor : positions[i]], new]
            cursor = positions[i] + length
            end = _line_end(text, cursor)
            i += 1
        parts.append(text[cursor:end])
        spans.append(Span(start=start, end=end, new="".join(parts), line=line))
        line += text.count("\n", start, end)
        counted = end
    return spans
