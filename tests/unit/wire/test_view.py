"""Every View has a text fold; a table folds to aligned columns under a header row."""

from __future__ import annotations

import msgspec

from bingo.wire import CodeView, ListView, MarkdownView, StackView, TableView, TextView, View, fold


def test_table_folds_to_aligned_columns_under_a_header_row() -> None:
    view = TableView(
        title="notes.txt", columns=["what", "count"], rows=[["words", 12], ["lines", 3], ["characters", 70]]
    )
    assert fold(view) == (
        "notes.txt\nwhat        count\n----------  -----\nwords          12\nlines           3\ncharacters     70"
    )


def test_table_with_ragged_rows_and_nulls_folds_without_error() -> None:
    view = TableView(columns=["a"], rows=[["x", None, 1.5], []])
    assert fold(view).splitlines()[0].startswith("a")


def test_lists_and_stacks_compose_their_children() -> None:
    view = StackView(
        children=[
            TextView(text="top"),
            ListView(items=[TextView(text="one"), CodeView(text="x = 1\ny = 2")], ordered=True),
        ]
    )
    assert fold(view) == "top\n\n1. one\n2. x = 1\n   y = 2"
    assert fold(ListView(items=[MarkdownView(text="**b**")])) == "- **b**"


def test_views_round_trip_through_the_wire_tagged_by_type() -> None:
    view = StackView(children=[TableView(columns=["a"], rows=[[1]]), TextView(text="t")])
    data = msgspec.json.encode(view)
    assert b'"type":"stack"' in data and b'"type":"table"' in data
    assert msgspec.json.decode(data, type=View) == view


def test_unknown_fields_are_ignored_on_decode() -> None:
    decoded = msgspec.json.decode(b'{"type":"text","text":"hi","future":1}', type=View)
    assert decoded == TextView(text="hi")
