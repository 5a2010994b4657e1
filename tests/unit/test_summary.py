"""The run's figures cross from pytest-xdist's workers to the controller (tests/support/summary.py):
each worker exports what it recorded; the controller merges every export."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import summary


@pytest.fixture
def fresh() -> Iterator[None]:
    """This process's figures set aside for the test and put back after it."""
    kept = summary.export()
    summary.clear()
    try:
        yield
    finally:
        summary.clear()
        summary.merge(kept)


def _worker(recorded: int, added: int) -> dict[str, list[list[object]]]:
    summary.clear()
    summary.record("load", "plugins at once", recorded)
    summary.record("load", "label", f"seen {recorded}")
    summary.add("zoo", "faults tried", added)
    summary.add("zoo", "faults tried", added)
    exported = summary.export()
    summary.clear()
    return exported


@pytest.mark.usefixtures("fresh")
def test_added_figures_sum_over_workers_and_recorded_ones_keep_the_last() -> None:
    first, second = _worker(20, 3), _worker(21, 5)
    summary.merge(first)
    summary.merge(second)
    assert summary.figures() == {
        "load": {"plugins at once": 21, "label": "seen 21"},
        "zoo": {"faults tried": 16},
    }
    assert summary.lines() == [
        "load:",
        "  plugins at once  21",
        "  label            seen 21",
        "zoo:",
        "  faults tried  16",
    ]


@pytest.mark.usefixtures("fresh")
def test_an_export_is_plain_lists_a_worker_can_send() -> None:
    exported = _worker(1, 1)
    assert exported == {
        "recorded": [["load", "plugins at once", 1], ["load", "label", "seen 1"]],
        "added": [["zoo", "faults tried", 2]],
    }
