"""The `grep` tool: the lines of text files that match a regular expression, as `file:line:text`.

Owns the search: which files are looked at (a file, or a directory walked without `.git`,
optionally filtered by a glob; binary files skipped, and anything but a regular file:
FIFOs, devices and files of /proc or /sys, opened without blocking by
`kernel.files.open_regular`), what a line costs (at most MAX_SCAN bytes), the order (by path, then line) and the
bound on how many lines are listed. It is Python and RE2 (google-re2, a dependency) on
purpose, so that what it finds does not depend on which tools the machine has; the walking and
reading run in a thread. The pattern is RE2's (`_common.linear`: time linear in the text, so
no pattern a model writes can hang the turn and the run's exit after it), as ripgrep's is:
Perl's syntax less look-around and backreferences, over the file's UTF-8 bytes. Each file is
read in blocks of lines, each block searched whole (no match may cross a line) from the start
of the line after each match: one call of RE2's per block and per matching line, which keeps
its cost per call off the lines that match nothing (ADR-0051).
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import msgspec

from ..kernel.files import NotRegular, open_regular
from ..kernel.interfaces import ToolCall
from ..wire import ToolOutput, ToolTraits
from ._common import (
    BINARY_SNIFF,
    BuiltinTool,
    Input,
    Regex,
    display_path,
    error_output,
    glob_fix,
    glob_regex,
    in_thread,
    is_binary,
    linear,
    parse_input,
    resolve,
    text_output,
    walk_files,
)
from ._specs import spec

__all__ = ["GrepTool"]

MAX_LINES = 500
"""Matching lines listed at most; the rest are counted and left out."""

MAX_LINE = 500
"""Characters kept of one matching line."""

MAX_SCAN = 1 << 20
"""Bytes of one line searched: a longer line is searched in its first MAX_SCAN bytes, so one
line costs no more than that however long it is."""


class GrepInput(Input, frozen=True):
    """Input of the grep tool."""

    pattern: Annotated[
        str,
        msgspec.Meta(description="A regular expression (RE2 syntax, as ripgrep's: no look-around or backreferences)."),
    ]
    path: Annotated[
        str,
        msgspec.Meta(description="A file or directory to search (default: the working directory)."),
    ] = ""
    glob: Annotated[
        str,
        msgspec.Meta(
            description=(
                "Only search files matching this glob, e.g. `*.py` (matched against the file "
                "name) or `src/**/*.ts` (a pattern with `/` is matched against the path)."
            )
        ),
    ] = ""
    ignore_case: Annotated[bool, msgspec.Meta(description="Match letters without regard to case.")] = False


class _Hits(msgspec.Struct):
    """What a search found: the listed lines, how many matched in all, what could not be read."""

    lines: list[str] = msgspec.field(default_factory=list[str])
    total: int = 0
    unreadable: int = 0
    skipped: int = 0
    """Files that are not regular (a link to a FIFO, a device or a file of /proc)."""
    long: int = 0
    """Lines longer than MAX_SCAN, searched in their first MAX_SCAN bytes only."""
    refused: str = ""
    """Why the one file asked for was not searched, when it is not a regular file."""


class GrepTool(BuiltinTool):
    """Searches file contents with a regular expression."""

    _spec = spec("grep")  # as data (`_specs.py`), held equal to GrepInput's schema by a test
    _traits = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")

    async def call(self, call: ToolCall) -> ToolOutput:
        args = parse_input(GrepInput, call.input, "grep")
        if isinstance(args, ToolOutput):
            return args
        try:
            regex = _Pattern(args.pattern, args.ignore_case)
        except ValueError as exc:
            return error_output(
                f"grep: invalid regular expression {args.pattern!r}: {exc}. Fix the pattern (RE2 syntax, as"
                " ripgrep's: no look-around or backreferences; escape literal characters like `(`)."
            )
        try:
            name_filter = glob_regex(args.glob) if args.glob else None
        except ValueError as exc:
            return error_output(f"grep: invalid glob: {exc}. {glob_fix(exc, 'glob')}.")
        target = resolve(call.cwd, args.path or ".")
        if not target.exists():
            return error_output(
                f"grep: {target} does not exist. Give `path` as an existing file or "
                "directory, or leave it out to search the working directory."
            )
        hits = await in_thread(lambda stop: _search(target, regex, name_filter, args.glob, call.cwd, stop))
        if hits.refused:
            return error_output(hits.refused)
        return text_output(_render(args.pattern, hits))


class _Pattern:
    """The model's pattern twice, over UTF-8 bytes: for one line (`line`), and for a block of
    lines joined by newlines (`block`: `^` and `$` at each line, no match across one), or
    None when the pattern names the text's own start or end (`\\A`, `\\z`), which a block
    has once and each line alone has its own."""

    __slots__ = ("block", "line")

    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.line = linear(pattern, ignore_case=ignore_case, of_bytes=True)
        whole = _WHOLE_TEXT.search(pattern) is not None
        self.block = None if whole else linear(f"(?m){pattern}", ignore_case=ignore_case, never_nl=True, of_bytes=True)

    def matching(self, lines: list[bytes]) -> Iterator[int]:
        """The indexes of `lines` that match, each once: one search a matching line, and one
        for the block (a search from the start of the line after each match). No lines, none:
        the empty text of no lines is no line to match `^` or `x*`."""
        if not lines:
            return
        if self.block is None:
            search = self.line.search
            yield from (index for index, line in enumerate(lines) if search(line) is not None)
            return
        text = b"\n".join(lines)
        starts = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        at = 0
        while (found := self.block.search(text, at)) is not None:
            index = bisect.bisect_right(starts, found.start()) - 1
            yield index
            if index + 1 == len(starts):
                return
            at = starts[index + 1]


_WHOLE_TEXT = re.compile(r"\\[AzZ]")
_BLOCK_LINES = 4096
"""Lines searched whole at a time (at most MAX_SCAN bytes each: a block is bounded)."""


def _search(
    target: Path,
    regex: _Pattern,
    name_filter: Regex | None,
    glob: str,
    cwd: str,
    stop: threading.Event,
) -> _Hits:
    hits = _Hits()
    single = not target.is_dir()
    files: Iterator[Path] = iter([target]) if single else walk_files(target, stop)
    by_path = "/" in glob
    for path in files:
        if stop.is_set():
            break
        if name_filter is not None and not single:
            subject = path.relative_to(target).as_posix() if by_path else path.name
            if name_filter.fullmatch(subject) is None:
                continue
        try:
            _search_file(path, display_path(path, cwd), regex, hits, stop)
        except NotRegular as exc:
            if single:
                hits.refused = f"grep: {target} is {exc.what}, not a regular file; grep searches regular files only."
            hits.skipped += 1
        except OSError:
            hits.unreadable += 1
    return hits


def _search_file(path: Path, shown: str, regex: _Pattern, hits: _Hits, stop: threading.Event) -> None:
    fd, _ = open_regular(path)  # never blocks, never a device or a file of /proc (kernel.files)
    with open(fd, "rb") as raw:
        if is_binary(raw.read(BINARY_SNIFF)):
            return
        raw.seek(0)
        readline = raw.readline
        first = 1
        while True:
            block: list[bytes] = []
            append = block.append
            for count in range(_BLOCK_LINES):
                piece = readline(MAX_SCAN)
                if not piece:
                    break
                if len(piece) == MAX_SCAN and not piece.endswith(b"\n"):
                    # A line past MAX_SCAN: searched in its first MAX_SCAN bytes, the rest
                    # skipped a piece at a time, so it costs no more than that.
                    hits.long += 1
                    while (rest := readline(MAX_SCAN)) and not rest.endswith(b"\n"):
                        if stop.is_set():
                            return
                append(piece.rstrip(b"\r\n"))
                if not count & 255 and stop.is_set():
                    return
            if stop.is_set():
                return
            for index in regex.matching(block):
                hits.total += 1
                if len(hits.lines) < MAX_LINES:
                    line = block[index].decode("utf-8", errors="replace")
                    if len(line) > MAX_LINE:
                        line = f"{line[:MAX_LINE]}… [line cut]"
                    hits.lines.append(f"{shown}:{first + index}:{line}")
            if len(block) < _BLOCK_LINES:  # the file ended within it
                return
            first += len(block)


def _render(pattern: str, hits: _Hits) -> str:
    notes: list[str] = []
    left_out = hits.total - len(hits.lines)
    if left_out:
        notes.append(f"[{left_out} more matching lines not shown: narrow the pattern, path or glob]")
    if hits.unreadable:
        notes.append(f"[{hits.unreadable} files could not be read]")
    if hits.skipped:
        notes.append(
            f"[{hits.skipped} files were left out: not regular files (a FIFO, a device, or a file of /proc or /sys)]"
        )
    if hits.long:
        notes.append(
            f"[{hits.long} lines longer than {MAX_SCAN:,} bytes were searched in their first {MAX_SCAN:,} bytes only]"
        )
    if not hits.lines:
        return "\n".join([f"No lines match {pattern!r}.", *notes])
    return "\n".join([*hits.lines, *notes])
