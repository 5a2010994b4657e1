"""bingo: an agent host whose extensions are cross-process plugins speaking line-delimited
JSON-RPC.

This module holds only the version, so that importing any part of bingo costs nothing more:
the command line is `bingo.cli`, and each package's `__init__` says what it exports.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
"""bingo's version (what `initialize` tells a plugin as `hostVersion`); a test keeps it
equal to pyproject.toml's, so no start-up pays for `importlib.metadata`."""
