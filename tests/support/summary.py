"""The figures the fault, fuzz and load suites report at the end of a run (issue 5, part 7).

A test records a figure under a section (`record("zoo", "faults tried", 22)`, or
`add("fuzz", "inputs", 2000)` to accumulate); `tests/conftest.py` prints every section in
its `pytest_terminal_summary`. Figures live in this process only: nothing is written to
disk, and a run that skips a suite simply shows fewer lines. It does not judge the figures:
the tests that record them assert their bounds.
"""

from __future__ import annotations

__all__ = ["Figure", "add", "clear", "figures", "lines", "record"]

Figure = int | float | str

_FIGURES: dict[str, dict[str, Figure]] = {}


def record(section: str, key: str, value: Figure) -> None:
    """Set the figure `key` of `section` to `value`."""
    _FIGURES.setdefault(section, {})[key] = value


def add(section: str, key: str, amount: int | float = 1) -> None:
    """Add `amount` to the figure `key` of `section` (a missing figure counts from 0)."""
    figures = _FIGURES.setdefault(section, {})
    current = figures.get(key, 0)
    figures[key] = (current if isinstance(current, (int, float)) else 0) + amount


def figures() -> dict[str, dict[str, Figure]]:
    """A copy of every figure, by section."""
    return {section: dict(values) for section, values in _FIGURES.items()}


def clear() -> None:
    """Forget every figure (for the summary's own tests)."""
    _FIGURES.clear()


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
