"""How many durable frame appends per second the session store makes.

Appends alternate a ~1 kB assistant message and a ~3 kB tool result (a realistic turn),
each its own transaction, under both `synchronous` modes: NORMAL (what bingo uses:
durable against process death) and FULL (also durable against power loss: an fsync per
append). Prints; never asserts. Run: `.venv/bin/python bench/store.py [--appends N] [--dir D]`.
The directory defaults to a temporary one on the system's temp filesystem; if that is a
tmpfs, fsync is free and FULL looks as cheap as NORMAL, so pass `--dir` on a real disk.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Literal

from bingo.kernel.frames import AssistantFrame, Frame, ToolResultFrame, encode_frame
from bingo.store import SessionStore
from bingo.wire import Message, TextBlock, TextPart, ToolOutput

Mode = Literal["NORMAL", "FULL"]
_MODES: tuple[Mode, ...] = ("NORMAL", "FULL")


def _frames() -> tuple[Frame, Frame]:
    assistant = AssistantFrame(
        message=Message(role="assistant", content=[TextBlock(text="word " * 200)]), turn=1
    )
    result = ToolResultFrame(
        call_id="call-1",
        output=ToolOutput(parts=[TextPart(text="line of output\n" * 200)]),
        turn=1,
    )
    return assistant, result


def _run(directory: Path, mode: Mode, appends: int) -> tuple[float, list[float]]:
    """Appends per second over the whole run, and each append's latency in seconds."""
    path = directory / f"bench-{mode.lower()}.db"
    frames = _frames()
    latencies: list[float] = []
    with SessionStore(path, synchronous=mode) as store:
        session = store.create("/bench")
        started = time.perf_counter()
        for i in range(appends):
            before = time.perf_counter()
            store.append(session, frames[i % 2])
            latencies.append(time.perf_counter() - before)
        elapsed = time.perf_counter() - started
    return appends / elapsed, latencies


def main() -> None:
    parser = argparse.ArgumentParser(description="durable frame appends per second")
    parser.add_argument("--appends", type=int, default=5000)
    parser.add_argument("--dir", type=Path, default=None, help="where the bench databases go")
    args = parser.parse_args()
    appends: int = args.appends
    sizes = [len(encode_frame(frame)) for frame in _frames()]
    print(f"frames: assistant {sizes[0]} B, tool result {sizes[1]} B, alternating")
    print(f"appends: {appends} per mode, each its own transaction")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"directory: {tmp}")
        for mode in _MODES:
            rate, latencies = _run(Path(tmp), mode, appends)
            cuts = statistics.quantiles(latencies, n=100)
            print(
                f"synchronous={mode:<6}  {rate:>9,.0f} appends/s"
                f"   p50 {cuts[49] * 1e6:>7.0f} µs   p99 {cuts[98] * 1e6:>7.0f} µs"
                + ("   (bingo's choice)" if mode == "NORMAL" else "")
            )


if __name__ == "__main__":
    main()
