"""What the built-in `grep` costs over a real tree of source, beside `re` doing the same.

Three patterns (one that matches nothing, two that match hundreds of lines) over `--root`
(default: the installed `pip` package's own source, ~150,000 lines of Python), each searched
by `GrepTool` (RE2, blocks of lines searched whole: ADR-0051) and by a bare loop: the same
walk, each file iterated by line and searched with Python's `re`, nothing kept or bounded
(what is between them is the tool's own: its line bounds, stop checks and output). Their
rounds alternate; prints the median of `--rounds` for each. Never asserts.
Run: `.venv/bin/python bench/grep.py [--root DIR] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import threading
import time
from pathlib import Path

from bingo.kernel.interfaces import ToolCall
from bingo.tools import GrepTool
from bingo.tools._common import BINARY_SNIFF, is_binary, walk_files

PATTERNS = ("def frobnicate", r"class \w+Error", "import (os|sys)$")


def _tool(root: Path, pattern: str) -> None:
    call = ToolCall(call_id="c", input={"pattern": pattern}, cwd=str(root), session="s", turn=1)
    asyncio.run(GrepTool().call(call))


def _floor(root: Path, pattern: str) -> int:
    regex = re.compile(pattern)
    found = 0
    for path in walk_files(root, threading.Event()):
        with open(path, "rb") as raw:
            if is_binary(raw.read(BINARY_SNIFF)):
                continue
            raw.seek(0)
            for piece in raw:
                if regex.search(piece.decode("utf-8", errors="replace").rstrip("\r\n")) is not None:
                    found += 1
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    import pip

    parser.add_argument("--root", type=Path, default=Path(os.path.dirname(pip.__file__)))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"grep over {args.root}, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
    for pattern in PATTERNS:
        tool: list[float] = []
        floor: list[float] = []
        for _ in range(args.rounds):
            for times, step in ((tool, _tool), (floor, _floor)):
                started = time.perf_counter()
                step(args.root, pattern)
                times.append(time.perf_counter() - started)
        ours, theirs = statistics.median(tool), statistics.median(floor)
        print(
            f"  {pattern!r:22} grep {ours * 1000:6.1f} ms   bare re loop {theirs * 1000:6.1f} ms   {ours / theirs:.2f}×"
        )


if __name__ == "__main__":
    main()
