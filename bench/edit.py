"""What one `edit` of a 10 MB file costs, beside its floor.

`interleaved` (the `bench/run` row) alternates, call by call, the built-in `EditTool` changing
one line in the middle of a 10 MB, 200 000-line text file (read once first, so the ledger has
seen it; each edit then counts as seen) and the floor: reading the same file's bytes and
writing them back with `write_atomic` (temp file, fsync, rename, fsync the directory), which
any edit that cannot lose the file must do. The difference is bingo's own work: decoding,
hashing it twice (the check against what was read, and what was written), finding the
string, counting lines up to it, encoding, and the diff of the few lines it touched.
Prints nothing; run alone it prints median and p99: `.venv/bin/python bench/edit.py [--edits N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bingo.kernel.atomic import write_atomic
from bingo.kernel.interfaces import ToolCall
from bingo.tools import EditTool, ReadTool
from bingo.tools._common import Seen

__all__ = ["LINES", "interleaved"]

LINES = 200_000
"""Lines of the edited file: 50 bytes each, 10 MB in all."""
clock = time.perf_counter


def _file(directory: Path) -> Path:
    path = directory / "big.txt"
    path.write_text(
        "".join(f"line {n:07d} of a large file, padded to 50 bytes.\n" for n in range(LINES)), encoding="utf-8"
    )
    return path


def interleaved(directory: Path, edits: int) -> tuple[list[float], list[float], int]:
    """Seconds per edit and per floor (read + atomic write), `edits` of each, alternating;
    and the file's size in bytes."""
    path = _file(directory)
    seen = Seen()
    read, edit = ReadTool(seen), EditTool(seen)
    middle = f"line {LINES // 2:07d} of"
    marks = (middle, middle.upper())

    def call(tool: ReadTool | EditTool, input: dict[str, str | bool]) -> None:
        output = asyncio.run(
            tool.call(ToolCall(call_id="b", input=dict(input), cwd=str(directory), session="bench", turn=1))
        )
        if output.is_error:
            raise RuntimeError(f"bench edit failed: {output.parts}")

    call(read, {"path": path.name})
    tool_times: list[float] = []
    floor_times: list[float] = []
    for n in range(edits):
        old, new = marks[n % 2], marks[(n + 1) % 2]
        start = clock()
        call(edit, {"path": path.name, "oldString": old, "newString": new})
        tool_times.append(clock() - start)
        start = clock()
        write_atomic(path, path.read_bytes())
        floor_times.append(clock() - start)
    return tool_times, floor_times, path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description="the cost of edit on a 10 MB file")
    parser.add_argument("--edits", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bingo-bench-edit-") as tmp:
        tool, floor, size = interleaved(Path(tmp), args.edits)
    for name, samples in (("edit", tool), ("read + write_atomic", floor)):
        ordered = sorted(samples)
        print(
            f"{name:>20}: median {statistics.median(samples) * 1e3:.1f} ms, p99 {ordered[int(len(ordered) * 0.99)] * 1e3:.1f} ms ({size:,} bytes)"
        )


if __name__ == "__main__":
    main()
