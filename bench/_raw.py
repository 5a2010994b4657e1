"""The limit: a raw asyncio JSON-line client of the bench child, with per-id futures.

What a host could not do with less: one `json.dumps` line out, a reader task that
`json.loads` each line back and resolves the caller's future by id. No validation, no
deadlines, no typed decoding: the floor every other contender is measured against.
It does not spawn through bingo; it uses asyncio's own subprocess pipes.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["RawClient"]

_LIMIT = 16 * 1024 * 1024
"""The reader's line limit, as bingo's (the same buffer behaviour on both sides)."""
_EXIT_WAIT = 5.0
"""Seconds the child has to exit once its stdin is closed."""


class RawClient:
    """One child process spoken to over raw pipes. `async with RawClient.spawn(...)`."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def spawn(cls, child: Path, cpu: str) -> RawClient:
        """Start `child` (the bench child script) pinned to `cpu` (or `-`)."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(child),
            "raw",
            cpu,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=_LIMIT,
        )
        return cls(proc)

    async def __aenter__(self) -> RawClient:
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._stdin.close()
        async with asyncio.timeout(_EXIT_WAIT):
            await self._proc.wait()
        if self._reader is not None:
            self._reader.cancel()

    async def _read(self) -> None:
        while line := await self._stdout.readline():
            message = json.loads(line)
            future = self._pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message.get("result"))

    async def request(self, method: str, params: object) -> Any:
        """Send one request and wait for its result."""
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self._stdin.write(json.dumps(message).encode() + b"\n")
        await self._stdin.drain()
        return await future

    async def initialize(self) -> object:
        """The handshake, as bingo sends it (the answer is not looked at)."""
        params = {"protocol": 5, "pluginRoot": "/", "config": {}, "env": {}}
        return await self.request("initialize", params)

    async def count(self, n: int, text: str) -> object:
        """One `tool/call` of `count`, with the params bingo's bridge sends."""
        params = {
            "callId": f"c{n}",
            "name": "count",
            "input": {"text": text},
            "cwd": "/",
            "session": "bench",
            "turn": 1,
        }
        return await self.request("tool/call", params)
