"""The one place a plugin-facing name is built: `plugin__<plugin>__<name>`.

Owns the rewriting of the names of a plugin's tools, providers and compactors, so the
permission grammar (and a person choosing a model) can address them. Nothing else builds
these names by hand.
"""

from __future__ import annotations

__all__ = ["bridged_name"]

_SEPARATOR = "__"


def bridged_name(plugin: str, name: str) -> str:
    """The name the kernel knows a plugin's tool (or provider, or compactor) by."""
    return f"plugin{_SEPARATOR}{plugin}{_SEPARATOR}{name}"
