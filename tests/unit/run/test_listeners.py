"""A closed run stops listening to the process's notices (issue 26 item 4): the real ACP
agent, served over a socket pair in this process on runs from the real factory, its sessions
opened and closed by JSON-RPC lines as an editor sends them. Before the fix every session's
run added a listener to `Notices` that nothing removed, so the count grew by one a session."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

from bingo.run import Run
from bingo.surfaces import Surface
from bingo.surfaces.acp import AcpLog, serve_acp
from tests.unit.run._harness import WAIT, open_factory

SESSIONS = 100


class _Editor:
    """The client's side of the socket pair: a request per line, its answer awaited (the
    agent's `session/update` notifications read past)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._ids = 0

    async def call(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self._ids += 1
        line = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        self._writer.write((json.dumps(line) + "\n").encode())
        await self._writer.drain()
        while True:
            message = json.loads(await asyncio.wait_for(self._reader.readline(), WAIT))
            if message.get("id") == self._ids:
                assert "error" not in message, message
                return message["result"]


async def _listeners_after_sessions(tmp_path: Path) -> list[int]:
    counts: list[int] = []
    log = AcpLog()
    async with open_factory(tmp_path, log) as (factory, notices):

        def make(editor: Surface, where: str, session_id: str, stored: bool) -> Run:  # as app.py's
            return factory.open(editor, "editor", cwd=Path(where), session=factory.session(planned=session_id))

        ours, theirs = socket.socketpair()
        agent = asyncio.ensure_future(
            serve_acp(log=log, make=make, version="test", streams=await asyncio.open_connection(sock=ours))
        )
        reader, writer = await asyncio.open_connection(sock=theirs)
        editor = _Editor(reader, writer)
        await editor.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        for _ in range(SESSIONS):
            opened = await editor.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            await editor.call("session/close", {"sessionId": opened["sessionId"]})
            counts.append(notices.listening())
        writer.close()
        assert await asyncio.wait_for(agent, WAIT) == 0
    return counts


def test_the_listener_count_after_a_hundred_editor_sessions_opened_and_closed_is_the_first_ones(
    tmp_path: Path,
) -> None:
    counts = asyncio.run(_listeners_after_sessions(tmp_path))

    assert len(counts) == SESSIONS
    assert counts[-1] == counts[0]
