"""What the editor surface costs: `bingo --acp` beside `bingo -p` for the same turn, and how
fast it streams.

Every run is the real executable in a temporary HOME, its model a provider plugin written
here (`_fast_model.py`: answers at once, or streams DELTAS text deltas as fast as it can),
driven by a bare asyncio JSON-line client (no SDK between the figures and bingo):
  - launch to first text, cold: `bingo --acp` spawned, `initialize`, `session/new`,
    `session/prompt`, until the first `agent_message_chunk`; against `bingo -p PROMPT`
    spawned until the first byte of its stdout. The same turn, from the same start, with the
    same plugin started the same way; alternated run by run.
  - `session/prompt` to first `agent_message_chunk`, warm: later prompts in one session.
  - updates per second: a response of DELTAS deltas, from its first chunk to its last.
Run alone: `.venv/bin/python bench/editor.py [--runs N]`; `measure` gives `bench/run` its rows.
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BINGO = str(Path(sys.executable).parent / "bingo")
MODEL = Path(__file__).with_name("_fast_model.py")
DELTAS = 2000
"""Text deltas in the streaming response (a 200 tokens/s model takes 10 s to send them)."""
clock = time.perf_counter


def _home(root: Path) -> dict[str, str]:
    """A temporary HOME whose only plugin is the fast model, chosen as the provider."""
    home = root / "home"
    plugin = home / ".bingo" / "plugins" / "fast-model"
    plugin.mkdir(parents=True)
    manifest = {"name": "fast-model", "version": "0", "entry": {"command": sys.executable, "args": [str(MODEL)]}}
    (plugin / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    settings = {"provider": "plugin__fast-model__fast", "plugins": {"fast-model": {"deltas": DELTAS}}}
    (home / ".bingo" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BINGO_", "ANTHROPIC_", "OPENAI_"))}
    return {**env, "HOME": str(home), "BINGO_HOME": str(home / ".bingo"), "PWD": str(project)}


class _Client:
    """A bare ACP client: one JSON line out, lines in until what is waited for."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        self.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n"
        )
        return self.next_id

    async def until(self, done: Any) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(await self.stdout.readline())
            if done(message):
                return message

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        sent = self.send(method, params)
        return await self.until(lambda m: m.get("id") == sent)


def _chunk(message: dict[str, Any]) -> bool:
    return (
        message.get("method") == "session/update"
        and message["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def _acp(env: dict[str, str], cwd: str, prompts: int) -> tuple[float, list[float], float]:
    """Launch to first chunk (cold); prompt to first chunk for `prompts` more; updates per
    second of the streaming response."""
    started = clock()
    process = await asyncio.create_subprocess_exec(
        BINGO,
        "--acp",
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 24,
    )
    client = _Client(process)
    try:
        await client.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = (await client.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]["sessionId"]
        sent = client.send("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
        await client.until(_chunk)
        cold = clock() - started
        await client.until(lambda m: m.get("id") == sent)
        warm: list[float] = []
        for _ in range(prompts):
            start = clock()
            sent = client.send("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]})
            await client.until(_chunk)
            warm.append(clock() - start)
            await client.until(lambda m, sent=sent: m.get("id") == sent)
        sent = client.send("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "stream"}]})
        await client.until(_chunk)
        first = last = clock()
        chunks = 1
        while True:
            message = await client.until(lambda m: _chunk(m) or m.get("id") == sent)
            if message.get("id") == sent:
                break
            chunks += 1
            last = clock()
        rate = (chunks - 1) / (last - first)
    finally:
        process.stdin.close() if process.stdin is not None else None
        await process.wait()
    return cold, warm, rate


async def _print(env: dict[str, str], cwd: str) -> float:
    """`bingo -p hi`: launch to the first byte of stdout."""
    started = clock()
    process = await asyncio.create_subprocess_exec(
        BINGO,
        "-p",
        "hi",
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None
    await process.stdout.read(1)
    first = clock() - started
    await process.stdout.read()
    await process.wait()
    return first


async def measure(runs: int, prompts: int = 20) -> dict[str, list[float]]:
    """Each figure over `runs` alternated runs."""
    with tempfile.TemporaryDirectory() as tmp:
        env = _home(Path(tmp))
        cwd = env["PWD"]
        await _print(env, cwd)  # the first run files the declaration cache: both start warm from it
        found: dict[str, list[float]] = {"acp cold": [], "print cold": [], "acp warm": [], "updates/s": []}
        for n in range(runs):
            order = (True, False) if n % 2 == 0 else (False, True)
            for acp in order:
                if acp:
                    cold, warm, rate = await _acp(env, cwd, prompts)
                    found["acp cold"].append(cold)
                    found["acp warm"].extend(warm)
                    found["updates/s"].append(rate)
                else:
                    found["print cold"].append(await _print(env, cwd))
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description="bingo --acp beside bingo -p, and how fast it streams")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    found = asyncio.run(measure(args.runs))
    acp, printed = statistics.median(found["acp cold"]), statistics.median(found["print cold"])
    warm = statistics.median(found["acp warm"])
    rate = statistics.median(found["updates/s"])
    print(
        f"launch to first text, cold (median of {args.runs}): --acp {acp * 1e3:.1f} ms, -p {printed * 1e3:.1f} ms: {acp / printed:.2f}× (target ≤ 1.2×) {'✓' if acp / printed <= 1.2 else '✗'}"
    )
    print(
        f"session/prompt to first agent_message_chunk, warm (median of {len(found['acp warm'])}): {warm * 1e3:.2f} ms"
    )
    print(
        f"agent_message_chunk updates per second ({DELTAS} deltas): {rate:,.0f}/s (a 200 tokens/s model: {rate / 200:.0f}× headroom) {'✓' if rate >= 200 else '✗'}"
    )


if __name__ == "__main__":
    main()
