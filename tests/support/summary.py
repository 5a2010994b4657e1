"""The figures the fault, fuzz and load suites report at the end of a run (issue 5, part 7).

A test records a figure under a section (`record("zoo", "faults tried", 22)`, or
`add("fuzz", "inputs", 2000)` to accumulate); `tests/conftest.py` prints every section in
its `pytest_terminal_summary`. Figures live in the process that runs the test: nothing is
written to disk, and a run that skips a suite simply shows fewer lines. Under pytest-xdist
each worker hands its figures to the controller as it finishes (`export`, then `merge` in
tests/conftest.py): a recorded figure keeps the last value, an added one sums over workers.
It does not judge the figures: the tests that record them assert their bounds.
"""

from __future__ import annotations

__all__ = ["Figure", "add", "clear", "export", "figures", "lines", "merge", "record"]

Figure = int | float | str

_FIGURES: dict[str, dict[str, Figure]] = {}
_ADDED: set[tuple[str, str]] = set()
"""The figures `add` made: they sum when workers' figures merge."""


def record(section: str, key: str, value: Figure) -> None:
    """Set the figure `key` of `section` to `value`."""
    _FIGURES.setdefault(section, {})[key] = value


def add(section: str, key: str, amount: int | float = 1) -> None:
    """Add `amount` to the figure `key` of `section` (a missing figure counts from 0)."""
    figures = _FIGURES.setdefault(section, {})
    current = figures.get(key, 0)
    figures[key] = (current if isinstance(current, (int, float)) else 0) + amount
    _ADDED.add((section, key))


def figures() -> dict[str, dict[str, Figure]]:
    """A copy of every figure, by section."""
    return {section: dict(values) for section, values in _FIGURES.items()}


def clear() -> None:
    """Forget every figure (for the summary's own tests)."""
    _FIGURES.clear()
    _ADDED.clear()


def export() -> dict[str, list[list[object]]]:
    """Every figure as plain lists (what an xdist worker can send): `recorded` and `added`,
    each a list of [section, key, value]."""
    recorded: list[list[object]] = []
    added: list[list[object]] = []
    for section, values in _FIGURES.items():
        for key, value in values.items():
            (added if (section, key) in _ADDED else recorded).append([section, key, value])
    return {"recorded": recorded, "added": added}


def merge(exported: dict[str, list[list[object]]]) -> None:
    """Take in another process's `export`: recorded figures set, added ones accumulate."""
    for section, key, value in exported.get("recorded", []):
        if isinstance(section, str) and isinstance(key, str) and isinstance(value, (int, float, str)):
            record(section, key, value)
    for section, key, value in exported.get("added", []):
        if isinstance(section, str) and isinstance(key, str) and isinstance(value, (int, float)):
            add(section, key, value)


def _show(value: Figure) -> str:
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return value


def lines() -> list[str]:
    """The summary as text lines: one header per section, then `key: value` rows, in the
    order the sections and keys were first recorded."""
    out: list[str] = []
    for section, values in _FIGURES.items():
        out.append(f"{section}:")
        width = max((len(key) for key in values), default=0)
        out.extend(f"  {key:<{width}}  {_show(value)}" for key, value in values.items())
    return out
