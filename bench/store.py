"""How many durable frame appends per second the session store makes, beside the limit.

Appends alternate a ~1 kB assistant message and a ~3 kB tool result (a realistic turn),
each its own transaction. `interleaved` (the `bench/run` row) runs, in alternating chunks,
`SessionStore.append` and the limit: a bare sqlite3 `BEGIN IMMEDIATE; INSERT; COMMIT` of
the same pre-encoded bytes into the same schema under the same pragmas (WAL,
`synchronous=NORMAL`). Run alone it also compares both `synchronous` modes: NORMAL (what
bingo uses: durable against process death) and FULL (also durable against power loss: an
fsync per append). Prints; never asserts.
Run: `.venv/bin/python bench/store.py [--appends N] [--dir D]`. The directory defaults to
a temporary one on the system's temp filesystem; if that is a tmpfs, fsync is free and FULL
looks as cheap as NORMAL, so pass `--dir` on a real disk.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Literal

from bingo.kernel.frames import AssistantFrame, Frame, ToolResultFrame, encode_frame
from bingo.store import SessionStore
from bingo.wire import Message, TextBlock, TextPart, ToolOutput

__all__ = ["frames", "interleaved"]

Mode = Literal["NORMAL", "FULL"]
_MODES: tuple[Mode, ...] = ("NORMAL", "FULL")

_RAW_SCHEMA = """
CREATE TABLE frames (
    session TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, time REAL NOT NULL,
    data BLOB NOT NULL, PRIMARY KEY (session, seq)
) WITHOUT ROWID
"""


def frames() -> tuple[Frame, Frame]:
    """The two frames a turn appends, alternately."""
    assistant = AssistantFrame(message=Message(role="assistant", content=[TextBlock(text="word " * 200)]), turn=1)
    result = ToolResultFrame(
        call_id="call-1",
        output=ToolOutput(parts=[TextPart(text="line of output\n" * 200)]),
        turn=1,
    )
    return assistant, result


def _run(directory: Path, mode: Mode, appends: int) -> tuple[float, list[float]]:
    """Appends per second over the whole run, and each append's latency in seconds."""
    path = directory / f"bench-{mode.lower()}.db"
    pair = frames()
    latencies: list[float] = []
    with SessionStore(path, synchronous=mode) as store:
        session = store.create("/bench")
        started = time.perf_counter()
        for i in range(appends):
            before = time.perf_counter()
            store.append(session, pair[i % 2])
            latencies.append(time.perf_counter() - before)
        elapsed = time.perf_counter() - started
    return appends / elapsed, latencies


def _raw(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(_RAW_SCHEMA)
    return conn


def interleaved(directory: Path, appends: int, chunk: int = 250) -> tuple[float, float]:
    """Appends per second through SessionStore and through bare sqlite3 (the limit), measured
    in alternating chunks of `chunk` appends, `appends` each in all."""
    pair = frames()
    blobs = [(encode_frame(frame), str(frame.__struct_config__.tag)) for frame in pair]
    store_time = raw_time = 0.0
    clock = time.perf_counter
    with SessionStore(directory / "store.db") as store:
        session = store.create("/bench")
        conn = _raw(directory / "raw.db")
        try:
            done = 0
            while done < appends:
                start = clock()
                for i in range(done, done + chunk):
                    store.append(session, pair[i % 2])
                middle = clock()
                for i in range(done, done + chunk):
                    data, kind = blobs[i % 2]
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("INSERT INTO frames VALUES (?, ?, ?, ?, ?)", ("bench", i, kind, time.time(), data))
                    conn.execute("COMMIT")
                end = clock()
                store_time += middle - start
                raw_time += end - middle
                done += chunk
        finally:
            conn.close()
    return done / store_time, done / raw_time


def main() -> None:
    parser = argparse.ArgumentParser(description="durable frame appends per second")
    parser.add_argument("--appends", type=int, default=5000)
    parser.add_argument("--dir", type=Path, default=None, help="where the bench databases go")
    args = parser.parse_args()
    appends: int = args.appends
    sizes = [len(encode_frame(frame)) for frame in frames()]
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
        store_rate, raw_rate = interleaved(Path(tmp), appends)
        print(f"interleaved with bare sqlite3 (NORMAL): store {store_rate:,.0f}/s, raw {raw_rate:,.0f}/s")


if __name__ == "__main__":
    main()
