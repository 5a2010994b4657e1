"""`bingo --check-plugin DIR|.mcp.json`: everything a plugin author can get wrong, one line each.

The checker reads the manifest by bingo's own rules (`_manifest.py`), starts the plugin with
bingo's own plugin handle and probes it on the wire (`_run.py`), checks what its handshake
declares by the wire types themselves (`_declared.py`, `_schema.py`) and reports every
check as a line, ✓ or ✗ with the fix, or as one JSON document (`_report.py`). An MCP
server is started and checked as one (`_server.py`), and so is each server of a `.mcp.json`
(`_mcp_json.py`). A plugin's `dataDir` is a temporary directory, removed afterwards. Its words for
a problem are the ones bingo says at run time (`bridge/_problems.py`). It calls a tool only
when asked to (`call`), and never a provider, compactor, command or service.

It does not print (the caller does, escaped) and never raises for what a plugin does.
"""

from __future__ import annotations

from ._check import check_plugin
from ._mcp_json import check_mcp_json
from ._report import Check, McpJsonReport, Report

__all__ = ["Check", "McpJsonReport", "Report", "check_mcp_json", "check_plugin"]
