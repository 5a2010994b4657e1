"""The MCP SDK's side of the comparison: an `MCPServer` over stdio with the same `count`.

The SDK's defaults throughout (logging, validation, output schema): this is the server a
person writes from the SDK's README. Usage: `python _mcp_server.py CPU` (CPU `-` leaves the
placement alone). Runs in the bench's own environment, which has `mcp` installed.
"""

from __future__ import annotations

import os
import sys

from mcp.server import MCPServer

if len(sys.argv) > 1 and sys.argv[1] != "-":
    os.sched_setaffinity(0, {int(sys.argv[1])})

server = MCPServer("bench")


@server.tool()
def count(text: str) -> str:
    """Counts the words in a text."""
    return "%d words" % len(text.split())


if __name__ == "__main__":
    server.run()
