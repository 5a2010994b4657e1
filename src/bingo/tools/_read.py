"""The `read` tool: a window of a text file's lines, numbered like `cat -n`.

Owns the window (a 1-based first line and a line count), the numbering, the truncation of
overlong lines and the polite refusals (missing file, directory, binary file). A whole read
is recorded in the session's `Seen` ledger, so `write` and `edit` may then change the file.
It does not write, list or search files: `glob` and `grep` do the finding.
"""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path
from typing import Annotated

import msgspec

from ..kernel.interfaces import ToolCall
from ..wire import ToolOutput, ToolSpec, ToolTraits
from ._common import (
    BINARY_SNIFF,
    BuiltinTool,
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
    schema_of,
    text_output,
)
from ._files import FILES

__all__ = ["ReadTool"]

DEFAULT_LIMIT = 2000
"""Lines shown when the model does not say how many."""

MAX_LINE = 2000
"""Characters kept of one line; the rest is replaced by a marker."""

_BLOCK = 1 << 20
"""Bytes read at a time past the window, where lines are only counted."""


class ReadInput(Input, frozen=True):
    """Input of the read tool."""

    path: Annotated[
        str,
        msgspec.Meta(
            description="The file to read: absolute, or relative to the working directory."
        ),
    ]
    offset: Annotated[
        int, msgspec.Meta(ge=1, description="The 1-based number of the first line to show.")
    ] = 1
    limit: Annotated[
        int, msgspec.Meta(ge=1, description=f"How many lines to show (default {DEFAULT_LIMIT}).")
    ] = DEFAULT_LIMIT


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

    _spec = ToolSpec(
        name="read",
        description=(
            "Read a text file. Lines are numbered like `cat -n` (the number, a tab, the line). "
            f"Shows {DEFAULT_LIMIT} lines from the start unless `offset` (1-based first line) "
            f"and `limit` (line count) say otherwise; lines longer than {MAX_LINE} characters "
            "are cut. When more lines remain, the output ends with the offset to read next. "
            "Binary files are refused. Use glob or grep first when you do not know the path."
        ),
        input_schema=schema_of(ReadInput),
    )
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
        files = FILES.get()  # an editor's own files, when it offers them (tools._files)
        with path.open("rb") if files is None else io.BytesIO(files.read(path)) as raw:
            if is_binary(raw.read(BINARY_SNIFF)):
                size = raw.seek(0, os.SEEK_END)
                raise _Refusal(
                    f"{path} is a binary file ({size} bytes); read shows text files only. "
                    "Use bash (e.g. `file` or `xxd | head`) to inspect it."
                )
            raw.seek(0)
            if isinstance(raw, io.BytesIO):
                mtime_ns, size = 0, raw.getbuffer().nbytes  # an editor's buffer has no time of its own
            else:
                stat = os.fstat(raw.fileno())
                mtime_ns, size = stat.st_mtime_ns, stat.st_size
            hashed = hasher()
            lines: list[str] = []
            total = 0
            whole = True
            # Lines are split on b"\n" only, so a lone "\r" stays inside its line; every line
            # is counted so the note can say how many remain, and hashed for the ledger.
            for total, chunk in enumerate(raw, start=1):
                if stop.is_set():
                    whole = False
                    break
                hashed.update(chunk)
                if offset <= total:
                    text = chunk.decode("utf-8", errors="replace")
                    lines.append(_clip(text.rstrip("\r\n")))
                if total == offset + limit - 1:
                    break
            # Past the window the rest is only counted and hashed, a block at a time.
            last = b"\n"
            while whole and (block := raw.read(_BLOCK)):
                if stop.is_set():
                    whole = False
                    break
                hashed.update(block)
                total += block.count(b"\n")
                last = block[-1:]
            if last != b"\n":
                total += 1  # a last line without a newline
            seen = Snapshot(mtime_ns=mtime_ns, size=size, digest=hashed.digest()) if whole else None
            return _Window(lines=lines, total=total, seen=seen)
    except FileNotFoundError:
        raise _Refusal(
            f"{path} does not exist. Check the path (relative paths start at the working "
            "directory), or use glob to find the file."
        ) from None
    except IsADirectoryError:
        raise _Refusal(f"{path} is a directory, not a file. Use glob to list its files.") from None
    except PermissionError:
        raise _Refusal(f"{path} cannot be read: permission denied.") from None
    except OSError as exc:
        raise _Refusal(f"{path} cannot be read: {exc.strerror or exc}.") from None


def _clip(line: str) -> str:
    if len(line) <= MAX_LINE:
        return line
    return f"{line[:MAX_LINE]}… [line cut: {len(line) - MAX_LINE} more characters]"


def _render(shown: str, window: _Window, offset: int) -> str:
    """The numbered lines, and a closing note when the file holds more or fewer."""
    if window.total == 0:
        return f"{shown} is empty."
    if not window.lines:
        return (
            f"{shown} has {window.total} lines; offset {offset} is past its end. "
            "Read again with a smaller offset."
        )
    body = "\n".join(
        f"{number:6}\t{line}" for number, line in enumerate(window.lines, start=offset)
    )
    last = offset + len(window.lines) - 1
    if last < window.total:
        body += (
            f"\n[{window.total - last} more lines: read again with offset={last + 1} to continue]"
        )
    return body
