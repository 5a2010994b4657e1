"""The one base every wire type derives from.

Owns the encoding conventions of the plugin wire: camelCase field names, frozen and
keyword-only construction, defaults left out of what is sent, unknown fields ignored on
decode (msgspec's default). It deliberately holds no types of its own.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

__all__ = ["Json", "Wire"]

Json: TypeAlias = Any
"""Any JSON value: what a JSON Schema, a tool's input or a service's params can be."""


class Wire(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Base of every type that crosses the plugin wire."""
