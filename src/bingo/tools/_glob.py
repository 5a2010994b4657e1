"""The `glob` tool: the files whose paths match a pattern, newest first.

Owns where the walk starts (the pattern's literal leading directories under `path`), the
order (most recently modified first, then by path, so what was just edited comes first)
and the bound on how many are listed. It does not read the files: `grep` and `read` do.
The pattern grammar itself is `_common.glob_regex`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import msgspec

from ..kernel.interfaces import ToolCall
from ..wire import ToolOutput, ToolTraits
from ._common import (
    BuiltinTool,
    Input,
    display_path,
    error_output,
    glob_fix,
    glob_regex,
    in_thread,
    parse_input,
    resolve,
    text_output,
    walk_files,
)
from ._specs import spec

__all__ = ["GlobTool"]

MAX_MATCHES = 500
"""Paths listed at most; the rest are counted and left out."""

_WILDCARDS = frozenset("*?[{")

_Matcher = Callable[[str], object | None]


class GlobInput(Input, frozen=True):
    """Input of the glob tool."""

    pattern: Annotated[
        str,
        msgspec.Meta(description=("A glob over paths relative to `path`, e.g. `**/*.py` or `src/**/test_*.{py,txt}`.")),
    ]
    path: Annotated[
        str,
        msgspec.Meta(description="The directory to search (default: the working directory)."),
    ] = ""


class _Found(msgspec.Struct, frozen=True):
    """Matching files, newest first, and how many there were in all."""

    paths: list[Path]
    total: int


class GlobTool(BuiltinTool):
    """Finds files by a glob pattern."""

    _spec = spec("glob")  # as data (`_specs.py`), held equal to GlobInput's schema by a test
    _traits = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")

    async def call(self, call: ToolCall) -> ToolOutput:
        args = parse_input(GlobInput, call.input, "glob")
        if isinstance(args, ToolOutput):
            return args
        base = resolve(call.cwd, args.path or ".")
        if not base.is_dir():
            what = "is not a directory" if base.exists() else "does not exist"
            return error_output(f"glob: {base} {what}. Give `path` as an existing directory, or leave it out.")
        root, pattern = _split(base, args.pattern)
        try:
            regex = glob_regex(pattern)
        except ValueError as exc:
            return error_output(f"glob: invalid pattern: {exc}. {glob_fix(exc, 'pattern')}.")
        found = await in_thread(lambda stop: _find(root, regex.fullmatch, stop))
        where = display_path(base, call.cwd) if args.path else "the working directory"
        if not found.paths:
            return text_output(f"No files match {args.pattern!r} under {where}.")
        lines = [display_path(path, call.cwd) for path in found.paths]
        left_out = found.total - len(found.paths)
        if left_out:
            lines.append(f"[{left_out} more files not shown: narrow the pattern or the path]")
        return text_output("\n".join(lines))


def _split(base: Path, pattern: str) -> tuple[Path, str]:
    """Where to walk from, and the pattern relative to it: an absolute pattern walks from
    `/`, and literal leading directories are walked into rather than matched."""
    if pattern.startswith("/"):
        base, pattern = Path("/"), pattern.lstrip("/")
    segments = pattern.split("/")
    literal = 0
    while literal < len(segments) - 1 and not _WILDCARDS & set(segments[literal]):
        literal += 1
    root = base.joinpath(*segments[:literal]) if literal else base
    return root, "/".join(segments[literal:])


def _find(root: Path, match: _Matcher, stop: threading.Event) -> _Found:
    matches: list[tuple[float, str, Path]] = []
    if root.is_dir():
        for path in walk_files(root, stop):
            relative = path.relative_to(root).as_posix()
            if match(relative) is None:
                continue
            try:
                mtime = path.stat().st_mtime
            except OSError:
                continue  # vanished, or a dangling link: not a file to list
            matches.append((-mtime, relative, path))
    matches.sort(key=lambda item: (item[0], item[1]))
    return _Found(paths=[item[2] for item in matches[:MAX_MATCHES]], total=len(matches))
