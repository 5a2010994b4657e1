"""What drawing the model's text as markdown costs the terminal, beside drawing it as plain
lines (ADR-0017).

A 16 KB response (100 paragraphs with bold and inline code, 20 fenced Python blocks) is
streamed in 20-character deltas through `TerminalSurface` onto a 120-column console writing
to memory, once as markdown (what the terminal does) and once as the floor: the same deltas
printed as whole escaped lines of plain `Text` (what it did before). Each live-area redraw
a delta asks for is counted in (`live()` is called once per delta, as prompt_toolkit's
invalidate would at most). Run alone it prints the median of each and the cost per block:
`.venv/bin/python bench/terminal.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import statistics
import time
from io import StringIO

from rich.console import Console
from rich.text import Text

from bingo.surfaces import escape
from bingo.surfaces.terminal import TerminalSurface

__all__ = ["RESPONSE", "floor", "markdown"]

_CODE = "```python\ndef total(rows):\n    return sum(r.count for r in rows if r.ok)\n\n\nprint(total([]))\n```\n\n"
RESPONSE = "".join(
    (
        f"Paragraph {n} has **bold words**, `inline code` and a [link](https://example.com/{n}) in a sentence long enough to wrap once on a terminal.\n\n"
        + (_CODE if n % 5 == 0 else "")
    )
    for n in range(100)
)
_DELTA = 20


def _deltas() -> list[str]:
    return [RESPONSE[i : i + _DELTA] for i in range(0, len(RESPONSE), _DELTA)]


def _console() -> Console:
    return Console(file=StringIO(), width=120, color_system="standard", force_terminal=True)


def markdown() -> float:
    """Seconds to stream RESPONSE through the terminal surface."""
    surface = TerminalSurface(console=_console())
    start = time.perf_counter()
    for delta in _deltas():
        surface.text(delta)
        surface.live()
    surface.end()
    return time.perf_counter() - start


def floor() -> float:
    """Seconds to print the same deltas as whole plain lines (the surface before markdown)."""
    console = _console()
    partial = ""
    start = time.perf_counter()
    for delta in _deltas():
        partial += delta
        if "\n" in partial:
            done, _, partial = partial.rpartition("\n")
            console.print(Text(escape(done)), soft_wrap=True)
        escape(partial)
    if partial:
        console.print(Text(escape(partial)), soft_wrap=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    # Warm: rich's lexers and markdown parser are imported on first use.
    markdown()
    floor()
    drawn = statistics.median(markdown() for _ in range(runs))
    plain = statistics.median(floor() for _ in range(runs))
    blocks = RESPONSE.count("\n\n")
    print(f"a {len(RESPONSE) / 1000:.0f} KB response in {len(_deltas())} deltas, {blocks} blocks, median of {runs}:")
    print(
        f"  markdown {drawn * 1000:.1f} ms ({drawn / blocks * 1e6:.0f} µs a block)   plain lines {plain * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
