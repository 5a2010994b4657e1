"""The plugin bridge: plugin processes, the JSON-RPC wire to them, and one proxy per
capability that implements the kernel's own interface with wire calls.

Three layers, each unaware of the ones above it: framing (`_framing.py`, bytes ↔ one
message per line), the connection (`connection.py`, ids, deadlines, the one exception →
wire error boundary) and the proxies (`tool.py`, `command.py`, `contributor.py`,
`compactor.py`, `provider.py`, `hook.py`, `service.py`). `process.py` owns one child
process; `host.py` owns them all. The kernel never imports this package.
"""

from ._names import bridged_name
from .discovery import PluginSource, discover
from .host import PluginHost, PluginStatus
from .listing import PluginsCommand
from .manifest import Manifest, read_manifest
from .trust import TrustState, admit, remember, trust_line, trust_state

__all__ = [
    "Manifest",
    "PluginHost",
    "PluginSource",
    "PluginStatus",
    "PluginsCommand",
    "TrustState",
    "admit",
    "bridged_name",
    "discover",
    "read_manifest",
    "remember",
    "trust_line",
    "trust_state",
]
