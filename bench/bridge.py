"""The bridge's cost: a `tool/call` round trip through it, beside a raw JSON-line ping-pong.

In one interleaved run (raw, bridge, raw, bridge, ...) against two copies of the same
minimal Python child, prints the median and p99 round trip of
  - raw:    asyncio subprocess pipes, one JSON line out, one line back, json on both ends;
  - bridge: Connection + BridgedTool (`tool/call` with a ToolCall, decoded ToolOutput);
then spawn-to-ready (spawn + `initialize` + registration, through PluginHost) for 1 and for
20 plugins. Prints; never asserts. Run: `.venv/bin/python bench/bridge.py [--calls N]`.
Reference figures measured on the project's machine: raw 27–67 µs (by CPU placement), the
MCP Python SDK's call_tool about 710 µs, its spawn + initialize about 456 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bingo.bridge import PluginHost, PluginSource
from bingo.bridge._link import StaticLink
from bingo.bridge.manifest import Entry, Manifest
from bingo.bridge.process import PluginLog, PluginProcess
from bingo.bridge.tool import BridgedTool
from bingo.endpoint.connection import Connection
from bingo.kernel.interfaces import ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.wire import ToolSpec

_CHILD = """\
import json, sys
NAME = sys.argv[1] if len(sys.argv) > 1 else "bench"
out = sys.stdout
for line in sys.stdin:
    m = json.loads(line)
    method = m.get("method")
    if method == "initialize":
        r = {"protocol": 5, "name": NAME, "version": "1", "tools": [{"name": "echo"}]}
    elif method == "tool/call":
        r = {"output": {"parts": [{"type": "text", "text": "ok"}]}}
    else:
        r = "pong"
    out.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    out.flush()
"""


def _stats(samples: list[float]) -> str:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered) * 1e6:7.1f} µs   p99 {p99 * 1e6:7.1f} µs"


async def _round_trips(child: Path, calls: int, log_dir: Path) -> tuple[list[float], list[float]]:
    env = dict(os.environ)
    raw = await PluginProcess.spawn(
        [sys.executable, str(child)], env=env, cwd=log_dir, log=PluginLog(log_dir / "raw.log")
    )
    bridged = await PluginProcess.spawn(
        [sys.executable, str(child)], env=env, cwd=log_dir, log=PluginLog(log_dir / "bridge.log")
    )
    raw_times: list[float] = []
    bridge_times: list[float] = []
    async with (
        raw,
        bridged,
        Connection(bridged.stdout, bridged.stdin, name="bench", deadlines={"tool/call": 10.0}) as conn,
    ):
        tool = BridgedTool(StaticLink("bench", conn), ToolSpec(name="echo"))
        clock = time.perf_counter
        for n in range(calls + 200):  # the first 200 of each warm up
            start = clock()
            raw.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": "ping"}).encode() + b"\n")
            json.loads(await raw.stdout.readline())
            middle = clock()
            await tool.call(ToolCall(f"c{n}", {"n": n}, "/", "bench", 1))
            end = clock()
            if n >= 200:
                raw_times.append(middle - start)
                bridge_times.append(end - middle)
    return raw_times, bridge_times


async def _spawn_to_ready(root: Path, count: int) -> float:
    sources: list[PluginSource] = []
    for i in range(count):
        name = f"p{i:02d}"
        directory = root / "plugins" / name
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "main.py").write_text(_CHILD, encoding="utf-8")
        entry = Entry(command=sys.executable, args=["${PLUGIN_ROOT}/main.py", name])
        sources.append(
            PluginSource(
                name=name,
                layer="user",
                root=directory,
                manifest=Manifest(name=name, version="1", entry=entry),
                problem=None,
                base=directory.parent,
            )
        )
    notices = Notices()
    registry = Registry(notices)
    async with PluginHost(
        sources=sources, registry=registry, notices=notices, settings=Settings(), data_dir=root / "data", cwd=root
    ) as host:
        start = time.perf_counter()
        await host.start()
        elapsed = time.perf_counter() - start
        assert len(registry.tools) == count, host.status()
    return elapsed


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        child = root / "child.py"
        child.write_text(_CHILD, encoding="utf-8")
        raw_times, bridge_times = await _round_trips(child, calls, root)
        print(f"tool/call round trip, {calls} calls interleaved")
        print(f"  raw JSON-line ping-pong  {_stats(raw_times)}")
        print(f"  bridge (Connection+tool) {_stats(bridge_times)}")
        print(f"  ratio of medians         {statistics.median(bridge_times) / statistics.median(raw_times):.2f}×")
        for count, runs in ((1, 5), (20, 3)):
            times = [await _spawn_to_ready(root / f"s{count}-{run}", count) for run in range(runs)]
            print(
                f"spawn-to-ready, {count:2d} plugin(s): median {statistics.median(times) * 1e3:6.1f} ms over {runs} runs"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    asyncio.run(main(parser.parse_args().calls))
