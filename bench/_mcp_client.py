"""The MCP SDK's client side: `stdio_client` + `ClientSession`, as the SDK's README uses them.

`connected` spawns `_mcp_server.py` and completes `initialize` + `list_tools` (what
"ready" means for an MCP client); `McpPeer.count` is one `ClientSession.call_tool`. The
server's stderr goes to /dev/null. Needs the bench's own environment (`mcp==2.3.0`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

__all__ = ["McpPeer", "connected", "connected_to"]

SERVER = Path(__file__).with_name("_mcp_server.py")


class McpPeer:
    """A ready MCP session with the bench server."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session

    async def count(self, n: int, text: str) -> object:
        """One `tools/call` of `count`; raises if the server answered an error."""
        result = await self._session.call_tool("count", {"text": text})
        if result.is_error:
            raise RuntimeError(f"MCP count failed: {result}")
        return result


@contextlib.asynccontextmanager
async def connected_to(command: str, args: list[str]) -> AsyncIterator[ClientSession]:
    """Spawn any MCP server, `initialize`, `list_tools`: ready as an MCP client means."""
    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            yield session


@contextlib.asynccontextmanager
async def connected(cpu: str) -> AsyncIterator[McpPeer]:
    """Spawn the MCP server pinned to `cpu` (or `-`), `initialize`, `list_tools`."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), cpu], env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            if [tool.name for tool in tools.tools] != ["count"]:
                raise RuntimeError(f"unexpected MCP tools: {tools}")
            yield McpPeer(session)
