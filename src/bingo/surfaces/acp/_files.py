"""The editor's file bridge: when the client offers both `fs/read_text_file` and
`fs/write_text_file`, `read`, `write` and `edit` go through them for a session's turns
(`tools.FILES`), each a request on the loop waited for from the tool's worker thread.

It owns no session and draws nothing: the agent sets it for a prompt's task.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import msgspec

from ...kernel.errors import BingoError, PluginError
from ...tools import Declined
from ...wire.rpc import DEADLINE
from ._schema import ReadTextFileParams, ReadTextFileResult, WriteTextFileParams

if TYPE_CHECKING:
    from ...endpoint import Connection

__all__ = ["FS_SECONDS", "ClientFiles"]

_log = logging.getLogger(__name__)

R = TypeVar("R")

FS_SECONDS = 30.0
"""How long a read or write through the editor's files may take before it fails the call."""
_NOT_FOUND = -32002
"""ACP's "resource not found", which a client answers `fs/read_text_file` of no file with."""


class _Declined(OSError):
    """The editor answered a read or write with an error other than "no such file"."""


class ClientFiles:
    """The client's files (`tools.Files`), called from a tool's worker thread: each read or
    write is a request on the loop, waited for at most FS_SECONDS. A file the editor
    declines (outside its project, say) is `tools.Declined`: the tool reads and writes it on
    the disk, both ways (so the ledger sees one file), through its own path and checks."""

    def __init__(self, conn: Connection, session_id: str, loop: asyncio.AbstractEventLoop) -> None:
        self._conn = conn
        self._session = session_id
        self._loop = loop

    def _wait(self, request: Awaitable[R], path: Path) -> R:
        async def run() -> R:
            return await request

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            return future.result(FS_SECONDS + 1)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise OSError(f"the editor did not answer within {FS_SECONDS:g} s") from None
        except PluginError as exc:
            if exc.code == _NOT_FOUND:
                raise FileNotFoundError(2, "the editor has no such file", str(path)) from None
            if exc.code not in (0, DEADLINE):  # answered, not lost
                raise _Declined(exc.message) from None
            raise OSError(f"the editor could not do it ({exc.message})") from None
        except BingoError as exc:
            raise OSError(exc.message) from None

    def read(self, path: Path) -> bytes:
        params = ReadTextFileParams(session_id=self._session, path=str(path))
        try:
            answer = self._wait(
                self._conn.call("fs/read_text_file", params, ReadTextFileResult, deadline=FS_SECONDS), path
            )
        except _Declined as exc:
            # The tool reads it from the disk, by its own path and checks (tools.Declined).
            _log.info("the editor declined to read %s (%s): read from the disk", path, exc)
            raise Declined(str(exc)) from None
        return answer.content.encode("utf-8")

    def write(self, path: Path, data: bytes) -> None:
        params = WriteTextFileParams(
            session_id=self._session, path=str(path), content=data.decode("utf-8", errors="replace")
        )
        try:
            self._wait(self._conn.call("fs/write_text_file", params, msgspec.Raw, deadline=FS_SECONDS), path)
        except _Declined as exc:
            _log.info("the editor declined to write %s (%s): written to the disk", path, exc)
            raise Declined(str(exc)) from None
