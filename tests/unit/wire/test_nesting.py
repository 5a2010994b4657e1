"""How deep JSON may nest: `too_deep` against a recursive oracle, and `top_members` reading
the top level of an object too deep to decode."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.wire import MAX_DEPTH, Json, is_array, is_object, too_deep, top_members
from tests.support.examples import examples


def _depth(value: Json) -> int:
    """How deep arrays and objects nest in `value`: the oracle."""
    if is_array(value):
        return 1 + max((_depth(item) for item in value), default=0)
    if is_object(value):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


def _nested(depth: int, *, kind: str = "[", leaf: str = "1") -> bytes:
    opener, closer = ("[", "]") if kind == "[" else ('{"a":', "}")
    return (opener * depth + leaf + closer * depth).encode()


@pytest.mark.parametrize("kind", ["[", "{"])
def test_the_limit_is_exact_for_arrays_and_objects(kind: str) -> None:
    assert not too_deep(_nested(MAX_DEPTH, kind=kind))
    assert too_deep(_nested(MAX_DEPTH + 1, kind=kind))
    assert too_deep(_nested(100_000, kind=kind))
    assert too_deep(_nested(1_000_000, kind=kind))


def test_brackets_inside_strings_and_escapes_are_not_structure() -> None:
    shallow = json.dumps({"text": "[" * 500 + '\\"{' * 300, "rows": [["a[", "}b"]] * 400})
    assert not too_deep(shallow)
    assert not too_deep(shallow.encode())
    # A string holding a backslash, then one holding a quote and brackets: what follows each
    # is structure again.
    for first in ('"\\\\"', '"\\"[[[["'):
        deep = f"[{first}, {'[' * 200}{']' * 200}]"
        assert json.loads(deep) and too_deep(deep) and too_deep(deep.encode())


def test_text_too_short_to_nest_past_the_limit_is_never_scanned() -> None:
    # Unclosed, so not JSON: a decoder fails on it well before any recursion limit.
    assert not too_deep(b"[" * (2 * MAX_DEPTH + 1))
    assert too_deep(b"[" * (2 * MAX_DEPTH + 2))


_leaves = st.none() | st.integers() | st.text(alphabet='ab"\\[]{}\x00\x1b\u202e', max_size=6)
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='k"[\\', max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
)


@settings(derandomize=True, database=None, deadline=None, max_examples=examples(300))
@given(_values, st.sampled_from([0, 1, 2, 5, 16]), st.booleans())
def test_too_deep_agrees_with_the_oracle_on_any_json(value: Json, limit: int, indent: bool) -> None:
    text = json.dumps(value, indent=1 if indent else None)
    expected = _depth(value) > limit
    assert too_deep(text, limit) is expected
    assert too_deep(text.encode(), limit) is expected


def test_top_members_reads_an_object_without_decoding_its_values() -> None:
    deep = _nested(100_000)
    line = b'{"jsonrpc":"2.0", "id" : 7,"result":' + deep + b',"x":"a}[\\"",\n"e":{}}\n'
    members = top_members(line)
    assert members == {"jsonrpc": b'"2.0"', "id": b"7", "result": deep, "x": b'"a}[\\""', "e": b"{}"}
    assert top_members(b"{}") == {}
    assert top_members(b'{"\\u0061":1,"a":2}') == {"a": b"2"}


@pytest.mark.parametrize(
    "text",
    [b"[1]", b'"x"', b"", b'{"a":1', b'{"a":[1}', b'{"a":1}{', b'{"a" "b":1}', b'{"a":1,:2}', b"{1:2}"],
)
def test_top_members_refuses_what_is_not_one_object(text: bytes) -> None:
    assert top_members(text) is None


@settings(derandomize=True, database=None, deadline=None, max_examples=examples(200))
@given(st.dictionaries(st.text(max_size=5), _values, max_size=5))
def test_top_members_gives_back_each_member_as_json_of_it(value: dict[str, Json]) -> None:
    members = top_members(json.dumps(value).encode())
    assert members is not None
    assert {key: msgspec.json.decode(raw) for key, raw in members.items()} == value
