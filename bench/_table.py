"""The printed table: one row per comparison, its ratio, the target and ✓/✗.

Owns formatting only: figures in, lines out. It never fails a run over a missed target.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

__all__ = ["Row", "median", "p99", "render", "us", "ms", "rate"]


def median(samples: list[float]) -> float:
    """The median."""
    return statistics.median(samples)


def p99(samples: list[float]) -> float:
    """The 99th percentile (nearest rank)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def us(seconds: float) -> str:
    """Seconds as microseconds."""
    return f"{seconds * 1e6:,.1f} µs"


def ms(seconds: float) -> str:
    """Seconds as milliseconds."""
    return f"{seconds * 1e3:,.1f} ms"


def rate(per_second: float) -> str:
    """A rate."""
    return f"{per_second:,.0f}/s"


@dataclass(slots=True, frozen=True)
class Row:
    """One comparison. `ratio` is `measured / against` for times, `against / measured` for
    rates, as `ratio_name` says; `target` is a sentence or empty; `met` None when there is
    no target."""

    what: str
    measured: str
    against: str
    ratio: str
    target: str = ""
    met: bool | None = None


def render(rows: list[Row]) -> str:
    """The table as text, columns aligned."""
    header = Row("row", "bingo", "against", "ratio", "target", None)
    cells = [
        (r.what, r.measured, r.against, r.ratio, r.target + ("" if r.met is None else (" ✓" if r.met else " ✗")))
        for r in [header, *rows]
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(4)]
    lines: list[str] = []
    for n, c in enumerate(cells):
        lines.append(
            "  ".join(
                [c[0].ljust(widths[0]), c[1].rjust(widths[1]), c[2].ljust(widths[2]), c[3].rjust(widths[3]), c[4]]
            ).rstrip()
        )
        if n == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)
