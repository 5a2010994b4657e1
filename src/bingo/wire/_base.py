"""The one base every wire type derives from.

Owns the encoding conventions of the plugin wire: camelCase field names, frozen and
keyword-only construction, defaults left out of what is sent, unknown fields ignored on
decode (msgspec's default). It deliberately holds no types of its own.
"""

from typing import Any, TypeAlias, TypeGuard

import msgspec

__all__ = ["Json", "Wire", "is_array", "is_object"]

Json: TypeAlias = Any
"""Any JSON value: what a JSON Schema, a tool's input or a service's params can be."""


def is_object(value: Json) -> TypeGuard[dict[str, Json]]:
    """True when a JSON value is an object: narrows it for the type checker."""
    return isinstance(value, dict)


def is_array(value: Json) -> TypeGuard[list[Json]]:
    """True when a JSON value is an array: narrows it for the type checker."""
    return isinstance(value, list)


class Wire(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Base of every type that crosses the plugin wire."""
