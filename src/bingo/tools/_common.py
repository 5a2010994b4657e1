"""What the built-in tools share: input validation at the edge, paths, outputs, a file walk,
and the ledger of files seen.

Owns the one way a tool's raw JSON input becomes a typed value (or an error output naming
the field), the JSON Schema a tool shows the model (generated from that same Struct, so the
two cannot drift), the `.git`-skipping walk that glob and grep share, the glob pattern
grammar, and `Seen`: what `read`, `write` and `edit` last saw of each file in each session
(the guard against blind overwrites, ADR-0019). It does not run anything: each tool's own
module does that.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ClassVar, Protocol, TypeVar

import msgspec

from ..kernel.files import NotRegular, inside
from ..kernel.interfaces import ToolCall
from ..kernel.patterns import Regex, linear
from ..kernel.registry import BUILTIN
from ..wire import Json, TextPart, ToolOutput, ToolSpec, ToolTraits

__all__ = [
    "Regex",
    "linear",
    "BINARY_SNIFF",
    "SEEN_MAX",
    "SKIPPED_DIRS",
    "BuiltinTool",
    "Hash",
    "Input",
    "Seen",
    "Snapshot",
    "digest",
    "display_path",
    "error_output",
    "glob_fix",
    "glob_regex",
    "hasher",
    "in_thread",
    "is_binary",
    "leaves_root",
    "parse_input",
    "real_path",
    "resolve",
    "root_of",
    "schema_of",
    "text_output",
    "unopened",
    "walk_files",
]

SKIPPED_DIRS = frozenset({".git"})
"""Directory names glob and grep never descend into."""

BINARY_SNIFF = 8192
"""How many leading bytes are looked at to decide that a file is binary (a NUL among them)."""

SEEN_MAX = 4096
"""Files the ledger remembers across all sessions of a run; past it the least recently seen
is forgotten, and the model reads that file again before changing it."""

_S = TypeVar("_S", bound=msgspec.Struct)
_R = TypeVar("_R")


class Input(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Base of every built-in tool's input: camelCase names, unknown fields ignored."""


def unopened(exc: OSError, shown: str, *, only: str, directory: str = "") -> str:
    """The model's words for a file that could not be opened (what `kernel.files.open_regular`
    refuses: a directory, a FIFO, a device, a file of /proc; no permission; another error).
    `only` ends the not-a-regular-file line ("read shows regular files only"); `directory`
    follows the directory line (" Use glob to list its files.")."""
    if isinstance(exc, IsADirectoryError) or (isinstance(exc, NotRegular) and exc.what == "a directory"):
        return f"{shown} is a directory, not a file.{directory}"
    if isinstance(exc, NotRegular):
        return f"{shown} is {exc.what}, not a regular file; {only}."
    if isinstance(exc, PermissionError):
        return f"{shown} cannot be read: permission denied."
    return f"{shown} cannot be read: {exc.strerror or exc}."


def schema_of(kind: type[msgspec.Struct]) -> dict[str, Json]:
    """The JSON Schema of an input Struct, inlined (no `$ref`), as a ToolSpec wants it."""
    _, components = msgspec.json.schema_components([kind])
    schema = dict(components[kind.__name__])
    schema.pop("title", None)
    return schema


def parse_input(kind: type[_S], raw: Json, tool: str) -> _S | ToolOutput:
    """`raw` as a `kind`, or an error output saying which field is wrong and how."""
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        return error_output(f"{tool}: invalid input: {exc}. Call {tool} again with valid input.")


def text_output(text: str) -> ToolOutput:
    """A successful output holding one text part."""
    return ToolOutput(parts=[TextPart(text=text)])


def error_output(text: str) -> ToolOutput:
    """A failed output: the text says what was wrong and what to do."""
    return ToolOutput(parts=[TextPart(text=text)], is_error=True)


def resolve(cwd: str, path: str) -> Path:
    """`path` as given (absolute, or `~/...`), or relative to the call's working directory."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else Path(cwd) / candidate


def display_path(path: Path, cwd: str) -> str:
    """How a path is shown to the model: relative to the working directory when inside it."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def real_path(path: Path) -> Path:
    """`path` with every symlink followed: the file a write lands in, and the one key the
    ledger knows a file by however it was named."""
    return Path(os.path.realpath(path))


def root_of(named: Path, roots: tuple[str | None, ...]) -> str | None:
    """The first of `roots` (the project, the working directory) that `named`, as written
    (`.` and `..` folded, no link followed), lies in; None when it lies in none."""
    lexical = str(named)
    for root in roots:
        if root is None:
            continue
        forms = {os.path.normpath(root), os.path.realpath(root)}
        if any(lexical == form or lexical.startswith(form.rstrip("/") + "/") for form in forms):
            return root
    return None


def leaves_root(named: Path, target: Path, roots: tuple[str | None, ...]) -> str | None:
    """The root (of `roots`) that `named` lies in and its real path `target` does not: a link
    on the way, at the file or a directory above it, leads out of it. None when `target`
    stays inside the root `named` is in (or `named` is in none: a path the person named
    outside them is theirs to name)."""
    root = root_of(named, roots)
    return root if root is not None and not inside(target, root) else None


def is_binary(head: bytes) -> bool:
    """Whether a file's leading bytes say it is not text (a NUL byte, as git and grep judge)."""
    return b"\0" in head


async def in_thread(work: Callable[[threading.Event], _R]) -> _R:
    """Run blocking file work in a thread, so the loop never blocks. If the awaiting task is
    cancelled, the work's stop event is set (the work checks it and ends early) and the
    cancellation goes on."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def walk_files(root: Path, stop: threading.Event) -> Iterator[Path]:
    """Every regular file under `root` (symlinks to files included), in path order, never
    inside `.git`. Symlinked directories are not followed (no loops), and fifos, sockets and
    devices are left out (reading one could block forever). An unreadable directory is
    passed over. Ends early once `stop` is set."""
    try:
        with os.scandir(root) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if stop.is_set():
            return
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    yield from walk_files(Path(entry.path), stop)
            elif entry.is_file():
                yield Path(entry.path)
        except OSError:
            continue


def glob_regex(pattern: str) -> Regex:
    """A compiled regex for a glob over `/`-separated relative paths.

    `*` and `?` never cross a `/`; `**` as a whole segment spans any number of directories
    (none included); `[abc]`, `[!abc]` are classes; `{a,b}` are alternatives. Dotfiles match
    like any other file. Raises ValueError for an unbalanced `{`."""
    out: list[str] = []
    depth = 0
    i, n = 0, len(pattern)
    while i < n:
        at_segment_start = i == 0 or pattern[i - 1] == "/"
        char = pattern[i]
        if at_segment_start and pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif at_segment_start and pattern.startswith("**", i) and i + 2 == n:
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            i = _glob_class(pattern, i, out)
        elif char == "{":
            depth += 1
            out.append("(?:")
            i += 1
        elif char == "," and depth:
            out.append("|")
            i += 1
        elif char == "}" and depth:
            depth -= 1
            out.append(")")
            i += 1
        else:
            out.append(re.escape(char))
            i += 1
    if depth:
        raise ValueError(f"unbalanced '{{' in {pattern!r}")
    return linear("".join(out), dot_nl=True)


def glob_fix(error: ValueError, what: str) -> str:
    """What to do about the `glob_regex` `error` in the glob a tool names `what`."""
    return "Close every `{` with `}`" if "unbalanced" in str(error) else f"Fix the {what}"


def _glob_class(pattern: str, start: int, out: list[str]) -> int:
    """Translate the `[...]` class at `start`; a `[` with no closing `]` is a literal."""
    j = start + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        out.append(re.escape("["))
        return start + 1
    raw = pattern[start + 1 + (1 if negate else 0) : j]
    # Escape all but ranges, so no character can end the class early or make `re` warn
    # about set operations (`[[`, `&&`, `~~`, `||`).
    body = "".join(c if c == "-" else re.escape(c) for c in raw)
    out.append(f"[^/{body}]" if negate else f"[{body}]")
    return j + 1


class BuiltinTool:
    """Base of the built-in tools: a fixed spec and traits, and the source `builtin`."""

    _spec: ClassVar[ToolSpec]
    _traits: ClassVar[ToolTraits]

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def traits(self) -> ToolTraits:
        return self._traits

    @property
    def source(self) -> str:
        return BUILTIN

    async def call(self, call: ToolCall) -> ToolOutput:
        raise NotImplementedError


def hasher() -> Hash:
    """A fresh hash of the kind the ledger compares files by, fed bytes in pieces."""
    return hashlib.sha256()


def digest(data: bytes) -> bytes:
    """The digest the ledger compares a file's bytes by."""
    return hashlib.sha256(data).digest()


class Hash(Protocol):
    """What read needs of a hash object (hashlib's own type is private)."""

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


class Snapshot(msgspec.Struct, frozen=True):
    """What a tool saw of a file: its modification time, its size and a digest of its bytes."""

    mtime_ns: int
    size: int
    digest: bytes


class Seen:
    """What `read`, `write` and `edit` last saw of each file, per session (ADR-0019).

    A file may be changed only once it has been seen in this session, and only while its
    bytes are still the ones seen: the digest decides, so a `touch` is not a change and a
    rewrite that keeps the size and the modification time is. Bounded by `limit` files; the
    least recently seen is forgotten first. Used on the event loop only."""

    __slots__ = ("_files", "_limit")

    def __init__(self, limit: int = SEEN_MAX) -> None:
        self._files: OrderedDict[tuple[str, str], Snapshot] = OrderedDict()
        self._limit = limit

    def saw(self, session: str, path: Path, snapshot: Snapshot) -> None:
        """Record that `session` saw `path` (a `real_path`) as `snapshot`."""
        key = (session, str(path))
        self._files[key] = snapshot
        self._files.move_to_end(key)
        while len(self._files) > self._limit:
            self._files.popitem(last=False)

    def last(self, session: str, path: Path) -> Snapshot | None:
        """What `session` last saw of `path` (a `real_path`), or None if it has not seen it."""
        return self._files.get((session, str(path)))
