"""`bench/run`'s table: bingo beside the pipe's own limit and the MCP Python SDK, measured in
one interleaved run on this machine, every row a ratio, every target marked ✓ or ✗.

Rows, each measured with its contenders interleaved round by round (rotating who goes
first, so load noise hits them alike):
  - `tool/call` round trip, sequential median and p99, and calls per second with 16 in
    flight: bingo's bridge (PluginHost + the registered BridgedTool), a raw asyncio
    JSON-line client with per-id futures (the limit; the same child process script), and
    the MCP SDK 2.x (`MCPServer` over stdio, `ClientSession.call_tool` over `stdio_client`),
    and that same `MCPServer` as a bingo plugin (`mcp` in its plugin.json, bingo's adapter);
  - spawn to ready: one bingo plugin (`PluginHost.start` with no declaration cache: spawn,
    `initialize`, registration), the raw spawn + `initialize`, MCP `initialize` +
    `list_tools`, and 20 bingo plugins spawned concurrently; then `PluginHost.start` on a
    warm declaration cache (ADR-0012: it registers from the cache and spawns nothing; a
    plugin starts at its first use), for 1 and 20 plugins;
  - cold `bingo -p "/wordcount notes.txt"` against `python3 -c pass` plus the plugin's own
    start, twice: every process free on both CPUs (as a person runs it) and every process
    on one CPU; beside the first, its floor: a bare `python3` importing only asyncio,
    msgspec and pathlib, against the same sum;
  - session store: durable frames appended per second against bare sqlite3;
  - a model turn against a provider that answers at once (bench/turn.py), with 10 context
    contributors and 5 `tool.before` hooks across 5 plugins against a bare turn, p50 and p99;
  - `edit` changing one line of a 10 MB file (bench/edit.py) against reading its bytes and
    writing them back with `write_atomic`, the floor of any edit that cannot lose the file;
  - the sandbox (bench/sandbox.py, issue 24): a `bash` call's p50 confined against
    unconfined, and a plugin's spawn to ready confined against not;
  - a 100 MB download by curl from a local server through the sandbox's proxy (plain HTTP,
    and a CONNECT tunnel) against the same download direct (bench/proxy.py);
  - a subagent's child conversation opened and its first request made, against a top-level
    `-p` run's open and first request, in one process (bench/agent.py, issue 33).
  - checkpoints on a generated project of 10,000 files / 100 MB (bench/checkpoint.py, issue
    28): the first, one with nothing changed against its 50 ms target and against `git add -A
    && git write-tree` in a shadow repository (rounds interleaved), after 10 files changed, a
    restore of 10 files, and the store after 100 turns of 10 changed files.
CPU placement: both placements (parent and child on one core; parent on CPU 0, child on
CPU 1) are tried first on the raw limit and bingo; the one with the lower raw limit (no
wake-up across cores hiding host overhead) is used for every row but the cold ones, and said.
Prints; never fails over a target. Run through `bash bench/run`, which makes its venv.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import _bingo
import _cold
import _mcp_client
import agent
import checkpoint
import edit
import editor
import proxy
import sandbox
import store
import turn
from _raw import RawClient
from _table import Row, median, ms, p99, rate, render, us

CHILD = Path(__file__).with_name("_child.py")
EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / ".cache"
    / "npm-mcp"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
"""server-everything as the MCP tests install it (tests/e2e/_mcp.py); its rows need it there."""
TEXT = "the quick brown fox jumps over the lazy dog " * 4
"""The `count` tool's input: 36 words, the same for every contender."""
WIDTH = 16
"""Calls in flight in the throughput rows."""

Call = Callable[[int], Awaitable[object]]
clock = time.perf_counter


@dataclass(slots=True, frozen=True)
class Placement:
    """Where the bench (parent) and each child process run."""

    name: str
    parent: int
    child: str

    def describe(self) -> str:
        if self.child == str(self.parent):
            return f"{self.name}: parent and child both on CPU {self.parent}"
        return f"{self.name}: parent on CPU {self.parent}, child on CPU {self.child}"


@dataclass(slots=True, frozen=True)
class Sizes:
    """How much each phase does (`--quick` shrinks them)."""

    rounds: int = 60
    per_round: int = 50
    bursts: int = 6
    burst: int = 1500
    spawns: int = 7
    colds: int = 12
    appends: int = 4000
    calibrate_rounds: int = 20
    turns: int = 400
    edits: int = 40
    editors: int = 10
    sandboxed: int = 60
    downloads: int = 7
    agents: int = 200
    checkpoints: int = 20
    checkpoint_turns: int = 100


# --- tool/call -----------------------------------------------------------------------


async def _contenders(stack: AsyncExitStack, root: Path, placement: Placement, *, mcp: bool) -> dict[str, Call]:
    raw = await stack.enter_async_context(await RawClient.spawn(CHILD, placement.child))
    await raw.initialize()
    source = _bingo.install(root / "plugins", "bench", CHILD, placement.child)
    tool = await stack.enter_async_context(_bingo.running(source, root / "data"))
    calls: dict[str, Call] = {
        "raw": lambda n: raw.count(n, TEXT),
        "bingo": lambda n: tool.call(_bingo.call_of(n, TEXT)),
    }
    if mcp:
        peer = await stack.enter_async_context(_mcp_client.connected(placement.child))
        calls["mcp"] = lambda n: peer.count(n, TEXT)
        # The same SDK server as a bingo plugin (`mcp` in its plugin.json): bingo's adapter.
        server = _bingo.install_mcp(root / "plugins", "mcpsdk", _mcp_client.SERVER, placement.child)
        bridged = await stack.enter_async_context(_bingo.running(server, root / "data-mcp"))
        calls["bingo-mcp"] = lambda n: bridged.call(_bingo.call_of(n, TEXT))
    return calls


async def _sequential(calls: dict[str, Call], rounds: int, per_round: int) -> dict[str, list[float]]:
    """Round trips one at a time, in blocks of `per_round` per contender per round."""
    names = list(calls)
    samples: dict[str, list[float]] = {name: [] for name in names}
    n = 0
    for r in range(rounds):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            call, out = calls[name], samples[name]
            for _ in range(per_round):
                start = clock()
                await call(n)
                out.append(clock() - start)
                n += 1
    return samples


async def _burst(call: Call, total: int, width: int) -> float:
    """Calls per second with `width` in flight."""
    numbers = iter(range(total))

    async def worker() -> None:
        for n in numbers:
            await call(n)

    start = clock()
    await asyncio.gather(*(worker() for _ in range(width)))
    return total / (clock() - start)


async def _throughput(calls: dict[str, Call], bursts: int, total: int) -> dict[str, list[float]]:
    names = list(calls)
    rates: dict[str, list[float]] = {name: [] for name in names}
    for r in range(bursts):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            rates[name].append(await _burst(calls[name], total, WIDTH))
    return rates


async def _warm(calls: dict[str, Call]) -> None:
    for call in calls.values():
        for n in range(300):
            await call(n)
        await _burst(call, 300, WIDTH)


async def calibrate(
    root: Path, placements: list[Placement], sizes: Sizes
) -> dict[str, tuple[float, float, float, float]]:
    """Per placement: raw and bingo sequential medians, raw and bingo calls/s."""
    found: dict[str, tuple[float, float, float, float]] = {}
    for placement in placements:
        os.sched_setaffinity(0, {placement.parent})
        async with AsyncExitStack() as stack:
            calls = await _contenders(stack, root / f"cal-{placement.name}", placement, mcp=False)
            await _warm(calls)
            seq = await _sequential(calls, sizes.calibrate_rounds, sizes.per_round)
            thr = await _throughput(calls, 2, sizes.burst)
        found[placement.name] = (median(seq["raw"]), median(seq["bingo"]), median(thr["raw"]), median(thr["bingo"]))
    return found


async def round_trips(
    root: Path, placement: Placement, sizes: Sizes
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Sequential round trips and throughput of all three contenders."""
    async with AsyncExitStack() as stack:
        calls = await _contenders(stack, root / "rt", placement, mcp=True)
        await _warm(calls)
        seq = await _sequential(calls, sizes.rounds, sizes.per_round)
        thr = await _throughput(calls, sizes.bursts, sizes.burst)
    return seq, thr


# --- spawn to ready ------------------------------------------------------------------


async def spawns(root: Path, placement: Placement, sizes: Sizes) -> dict[str, list[float]]:
    """Seconds from spawn to ready, interleaved: raw 1 and 20 (spawned concurrently), bingo 1
    and 20 with no declaration cache (a fresh data directory each time), MCP, and bingo 1 and
    20 on a warm cache."""
    one = [_bingo.install(root / "one", "solo", CHILD, placement.child)]
    twenty = [_bingo.install(root / "twenty", f"p{i:02d}", CHILD, placement.child) for i in range(20)]
    fresh = itertools.count()

    async def raw() -> float:
        start = clock()
        async with await RawClient.spawn(CHILD, placement.child) as client:
            await client.initialize()
            return clock() - start

    async def raw20() -> float:
        async def one_ready(stack: AsyncExitStack) -> None:
            client = await stack.enter_async_context(await RawClient.spawn(CHILD, placement.child))
            await client.initialize()

        async with AsyncExitStack() as stack:
            start = clock()
            await asyncio.gather(*(one_ready(stack) for _ in range(20)))
            return clock() - start

    async def bingo(sources: list[_bingo.PluginSource], *, warm: bool = False) -> float:
        data = root / f"data-warm-{len(sources)}" if warm else root / f"data-{next(fresh)}"
        async with _bingo.started(sources, data) as (host, registry):
            start = clock()
            await host.start()
            elapsed = clock() - start
            states = {status.state for status in host.status()}
            if len(registry.tools) != len(sources) or states != {"idle" if warm else "running"}:
                raise RuntimeError(
                    f"not every bench plugin is {'declared from the cache' if warm else 'started'}: {host.status()}"
                )
            return elapsed

    for sources in (one, twenty):  # fill the warm caches
        async with _bingo.started(sources, root / f"data-warm-{len(sources)}") as (host, _):
            await host.start()

    async def mcp() -> float:
        async with AsyncExitStack() as stack:
            start = clock()
            await stack.enter_async_context(_mcp_client.connected(placement.child))
            return clock() - start

    steps: dict[str, Callable[[], Awaitable[float]]] = {
        "raw": raw,
        "raw20": raw20,
        "bingo1": lambda: bingo(one),
        "bingo20": lambda: bingo(twenty),
        "mcp": mcp,
        "warm1": lambda: bingo(one, warm=True),
        "warm20": lambda: bingo(twenty, warm=True),
    }
    if EVERYTHING.exists():
        # server-everything (Node), spawned to tools-ready: through bingo (spawn, MCP
        # initialize, tools/list, prompts/list, registration) and through the SDK client.
        everything = _bingo.install_mcp(root / "everything", "everything", EVERYTHING, "-", command="node")

        async def bingo_everything() -> float:
            async with _bingo.started([everything], root / f"data-{next(fresh)}") as (host, registry):
                start = clock()
                await host.start()
                elapsed = clock() - start
                if "plugin__everything__echo" not in registry.tools:
                    raise RuntimeError(f"server-everything did not declare its tools: {host.status()}")
                return elapsed

        async def sdk_everything() -> float:
            async with AsyncExitStack() as stack:
                start = clock()
                await stack.enter_async_context(_mcp_client.connected_to("node", [str(EVERYTHING)]))
                return clock() - start

        steps["everything-bingo"], steps["everything-sdk"] = bingo_everything, sdk_everything
    names = list(steps)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # one untimed start each: .pyc files and the page cache
        await steps[name]()
    for r in range(sizes.spawns):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            samples[name].append(await steps[name]())
    return samples


# --- the table -----------------------------------------------------------------------


def _ratio(x: float) -> str:
    return f"{x:.2f}×"


def table(
    seq: dict[str, list[float]],
    thr: dict[str, list[float]],
    spawn: dict[str, list[float]],
    cold: dict[str, tuple[list[float], list[float], list[float]]],
    floor: list[float],
    stored: tuple[float, float],
    turns: dict[str, list[float]],
    edited: tuple[list[float], list[float], int],
) -> list[Row]:
    """Every row, its ratio and its target."""
    raw_m, bingo_m, mcp_m = median(seq["raw"]), median(seq["bingo"]), median(seq["mcp"])
    raw_p, bingo_p, mcp_p = p99(seq["raw"]), p99(seq["bingo"]), p99(seq["mcp"])
    raw_t, bingo_t, mcp_t = median(thr["raw"]), median(thr["bingo"]), median(thr["mcp"])
    s_raw, s_one, s_twenty, s_mcp = (median(spawn[k]) for k in ("raw", "bingo1", "bingo20", "mcp"))
    w_one, w_twenty = median(spawn["warm1"]), median(spawn["warm20"])
    s_raw20 = median(spawn["raw20"])
    store_rate, raw_rate = stored
    return [
        Row(
            "tool/call median: bingo / raw limit",
            us(bingo_m),
            f"raw {us(raw_m)}",
            _ratio(bingo_m / raw_m),
            "≤ 2×",
            bingo_m / raw_m <= 2,
        ),
        Row(
            "tool/call median: MCP SDK / bingo",
            us(bingo_m),
            f"MCP {us(mcp_m)}",
            _ratio(mcp_m / bingo_m),
            "≥ 7× faster",
            mcp_m / bingo_m >= 7,
        ),
        # The same MCP SDK server, reached through bingo's MCP adapter and through the SDK's
        # own ClientSession (issue 16: bingo ≤ 1.2× the SDK client's time).
        Row(
            "MCP server tools/call median: bingo / SDK client",
            us(median(seq["bingo-mcp"])),
            f"SDK {us(mcp_m)}",
            _ratio(median(seq["bingo-mcp"]) / mcp_m),
            "≤ 1.2×",
            median(seq["bingo-mcp"]) / mcp_m <= 1.2,
        ),
        Row(
            "MCP server tools/call p99: bingo / SDK client",
            us(p99(seq["bingo-mcp"])),
            f"SDK {us(mcp_p)}",
            _ratio(p99(seq["bingo-mcp"]) / mcp_p),
        ),
        Row("tool/call p99: bingo / raw limit", us(bingo_p), f"raw {us(raw_p)}", _ratio(bingo_p / raw_p)),
        Row("tool/call p99: MCP SDK / bingo", us(bingo_p), f"MCP {us(mcp_p)}", _ratio(mcp_p / bingo_p)),
        Row(
            f"calls/s, {WIDTH} in flight: bingo / raw",
            rate(bingo_t),
            f"raw {rate(raw_t)}",
            _ratio(bingo_t / raw_t),
            "≥ 20,000/s",
            bingo_t >= 20_000,
        ),
        Row(f"calls/s, {WIDTH} in flight: bingo / MCP", rate(bingo_t), f"MCP {rate(mcp_t)}", _ratio(bingo_t / mcp_t)),
        Row(
            "spawn to ready, 1 plugin, no cache: bingo / raw",
            ms(s_one),
            f"raw spawn+initialize {ms(s_raw)}",
            _ratio(s_one / s_raw),
            "≤ 30 ms",
            s_one <= 0.030,
        ),
        Row(
            "spawn to ready, no cache: MCP init+list_tools / bingo",
            ms(s_one),
            f"MCP {ms(s_mcp)}",
            _ratio(s_mcp / s_one),
        ),
        Row(
            "spawn to ready, no cache: 20 plugins / 1 plugin",
            ms(s_twenty),
            f"1 plugin {ms(s_one)}",
            _ratio(s_twenty / s_one),
            "≤ 2×",
            s_twenty / s_one <= 2,
        ),
        # The limit of the row above: the same 20 children, spawned and initialized raw.
        Row("spawn to ready, 20 at once: raw 20 / raw 1", ms(s_raw20), f"raw 1 {ms(s_raw)}", _ratio(s_raw20 / s_raw)),
        Row(
            "spawn to ready, 20 at once: bingo / raw", ms(s_twenty), f"raw 20 {ms(s_raw20)}", _ratio(s_twenty / s_raw20)
        ),
        # No target on these two: nothing is spawned, so they are not "spawn to ready";
        # the plugin starts at its first use, which pays the no-cache row above then.
        Row(
            "start, warm declaration cache, 1 plugin / no cache",
            ms(w_one),
            f"no cache {ms(s_one)}",
            _ratio(w_one / s_one),
        ),
        Row(
            "start, warm declaration cache: 20 plugins / 1 plugin",
            ms(w_twenty),
            f"1 plugin {ms(w_one)}",
            _ratio(w_twenty / w_one),
        ),
        *_everything_rows(spawn),
        *_cold_rows(cold, floor),
        Row(
            "session store: durable appends/s",
            rate(store_rate),
            f"bare sqlite3 {rate(raw_rate)}",
            _ratio(store_rate / raw_rate),
        ),
        *_turn_rows(turns),
        *_edit_rows(edited),
    ]


def _everything_rows(spawn: dict[str, list[float]]) -> list[Row]:
    if "everything-bingo" not in spawn:
        return []  # not installed: bash scripts/test installs it into .cache/npm-mcp
    through, sdk = median(spawn["everything-bingo"]), median(spawn["everything-sdk"])
    return [
        Row(
            "server-everything spawn to tools-ready: bingo / SDK client",
            ms(through),
            f"SDK init+list_tools {ms(sdk)}",
            _ratio(through / sdk),
        )
    ]


def _edit_rows(edited: tuple[list[float], list[float], int]) -> list[Row]:
    times, floor, size = edited
    return [
        Row(
            f"edit one line of a {size / 1e6:.0f} MB file {what}: bingo / read + write_atomic",
            ms(of(times)),
            f"read + write_atomic {ms(of(floor))}",
            _ratio(of(times) / of(floor)),
        )
        for what, of in (("p50", median), ("p99", p99))
    ]


def _turn_rows(turns: dict[str, list[float]]) -> list[Row]:
    rows: list[Row] = []
    for what, of in (("p50", median), ("p99", p99)):
        bare, loaded = of(turns["bare"]), of(turns["loaded"])
        row = Row(
            f"model turn {what}: 10 contributors + 5 hooks / bare",
            ms(loaded),
            f"bare {ms(bare)}",
            f"+{ms(loaded - bare)}",
        )
        if what == "p50":
            row = Row(row.what, row.measured, row.against, row.ratio, "≤ +5 ms", loaded - bare <= 0.005)
        rows.append(row)
    return rows


def _agent_rows(children: dict[str, list[float]]) -> list[Row]:
    rows: list[Row] = []
    for what, of in (("p50", median), ("p99", p99)):
        child, top = of(children["child"]), of(children["top"])
        row = Row(
            f"subagent open + first request {what}: child / -p run", ms(child), f"-p run {ms(top)}", _ratio(child / top)
        )
        if what == "p50":
            row = Row(row.what, row.measured, row.against, row.ratio, "≤ 1.2×", child <= 1.2 * top)
        rows.append(row)
    return rows


def _cold_rows(cold: dict[str, tuple[list[float], list[float], list[float]]], floor: list[float]) -> list[Row]:
    rows: list[Row] = []
    for where, (bingo, bare, plugin) in cold.items():
        c_bingo, c_bare, c_plugin = median(bingo), median(bare), median(plugin)
        ratio = c_bingo / (c_bare + c_plugin)
        rows.append(
            Row(
                f'cold bingo -p "/wordcount notes.txt", {where}',
                ms(c_bingo),
                f"python3 -c pass {ms(c_bare)} + plugin {ms(c_plugin)}",
                _ratio(ratio),
                "≤ 2.5×",
                ratio <= 2.5,
            )
        )
        if where == "both CPUs":
            # The limit of the row above: only the imports bingo cannot do without.
            c_floor = median(floor)
            rows.append(
                Row(
                    f"cold floor, both CPUs: python3 -c '{_cold.FLOOR}'",
                    ms(c_floor),
                    f"python3 -c pass {ms(c_bare)} + plugin {ms(c_plugin)}",
                    _ratio(c_floor / (c_bare + c_plugin)),
                )
            )
    return rows


def _proxy_rows(found: dict[str, list[float]] | None) -> list[Row]:
    if found is None:
        return []  # no curl on this machine
    direct = median(found["direct"])
    rows: list[Row] = []
    for name, what in (("http", "plain HTTP"), ("connect", "CONNECT tunnel")):
        through = median(found[name])
        ratio = direct / through  # throughput: the inverse of the times
        rows.append(
            Row(
                f"{proxy.MEGABYTES} MB download through the proxy, {what}: throughput / direct",
                f"{proxy.MEGABYTES / through:,.0f} MB/s",
                f"direct {proxy.MEGABYTES / direct:,.0f} MB/s",
                _ratio(ratio),
                "≥ 0.5×",
                ratio >= 0.5,
            )
        )
    return rows


def _editor_rows(found: dict[str, list[float]]) -> list[Row]:
    acp, printed = median(found["acp cold"]), median(found["print cold"])
    warm, streamed = median(found["acp warm"]), median(found["updates/s"])
    return [
        Row(
            "launch to first text, cold: bingo --acp / bingo -p",
            ms(acp),
            f"-p {ms(printed)}",
            _ratio(acp / printed),
            "≤ 1.2×",
            acp / printed <= 1.2,
        ),
        Row("ACP session/prompt to first agent_message_chunk, warm", ms(warm), "a provider that answers at once", ""),
        Row(
            f"ACP agent_message_chunk updates/s ({editor.DELTAS} deltas)",
            rate(streamed),
            "a 200 tokens/s model: 200/s",
            _ratio(streamed / 200),
            "≥ 200/s",
            streamed >= 200,
        ),
    ]


def _sandbox_rows(confined: dict[str, list[float]]) -> list[Row]:
    if not confined:
        return []  # this kernel cannot confine (bench/sandbox.py says why)
    return [
        Row(what, ms(sandboxed), f"unsandboxed {ms(direct)}", _ratio(ratio), target, met)
        for what, sandboxed, direct, ratio, target, met in sandbox.rows_of(confined)
    ]


def _checkpoint_rows(found: checkpoint.Found) -> list[Row]:
    return [
        Row(what, "" if p50 is None else ms(p50), against, ratio, target, met)
        for what, p50, against, ratio, target, met in checkpoint.rows_of(found)
    ]


def _on(cpus: set[int], step: Callable[[], float]) -> Callable[[], float]:
    """`step` with the bench (and so every process it starts) on `cpus`."""

    def placed() -> float:
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, cpus)
        try:
            return step()
        finally:
            os.sched_setaffinity(0, before)

    return placed


async def _async_rows(
    root: Path, placements: list[Placement], sizes: Sizes
) -> tuple[
    Placement,
    dict[str, tuple[float, float, float, float]],
    dict[str, list[float]],
    dict[str, list[float]],
    dict[str, list[float]],
]:
    found = await calibrate(root, placements, sizes)
    chosen = min(placements, key=lambda p: found[p.name][0])
    os.sched_setaffinity(0, {chosen.parent})
    seq, thr = await round_trips(root, chosen, sizes)
    spawn = await spawns(root / "spawn", chosen, sizes)
    return chosen, found, seq, thr, spawn


def main() -> None:
    parser = argparse.ArgumentParser(description="bingo beside the raw limit and the MCP SDK")
    parser.add_argument("--quick", action="store_true", help="a fraction of the samples (a smoke run)")
    args = parser.parse_args()
    sizes = (
        Sizes(
            rounds=6,
            per_round=20,
            bursts=2,
            burst=300,
            spawns=2,
            colds=2,
            appends=500,
            calibrate_rounds=3,
            turns=30,
            edits=5,
            editors=2,
            sandboxed=5,
            downloads=2,
            agents=20,
            checkpoints=3,
            checkpoint_turns=10,
        )
        if args.quick
        else Sizes()
    )
    cpus = sorted(os.sched_getaffinity(0))
    first, second = cpus[0], cpus[1 % len(cpus)]
    placements = [Placement("same core", first, str(first)), Placement("split", first, str(second))]
    started = clock()
    with tempfile.TemporaryDirectory(prefix="bingo-bench-") as tmp:
        chosen, found, seq, thr, spawn = asyncio.run(_async_rows(Path(tmp), placements, sizes))
        with _cold.world() as world:
            world.check()
            one, both = {chosen.parent}, set(cpus)
            steps = [
                _on(where, step) for where in (both, one) for step in (world.bingo, world.bare, world.plugin_alone)
            ]
            samples = _cold.rounds([*steps, _on(both, world.floor)], sizes.colds)
            cold = {
                "both CPUs": (samples[0], samples[1], samples[2]),
                f"all on CPU {chosen.parent}": (samples[3], samples[4], samples[5]),
            }
            floor = samples[6]
        stored = store.interleaved(Path(tmp), sizes.appends)
        os.sched_setaffinity(0, set(cpus))
        turns = asyncio.run(turn.interleaved(Path(tmp).resolve() / "turn", sizes.turns))
        edited = edit.interleaved(Path(tmp), sizes.edits)
        os.sched_setaffinity(0, set(cpus))
        editors = asyncio.run(editor.measure(sizes.editors))
        confined = (
            asyncio.run(sandbox.interleaved(Path(tmp) / "sandbox", sizes.sandboxed)) if sandbox.probe().confines else {}
        )
        downloads = proxy.interleaved(Path(tmp), sizes.downloads)
        os.sched_setaffinity(0, set(cpus))
        children = asyncio.run(agent.interleaved(Path(tmp).resolve() / "agent", sizes.agents))
        checkpoints = checkpoint.measure(
            Path(tmp) / "checkpoint", rounds=sizes.checkpoints, turns=sizes.checkpoint_turns
        )
    rows = (
        table(seq, thr, spawn, cold, floor, stored, turns, edited)
        + _editor_rows(editors)
        + _sandbox_rows(confined)
        + _proxy_rows(downloads)
        + _agent_rows(children)
        + _checkpoint_rows(checkpoints)
    )
    print(
        f"bingo bench: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {len(seq['raw'])} sequential calls "
        f"and {sizes.bursts} bursts of {sizes.burst} per contender, {sizes.spawns} spawns, {sizes.colds} cold runs; "
        f"medians unless said"
    )
    for placement in placements:
        raw_m, bingo_m, raw_t, bingo_t = found[placement.name]
        print(
            f"  placement {placement.describe()}: raw {us(raw_m)}, bingo {us(bingo_m)}; "
            f"{WIDTH} in flight raw {rate(raw_t)}, bingo {rate(bingo_t)}"
        )
    print(
        f"  used for every row: {chosen.describe()} (the lower raw limit); cold rows: every process on both CPUs "
        f"(as a person runs bingo), and every process on CPU {chosen.parent}; python3 = {Path(sys.executable).parent / 'python3'}"
    )
    print()
    print(render(rows))
    print(f"\n({clock() - started:.0f} s)")


if __name__ == "__main__":
    main()
