"""The checker's reading of a tool's inputSchema, and the input it makes from one."""

from __future__ import annotations

from typing import Any

import pytest

from bingo.bridge.check._schema import sample, schema_problem


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object"}, None),
        ({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, None),
        ({"type": "object", "properties": {"n": {"type": ["integer", "null"]}, "any": True}}, None),
        ([], "is not an object"),
        ({"properties": {}}, 'has type None at the top: a tool\'s input is an object ("type": "object")'),
        ({"type": "string"}, 'has type \'string\' at the top: a tool\'s input is an object ("type": "object")'),
        (
            {"type": "object", "properties": {"n": {"type": "int"}}},
            "has `properties.n.type` 'int', which is none of JSON Schema's types (array, boolean, integer, null, number, object, string)",
        ),
        ({"type": "object", "properties": []}, "has `properties` that is not an object of schemas"),
        ({"type": "object", "properties": {"a": "string"}}, "has `properties.a.` that is not an object"),
        (
            {"type": "object", "properties": {"a": {}}, "required": ["b"]},
            "requires 'b', which `properties` does not have",
        ),
        ({"type": "object", "required": "a"}, "has `required` that is not an array of property names"),
        (
            {"type": "object", "properties": {"a": {"enum": []}}},
            "has `properties.a.enum` that is not a non-empty array",
        ),
        (
            {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "nope"}}}},
            "has `properties.a.items.type` 'nope', which is none of JSON Schema's types (array, boolean, integer, null, number, object, string)",
        ),
    ],
)
def test_schema_problems_are_named_where_they_are(schema: Any, problem: str | None) -> None:
    assert schema_problem(schema) == problem


def test_the_input_made_from_a_schema_has_every_required_property_of_its_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"enum": ["fast", "slow"]},
            "count": {"type": "integer", "minimum": 3},
            "ratio": {"type": "number", "exclusiveMinimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "deep": {"type": "object", "properties": {"flag": {"type": "boolean"}}, "required": ["flag"]},
            "named": {"type": "string", "default": "given"},
            "either": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            "optional": {"type": "string"},
        },
        "required": ["path", "mode", "count", "ratio", "tags", "deep", "named", "either"],
    }
    assert sample(schema) == {
        "path": "bingo-check",
        "mode": "fast",
        "count": 3,
        "ratio": 1,
        "tags": ["bingo-check", "bingo-check"],
        "deep": {"flag": False},
        "named": "given",
        "either": None,
    }


def test_an_input_is_made_from_a_schema_however_deep_it_nests() -> None:
    schema: dict[str, Any] = {"type": "object"}
    inner = schema
    for _ in range(100):
        inner["properties"] = {"a": {"type": "object"}}
        inner["required"] = ["a"]
        inner = inner["properties"]["a"]
    made = sample(schema)
    depth = 0
    while isinstance(made, dict) and made:
        made, depth = made["a"], depth + 1
    assert 30 <= depth <= 40
    assert schema_problem(schema) is None
