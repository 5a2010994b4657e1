"""`bingo --check-plugin DIR`: everything a plugin author can get wrong, one line each.

The checker reads the manifest by bingo's own rules (`_manifest.py`), starts the plugin with
bingo's own plugin handle and probes it on the wire (`_run.py`), checks what its handshake
declares by the wire types themselves (`_declared.py`, `_schema.py`) and reports every
check as a line, ✓ or ✗ with the fix, or as one JSON document (`_report.py`). Its words for
a problem are the ones bingo says at run time (`bridge/_problems.py`). It calls a tool only
when asked to (`call`), and never a provider, compactor, command or service.

It does not print (the caller does, escaped) and never raises for what a plugin does.
"""

from __future__ import annotations

from ._check import check_plugin
from ._report import Check, Report

__all__ = ["Check", "Report", "check_plugin"]
