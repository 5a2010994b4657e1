"""A tool's `inputSchema`: whether it is a JSON Schema object a model API takes, and an input
made from it for `--call`.

Owns the structural rules an author gets wrong (the top level must be an object schema;
`type` names JSON's types; `properties` holds schemas; `required` names properties) and the
one input made from a schema (its `const`, `enum`, `default` or `examples`, else the least
value of its type, with every required property). It is no validator of documents against
a schema (nothing in bingo validates a tool's input: the plugin does) and follows no `$ref`.
"""

from __future__ import annotations

from ...wire import Json, is_array, is_object

__all__ = ["sample", "schema_problem"]

_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_DEPTH = 32
"""Deeper than any real input schema: past it, a schema is neither checked nor sampled further."""


def _type_problem(value: Json, where: str) -> str | None:
    names = value if is_array(value) else [value]
    for name in names:
        if not isinstance(name, str) or name not in _TYPES:
            return f"has `{where}type` {name!r}, which is none of JSON Schema's types ({', '.join(sorted(_TYPES))})"
    return None


def _problem(schema: Json, where: str, depth: int) -> str | None:
    if isinstance(schema, bool) and where:
        return None  # `true` and `false` are schemas too, below the top
    if not is_object(schema):
        return f"has `{where or '.'}` that is not an object"
    if depth > _DEPTH:
        return None
    if "type" in schema:
        problem = _type_problem(schema["type"], where)
        if problem is not None:
            return problem
    properties = schema.get("properties")
    if properties is not None:
        if not is_object(properties):
            return f"has `{where}properties` that is not an object of schemas"
        for name, sub in properties.items():
            problem = _problem(sub, f"{where}properties.{name}.", depth + 1)
            if problem is not None:
                return problem
    required = schema.get("required")
    if required is not None:
        if not is_array(required) or not all(isinstance(name, str) for name in required):
            return f"has `{where}required` that is not an array of property names"
        if is_object(properties):
            missing = [name for name in required if name not in properties]
            if missing:
                return f"requires {', '.join(map(repr, missing))}, which `{where}properties` does not have"
    items = schema.get("items")
    if items is not None:
        problem = _problem(items, f"{where}items.", depth + 1)
        if problem is not None:
            return problem
    enum = schema.get("enum")
    if enum is not None and (not is_array(enum) or not enum):
        return f"has `{where}enum` that is not a non-empty array"
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if options is None:
            continue
        if not is_array(options) or not options:
            return f"has `{where}{key}` that is not a non-empty array of schemas"
        for index, sub in enumerate(options):
            problem = _problem(sub, f"{where}{key}[{index}].", depth + 1)
            if problem is not None:
                return problem
    return None


def schema_problem(schema: Json) -> str | None:
    """Why `schema` is not an input schema a model API takes (words after "its inputSchema"),
    or None when it is one."""
    if not is_object(schema):
        return "is not an object"
    kind = schema.get("type")
    if kind != "object":
        return f'has type {kind!r} at the top: a tool\'s input is an object ("type": "object")'
    return _problem(schema, "", 0)


def _number(schema: dict[str, Json], integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    if isinstance(low, (int, float)) and not isinstance(low, bool):
        value = low + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
        return int(value) if integer else value
    high = schema.get("maximum")
    if isinstance(high, (int, float)) and not isinstance(high, bool) and high < 0:
        return int(high) if integer else high
    return 1


def sample(schema: Json, depth: int = 0) -> Json:
    """An input that `schema` describes: what it names (const, enum, default, examples),
    else the least value of its type, objects with each required property."""
    if not is_object(schema) or depth > _DEPTH:
        return None
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    for key in ("enum", "examples"):
        listed = schema.get(key)
        if is_array(listed) and listed:
            return listed[0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if is_array(options) and options:
            return sample(options[0], depth + 1)
    kind = schema.get("type")
    if is_array(kind):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if is_object(properties) else {}
        required = schema.get("required")
        names = [name for name in required if isinstance(name, str)] if is_array(required) else []
        return {name: sample(properties.get(name, {}), depth + 1) for name in names}
    if kind == "array":
        least = schema.get("minItems")
        count = least if isinstance(least, int) and not isinstance(least, bool) and 0 < least <= 16 else 0
        return [sample(schema.get("items", {}), depth + 1) for _ in range(count)]
    if kind == "string":
        least = schema.get("minLength")
        text = "bingo-check"
        if isinstance(least, int) and not isinstance(least, bool) and least > len(text):
            text = text.ljust(min(least, 4096), "x")
        return text
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return False
    return None
