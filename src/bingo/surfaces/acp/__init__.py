"""The editor surface: `bingo --acp`, bingo as an Agent Client Protocol agent that an editor
(Zed, JetBrains, Neovim's plugins) starts and talks to over stdio (INTERFACE.md §7,
docs/editors.md). Imported only when it runs."""

from ._content import McpServerSpec, mcp_servers, prompt_content
from ._markdown import diffs_of, markdown
from ._schema import ACP_VERSION
from ._serve import HELD_NOTICES, AcpLog, HostMcp, MakeSession, serve_acp
from ._session import AcpSession, Peer

__all__ = [
    "ACP_VERSION",
    "HELD_NOTICES",
    "AcpLog",
    "AcpSession",
    "HostMcp",
    "MakeSession",
    "McpServerSpec",
    "Peer",
    "diffs_of",
    "markdown",
    "mcp_servers",
    "prompt_content",
    "serve_acp",
]
