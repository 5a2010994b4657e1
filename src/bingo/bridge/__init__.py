"""The plugin bridge: plugin processes, the JSON-RPC wire to them, and one proxy per
capability that implements the kernel's own interface with wire calls.

The JSON-RPC endpoint beneath it (framing, messages, the connection: ids, deadlines, the
one exception → wire error boundary) is a package of its own, `bingo.endpoint`; above it
are the proxies (`tool.py`, `command.py`, `contributor.py`,
`compactor.py`, `provider.py`, `hook.py`, `service.py`). `process.py` owns one child
process, `_plugin.py` one plugin's processes one after another (its handshake in
`handshake.py`, its respawn pacing in `_backoff.py`), and `host.py` all of them. The kernel
never imports this package.

Each export is imported when first asked for (PEP 562), so that a caller pays only for what
it asks for: importing the package imports none of its modules, and importing one of them
only what that one needs.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: importing the package imports nothing else
if TYPE_CHECKING:
    from ._names import bridged_name, named_plugin
    from .discovery import MCP_JSON, PluginSource, discover
    from .host import PluginHost, PluginStatus
    from .listing import PluginsCommand
    from .local import save_local
    from .manifest import Manifest, McpServer, check_name, mcp_manifest, read_manifest
    from .signin import mcp_login, mcp_logout
    from .trust import (
        TrustState,
        admitted,
        ask_trust,
        keep_written,
        left_out_notice,
        remember,
        trust_line,
        trust_state,
        trust_summary,
    )

__all__ = [
    "MCP_JSON",
    "Manifest",
    "McpServer",
    "PluginHost",
    "PluginSource",
    "PluginStatus",
    "PluginsCommand",
    "TrustState",
    "admitted",
    "ask_trust",
    "bridged_name",
    "check_name",
    "discover",
    "keep_written",
    "left_out_notice",
    "mcp_login",
    "mcp_logout",
    "mcp_manifest",
    "named_plugin",
    "read_manifest",
    "remember",
    "save_local",
    "trust_line",
    "trust_state",
    "trust_summary",
]

_HOMES = {
    "MCP_JSON": ".discovery",
    "Manifest": ".manifest",
    "McpServer": ".manifest",
    "check_name": ".manifest",
    "mcp_manifest": ".manifest",
    "mcp_login": ".signin",
    "mcp_logout": ".signin",
    "PluginHost": ".host",
    "PluginSource": ".discovery",
    "PluginStatus": ".host",
    "PluginsCommand": ".listing",
    "TrustState": ".trust",
    "admitted": ".trust",
    "ask_trust": ".trust",
    "bridged_name": "._names",
    "discover": ".discovery",
    "keep_written": ".trust",
    "left_out_notice": ".trust",
    "named_plugin": "._names",
    "read_manifest": ".manifest",
    "remember": ".trust",
    "save_local": ".local",
    "trust_line": ".trust",
    "trust_state": ".trust",
    "trust_summary": ".trust",
}
"""Where each export lives."""


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
