"""Where bingo's time goes, for the rows `bench/run` marks ✗: `bash bench/run --profile`.

Prints, in order:
  1. `python -X importtime` of a cold `bingo -p "/wordcount notes.txt"`: the 30 imports
     with the largest cumulative time, and the top-level total;
  2. a pyinstrument wall-clock profile of that same cold run (imports, start, waits);
  3. a pyinstrument profile of sequential and 16-in-flight `tool/call`s through the bridge
     (the raw client's cost is printed beside it for scale);
  4. a pyinstrument profile of `PluginHost.start` with one plugin (no cache, then a warm
     declaration cache: nothing spawned) and with 20 plugins (no cache);
  5. a model turn's paths (`_turn_profile.py`, issue 27): `-X importtime` and pyinstrument of
     `bingo -p "hi"` through each built-in provider, cProfile of a 50-step MCP tool loop.
Needs pyinstrument in the bench's venv (`bench/run --profile` installs it). Asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _bingo
import _cold
import _turn_profile
from _raw import RawClient
from pyinstrument import Profiler

CHILD = Path(__file__).with_name("_child.py")
TEXT = "the quick brown fox jumps over the lazy dog " * 4


def _heading(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 76 - len(text)))


def importtime(world: _cold.ColdWorld) -> None:
    """The slowest imports (cumulative µs) of a cold /wordcount."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", _cold.BINGO, "-p", "/wordcount notes.txt"],
        env=world.env,
        cwd=world.project,
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[tuple[int, int, str]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((int(cumulative), int(self_us), name.rstrip()))
    top = sum(cum for cum, _, name in rows if not name.startswith("  "))
    print(f"{len(rows)} modules imported, {top / 1000:.1f} ms at top level (cumulative µs, self µs, module):")
    for cumulative, self_us, name in sorted(rows, reverse=True)[:30]:
        print(f"{cumulative:>9} {self_us:>8}  {name}")


def cold_profile(world: _cold.ColdWorld) -> None:
    """pyinstrument over the whole cold run."""
    launch = str(Path(__file__).with_name("_launch.py"))  # bingo itself leaves by os._exit, before the report
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyinstrument",
            "-i",
            "0.0005",
            "-r",
            "text",
            "-o",
            "/dev/stdout",
            launch,
            "-p",
            "/wordcount notes.txt",
        ],
        env=world.env,
        cwd=world.project,
        capture_output=True,
        text=True,
        check=True,
    )
    keep = [line for line in done.stdout.splitlines() if line.strip() and "frames hidden" not in line]
    print("\n".join(keep[:120]))


async def _calls(root: Path) -> None:
    source = _bingo.install(root / "plugins", "bench", CHILD, "-")
    async with await RawClient.spawn(CHILD, "-") as raw, _bingo.running(source, root / "data") as tool:
        await raw.initialize()
        for n in range(500):
            await tool.call(_bingo.call_of(n, TEXT))
            await raw.count(n, TEXT)
        start = time.perf_counter()
        for n in range(3000):
            await raw.count(n, TEXT)
        raw_us = (time.perf_counter() - start) / 3000 * 1e6
        profiler = Profiler(interval=0.0001, async_mode="disabled")
        profiler.start()
        start = time.perf_counter()
        for n in range(3000):
            await tool.call(_bingo.call_of(n, TEXT))
        bingo_us = (time.perf_counter() - start) / 3000 * 1e6
        numbers = iter(range(6000))

        async def worker() -> None:
            for n in numbers:
                await tool.call(_bingo.call_of(n, TEXT))

        await asyncio.gather(*(worker() for _ in range(16)))
        profiler.stop()
        print(f"sequential, unprofiled raw {raw_us:.1f} µs/call; profiled bingo {bingo_us:.1f} µs/call")
        print(profiler.output_text(show_all=False, timeline=False))


async def _starts(root: Path) -> None:
    one = [_bingo.install(root / "one", "solo", CHILD, "-")]
    twenty = [_bingo.install(root / "twenty", f"p{i:02d}", CHILD, "-") for i in range(20)]
    for label, sources in (
        ("1 plugin", one),
        ("1 plugin, again: a warm declaration cache, nothing spawned", one),
        ("20 plugins", twenty),
    ):
        async with _bingo.started(sources, root / "data") as (host, _):
            profiler = Profiler(interval=0.0002, async_mode="enabled")
            profiler.start()
            await host.start()
            profiler.stop()
        print(f"--- {label}")
        print(profiler.output_text(show_all=False))


def main() -> None:
    with _cold.world() as world:
        world.check()
        _heading('python -X importtime: bingo -p "/wordcount notes.txt"')
        importtime(world)
        _heading('pyinstrument: bingo -p "/wordcount notes.txt"')
        cold_profile(world)
    with tempfile.TemporaryDirectory(prefix="bingo-bench-") as tmp:
        _heading("pyinstrument: tool/call through the bridge (3000 sequential, 6000 at 16 in flight)")
        asyncio.run(_calls(Path(tmp)))
        _heading("pyinstrument: PluginHost.start, 1 plugin (twice) then 20 plugins")
        asyncio.run(_starts(Path(tmp)))
    _turn_profile.main()
    print(f"\n(CPUs allowed: {sorted(os.sched_getaffinity(0))})")


if __name__ == "__main__":
    main()
