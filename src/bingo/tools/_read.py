"""The `read` tool: a window of a text file's lines, numbered like `cat -n`.

Owns the window (a 1-based first line and a line count), the numbering, the truncation of
overlong lines (read a bounded piece at a time, so a line costs at most that however long
it is) and the polite refusals (missing file, directory, binary file, anything but a
regular file: a FIFO, a device, a file of /proc or /sys, opened without blocking by
`kernel.files.open_regular` whether the bytes then come from the disk or an editor). A whole read
is recorded in the session's `Seen` ledger, so `write` and `edit` may then change the file.
It does not write, list or search files: `glob` and `grep` do the finding.
"""

from __future__ import annotations

import codecs
import io
import os
import threading
from pathlib import Path
from typing import Annotated, BinaryIO

import msgspec

from ..kernel.files import open_regular
from ..kernel.interfaces import ToolCall
from ..wire import ToolOutput, ToolTraits
from ._common import (
    BINARY_SNIFF,
    BuiltinTool,
    Hash,
    Input,
    Seen,
    Snapshot,
    error_output,
    hasher,
    in_thread,
    is_binary,
    parse_input,
    real_path,
    resolve,
    text_output,
    unopened,
)
from ._files import FILES, Declined
from ._specs import spec

__all__ = ["ReadTool"]

DEFAULT_LIMIT = 2000
"""Lines shown when the model does not say how many."""

MAX_LINE = 2000
"""Characters kept of one line; the rest is replaced by a marker."""

_BLOCK = 1 << 20
"""Bytes read at a time past the window, where lines are only counted."""

_PIECE = 1 << 16
"""Bytes of one line read at a time in the window and before it: what a line costs, however
long it is (one 500 MB line is read as 8 000 pieces, its first MAX_LINE characters kept)."""


class ReadInput(Input, frozen=True):
    """Input of the read tool."""

    path: Annotated[
        str,
        msgspec.Meta(description="The file to read: absolute, or relative to the working directory."),
    ]
    offset: Annotated[int, msgspec.Meta(ge=1, description="The 1-based number of the first line to show.")] = 1
    limit: Annotated[int, msgspec.Meta(ge=1, description=f"How many lines to show (default {DEFAULT_LIMIT}).")] = (
        DEFAULT_LIMIT
    )


class _Window(msgspec.Struct, frozen=True):
    """The lines of a file shown, and how many it has in all."""

    lines: list[str]
    total: int
    seen: Snapshot | None
    """What was read of the file, when all of it was (not cut short by a stop)."""


class _Refusal(Exception):
    """Why a file is not read; its text is the error output."""


class ReadTool(BuiltinTool):
    """Reads a text file's lines, numbered."""

    _spec = spec("read")  # as data (`_specs.py`), held equal to ReadInput's schema by a test
    _traits = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")

    def __init__(self, seen: Seen | None = None) -> None:
        self._seen = seen if seen is not None else Seen()

    async def call(self, call: ToolCall) -> ToolOutput:
        args = parse_input(ReadInput, call.input, "read")
        if isinstance(args, ToolOutput):
            return args
        path = resolve(call.cwd, args.path)
        try:
            window = await in_thread(lambda stop: _read(path, args.offset, args.limit, stop))
        except _Refusal as refusal:
            return error_output(str(refusal))
        if window.seen is not None:
            self._seen.saw(call.session, real_path(path), window.seen)
        return text_output(_render(args.path, window, args.offset))


def _read(path: Path, offset: int, limit: int, stop: threading.Event) -> _Window:
    """Lines `offset`..`offset+limit-1` of `path`, and the file's line count."""
    try:
        raw, mtime_ns, size = _source(path)
        with raw:
            if is_binary(raw.read(BINARY_SNIFF)):
                raise _Refusal(
                    f"{path} is a binary file ({size} bytes); read shows text files only. "
                    "Use bash (e.g. `file` or `xxd | head`) to inspect it."
                )
            raw.seek(0)
            hashed = hasher()
            lines, total, whole = _lines(raw, offset, limit, stop, hashed)
            seen = Snapshot(mtime_ns=mtime_ns, size=size, digest=hashed.digest()) if whole else None
            return _Window(lines=lines, total=total, seen=seen)
    except FileNotFoundError:
        raise _Refusal(
            f"{path} does not exist. Check the path (relative paths start at the working "
            "directory), or use glob to find the file."
        ) from None
    except OSError as exc:
        raise _Refusal(
            unopened(exc, str(path), only="read shows regular files only", directory=" Use glob to list its files.")
        ) from None


def _source(path: Path) -> tuple[BinaryIO, int, int]:
    """Where the bytes come from, with the file's time and size: the editor's buffer when it
    offers one, else the disk's file. Either way the file on the disk, when there is one, is
    opened the one way first (`kernel.files.open_regular`: never blocking, a regular file
    not of /proc or /sys), so an editor declining it changes nothing about what is read.

    Raises:
        FileNotFoundError, NotRegular, OSError: as `open_regular` (and the editor) say.
    """
    try:
        fd, info = open_regular(path)
    except FileNotFoundError:
        fd, info = None, None
    files = FILES.get()  # an editor's own files, when it offers them (tools._files)
    if files is not None:
        try:
            data = files.read(path)
        except Declined:
            pass  # the disk's, below
        except BaseException:
            if fd is not None:
                os.close(fd)
            raise
        else:
            if fd is not None:
                os.close(fd)
            return io.BytesIO(data), 0, len(data)  # an editor's buffer has no time of its own
    if fd is None or info is None:
        raise FileNotFoundError(2, "no such file", str(path))
    return open(fd, "rb"), info.st_mtime_ns, info.st_size


def _lines(raw: BinaryIO, offset: int, limit: int, stop: threading.Event, hashed: Hash) -> tuple[list[str], int, bool]:
    """The window's lines (each cut at MAX_LINE characters), the file's line count, and
    whether all of it was read (not cut short by `stop`); every byte is hashed on the way.
    A line is read at most `_PIECE` bytes at a time, so one long line costs no more than
    that: its first MAX_LINE characters are kept and the rest only counted."""
    shown: list[str] = []
    ended = 0  # lines whose newline has been read
    partial = False  # bytes of a line whose newline has not (yet) been read
    kept: list[str] = []
    room, more = MAX_LINE, 0
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # Lines are split on b"\n" only, so a lone "\r" stays inside its line.
    while ended < offset + limit - 1:
        if stop.is_set():
            return shown, 0, False
        piece = raw.readline(_PIECE)
        if not piece:
            break
        hashed.update(piece)
        ends = piece.endswith(b"\n")
        partial = not ends
        if ended + 1 >= offset:
            text = decoder.decode(piece, final=ends)
            if ends:
                text = text.rstrip("\r\n")
            kept.append(text[:room])
            more += max(0, len(text) - room)
            room = max(0, room - len(text))
            if ends:
                shown.append(_clip("".join(kept), more))
                kept, room, more = [], MAX_LINE, 0
        if ends:
            ended += 1
    if partial and ended + 1 >= offset and len(shown) < limit:
        text = decoder.decode(b"", final=True)
        kept.append(text[:room])
        more += max(0, len(text) - room)
        shown.append(_clip("".join(kept), more))
    # Past the window the rest is only counted and hashed, a block at a time.
    while block := raw.read(_BLOCK):
        if stop.is_set():
            return shown, 0, False
        hashed.update(block)
        ended += block.count(b"\n")
        partial = block[-1:] != b"\n"
    return shown, ended + partial, True


def _clip(line: str, more: int) -> str:
    if not more:
        return line
    return f"{line}… [line cut: {more} more characters]"


def _render(shown: str, window: _Window, offset: int) -> str:
    """The numbered lines, and a closing note when the file holds more or fewer."""
    if window.total == 0:
        return f"{shown} is empty."
    if not window.lines:
        return f"{shown} has {window.total} lines; offset {offset} is past its end. Read again with a smaller offset."
    body = "\n".join(f"{number:6}\t{line}" for number, line in enumerate(window.lines, start=offset))
    last = offset + len(window.lines) - 1
    if last < window.total:
        body += f"\n[{window.total - last} more lines: read again with offset={last + 1} to continue]"
    return body
