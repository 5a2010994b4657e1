"""An MCP server's session: which revision is spoken, and what the server declares.

Owns the revisions (`initialize` offers 2025-11-25 and takes 2025-06-18; a server that
refuses the handshake as one of the stateless revision does, -32022 or no `initialize` at
all, is asked `server/discover`, and from then on every request carries the revision and the
client's capabilities in `_meta`; a server that speaks both is spoken to with the handshake,
so no probe costs every other server a round trip), what bingo offers a server (elicitation;
sampling only where the person allowed it; never roots), and the lists read as bingo's
`InitializeResult`: tools keep their names, a prompt is the command `<name>:<prompt>`, and a
server that lists resources gets one tool more, `resources` (ADR-0022).

It holds the connection it speaks on and nothing else of the plugin: the calls themselves
are the client's (`_mcp.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final, TypeVar

import msgspec

from ..endpoint import Connection
from ..kernel.errors import BadParams, MethodNotFound, PluginError, Refused
from ..kernel.log import cut
from ..wire import PROTOCOL_VERSION, InitializeResult, Json, ToolSpec, Wire, is_array
from ..wire.rpc import RequestId
from ._mcp_wire import (
    ANY_JSON,
    McpClientInfo,
    McpCursor,
    McpDiscover,
    McpDiscovered,
    McpEmpty,
    McpInitialize,
    McpInitialized,
    McpPrompt,
    McpPromptsPage,
    McpRequest,
    McpServerInfo,
    McpToolsPage,
    json_object,
    prompt_command,
)

__all__ = ["HANDSHAKE_REVISIONS", "MCP_REVISIONS", "MODERN", "RESOURCES_TOOL", "McpSession"]

R = TypeVar("R")

MODERN: Final = "2026-07-28"
"""The stateless revision: no handshake, `server/discover`, the revision and the client's
capabilities in every request's `_meta`, server requests folded into `input_required`
results."""
HANDSHAKE_REVISIONS: Final = ("2025-11-25", "2025-06-18")
"""The revisions with an `initialize` handshake bingo speaks: it offers the first, and takes
a server's counter-offer of either."""
MCP_REVISIONS: Final = (MODERN, *HANDSHAKE_REVISIONS)
"""Every MCP revision bingo speaks, newest first."""
_UNSUPPORTED: Final = -32022
"""MCP's error code for a revision the server does not speak."""
RESOURCES_TOOL: Final = "resources"
"""The one tool a server with resources gets: list them, or read one by its uri."""
PAGES_MAX: Final = 50
"""Pages of a paginated list read at most: a server whose cursor never ends is cut there."""

_RESOURCES_SCHEMA: Final[dict[str, Json]] = {
    "type": "object",
    "properties": {
        "uri": {
            "type": "string",
            "description": "The resource to read; leave it out to list the resources there are.",
        }
    },
}


class McpSession:
    """The revision spoken with one MCP server over `conn`, and what the server declares.
    `samples` says whether bingo offers it sampling (the person let it use the model)."""

    __slots__ = ("_modern", "capabilities", "conn", "plugin", "prompts", "revision", "samples", "server", "tools")

    def __init__(self, conn: Connection, *, plugin: str, samples: bool) -> None:
        self.conn = conn
        self.plugin = plugin
        self.samples = samples
        self.revision: str | None = None
        self.server = McpServerInfo()
        self.capabilities: dict[str, Json] = {}
        self.prompts: dict[str, McpPrompt] = {}
        """The server's prompts, by their own names."""
        self.tools: set[str] = set()
        """The names of the tools the server lists."""
        self._modern: dict[str, Json] = {}
        """The `_meta` every request carries in the stateless revision."""

    async def request(
        self,
        method: str,
        params: Wire,
        result: type[R],
        *,
        deadline: float | None | msgspec.UnsetType = msgspec.UNSET,
        sent: Callable[[RequestId], None] | None = None,
    ) -> R:
        """An MCP request as MCP has it (`initialize`, `tools/list`, ...); in the stateless
        revision its `_meta` carries the revision and the client's capabilities."""
        if self.revision == MODERN and isinstance(params, McpRequest):
            before: dict[str, Json] | None = getattr(params, "meta", None)
            params = msgspec.structs.replace(params, meta={**(before or {}), **self._modern})
        return await self.conn.call(method, params, result, deadline=deadline, sent=sent)

    async def initialize(self, host_version: str) -> InitializeResult:
        """MCP's `initialize`, then `notifications/initialized` and the lists: the server's
        declaration as bingo's handshake answer (so `handshake.py` reads it as any other).

        Raises:
            Refused: it speaks no MCP revision bingo speaks.
            PluginError: a call failed (DeadlinePassed, ConnectionClosed, an error answered).
        """
        request = McpInitialize(
            protocol_version=HANDSHAKE_REVISIONS[0],
            capabilities=self._capabilities(),
            client_info=McpClientInfo(name="bingo", version=host_version),
        )
        try:
            answer = await self.request("initialize", request, McpInitialized)
        except PluginError as exc:
            if exc.code in (_UNSUPPORTED, MethodNotFound.code):
                return await self.discover(host_version)  # a server of the stateless revision
            raise
        if answer.protocol_version not in HANDSHAKE_REVISIONS:
            raise Refused(
                f"it speaks MCP revision {cut(answer.protocol_version, 40)}, but bingo speaks only "
                f"{', '.join(MCP_REVISIONS)}"
            )
        self.revision = answer.protocol_version
        self.server = answer.server_info
        self.capabilities = answer.capabilities
        self.conn.notify("notifications/initialized", McpEmpty())
        return await self.declaration()

    def _capabilities(self) -> dict[str, Json]:
        """What bingo offers a server: elicitation (form mode: the empty object, as every
        revision reads it), and sampling only where the person allowed it; never roots."""
        offered: dict[str, Json] = {"elicitation": {}}
        if self.samples:
            offered["sampling"] = {}
        return offered

    async def discover(self, host_version: str) -> InitializeResult:
        """The stateless revision's `server/discover`, then the lists, as bingo's handshake
        answer.

        Raises:
            Refused: it speaks no MCP revision bingo speaks.
            PluginError: a call failed.
        """
        self.revision = MODERN
        self._modern = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": self._capabilities(),
            "io.modelcontextprotocol/clientInfo": {"name": "bingo", "version": host_version},
        }
        found = await self.request("server/discover", McpDiscover(), McpDiscovered)
        if MODERN not in found.supported_versions:
            self.revision = None
            spoken = ", ".join(cut(version, 40) for version in found.supported_versions[:5]) or "none"
            raise Refused(f"it speaks MCP revisions {spoken}, but bingo speaks only {', '.join(MCP_REVISIONS)}")
        self.capabilities = found.capabilities
        about = json_object(json_object(found.meta).get("io.modelcontextprotocol/serverInfo"))
        self.server = McpServerInfo(name=str(about.get("name", "")), version=str(about.get("version", "")))
        return await self.declaration()

    async def declaration(self) -> InitializeResult:
        """What the server declares now, as bingo's InitializeResult (it lists again)."""
        caps = self.capabilities

        async def none() -> list[Any]:
            return []

        async def no() -> bool:
            return False

        # The three lists at once: one round trip's wait, not three.
        tools, prompts, resources = await asyncio.gather(
            self._pages("tools/list", McpToolsPage, "tools") if "tools" in caps else none(),
            self._pages("prompts/list", McpPromptsPage, "prompts") if "prompts" in caps else none(),
            self._has_resources() if "resources" in caps else no(),
        )
        specs = [
            ToolSpec(name=tool.name, description=tool.description or "", input_schema=tool.input_schema)
            for tool in tools
        ]
        self.tools = {tool.name for tool in tools}
        if resources and RESOURCES_TOOL not in self.tools:
            specs.append(
                ToolSpec(
                    name=RESOURCES_TOOL,
                    description=f"Lists the resources MCP server {self.plugin} offers, or reads one by its uri.",
                    input_schema=_RESOURCES_SCHEMA,
                )
            )
        self.prompts = {prompt.name: prompt for prompt in prompts}
        return InitializeResult(
            protocol=PROTOCOL_VERSION,
            name=self.plugin,
            version=self.server.version,
            tools=specs,
            commands=[prompt_command(self.plugin, prompt) for prompt in prompts],
        )

    async def _has_resources(self) -> bool:
        """Whether the server lists any resource (a capability alone is often just a
        library's default)."""
        try:
            raw = await self.request(
                "resources/list", McpCursor(), msgspec.Raw, deadline=self.conn.deadline("initialize")
            )
        except (MethodNotFound, BadParams):
            return False  # it declares resources and has none to list: no tool for them
        listed = json_object(ANY_JSON.decode(raw)).get("resources")
        return is_array(listed) and bool(listed)

    async def _pages(self, method: str, page: type[McpToolsPage | McpPromptsPage], field: str) -> list[Any]:
        found: list[Any] = []
        cursor: str | None = None
        for _ in range(PAGES_MAX):
            answer = await self.request(
                method, McpCursor(cursor=cursor), page, deadline=self.conn.deadline("initialize")
            )
            found.extend(getattr(answer, field))
            cursor = answer.next_cursor
            if not cursor:
                break
        return found
