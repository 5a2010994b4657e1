"""Reading one JSON file the person or a package wrote (a `.mcp.json`, a package's manifest,
hooks or marketplace, the record of what `bingo plugin add` installed): bounded, checked for
depth before it is parsed, and either a JSON value or an `Unreadable` saying why, so a file
holding a JSON string is never taken for a reason (issue 26's duplicate D2)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from ..kernel.files import read_regular
from ..wire import MAX_DEPTH, Json, too_deep

__all__ = ["Unreadable", "read_json"]


class Unreadable(msgspec.Struct, frozen=True):
    """Why a JSON file gives no value: `why` reads after the file's name (`is larger than …`),
    `fix` says what to do when the file is there but broken; `missing` when there is none."""

    why: str
    fix: str = ""
    missing: bool = False

    def line(self, path: Path) -> str:
        """`<path> <why>`: one line naming the file."""
        return f"{path} {self.why}"

    def advice(self) -> str:
        """`<why>: <fix>`, or `why` alone when there is nothing to add."""
        return f"{self.why}: {self.fix}" if self.fix else self.why


def read_json(path: Path, limit: int) -> Json | Unreadable:
    """The JSON value in the file at `path` (at most `limit` bytes), or why there is none."""
    try:
        data = read_regular(path, limit)
    except OSError as exc:
        return Unreadable(f"cannot be read ({exc.strerror or exc})", missing=isinstance(exc, FileNotFoundError))
    if len(data) > limit:
        return Unreadable(f"is larger than {limit} bytes")
    if too_deep(data):
        return Unreadable(f"is nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        value: Json = json.loads(data)
    except json.JSONDecodeError as exc:
        return Unreadable(f"is not JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", "fix the file")
    except (ValueError, UnicodeDecodeError) as exc:
        return Unreadable(f"is not JSON ({exc})", "save it as UTF-8 JSON")
    return value
