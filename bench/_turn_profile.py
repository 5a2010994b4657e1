"""Where a model turn's time goes (issue 27), for `bash bench/run --profile`: the exact paths
of ADR-0043's breakdown, against `bench/peers/fake_model.py` on 127.0.0.1.

  1. `python -X importtime` of `bingo -p "hi"` through the anthropic provider: the slowest
     imports (cumulative) and the total;
  2. pyinstrument over `bingo -p "hi"` through the anthropic and the openai providers (launch
     to exit, the first request's path included);
  3. cProfile over a 50-step tool loop (`bench/peers/mcp_server.py` as a declared, trusted
     MCP server; the model calls it 50 times): the functions of bingo that take the most
     time while running, per step.
Each run is a fresh process in a temporary HOME, bytecode cached; nothing is asserted.
"""

from __future__ import annotations

import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
LAUNCH = str(HERE / "_launch.py")
LAUNCH_BINGO = str(Path(sys.executable).parent / "bingo")
STEPS = 50


@contextmanager
def _model() -> Iterator[str]:
    """The fake model's base URL while it runs."""
    with tempfile.TemporaryDirectory(prefix="bingo-fake-") as tmp:
        port = Path(tmp) / "port"
        proc = subprocess.Popen(
            [sys.executable, str(PEERS / "fake_model.py"), "--port", "0", "--port-file", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while not port.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            yield f"http://127.0.0.1:{port.read_text().strip()}"
        finally:
            proc.terminate()
            proc.wait(5)


def _world(root: Path, url: str, api: str, *, server: bool = False) -> tuple[dict[str, str], Path]:
    home, project = root / "home", root / "project"
    (home / ".bingo").mkdir(parents=True)
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "BINGO"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update({"HOME": str(home), "BINGO_HOME": str(home / ".bingo"), "NO_COLOR": "1", "TERM": "dumb"})
    if api == "anthropic":
        env.update({"ANTHROPIC_API_KEY": "fake", "ANTHROPIC_BASE_URL": url})
    else:
        env.update({"OPENAI_API_KEY": "fake", "OPENAI_BASE_URL": url + "/v1"})
    if server:
        spec = {"command": sys.executable, "args": [str(PEERS / "mcp_server.py"), "bench0", "ok"]}
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"bench0": spec}}), encoding="utf-8")
        settings = {"permissions": {"allow": ["plugin__bench0__*"]}}
        (home / ".bingo" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        subprocess.run([LAUNCH_BINGO, "--trust"], env=env, cwd=project, check=True, capture_output=True)
    # One unmeasured run: the declaration cache, the session store, bytecode.
    subprocess.run([LAUNCH_BINGO, "-p", _prompt(server)], env=env, cwd=project, check=True, capture_output=True)
    return env, project


def _prompt(server: bool) -> str:
    return f"BENCHCALL tool=bench0_echo server=bench0 n={STEPS}" if server else "hi"


def _heading(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 76 - len(text)))


def importtime(url: str) -> None:
    with tempfile.TemporaryDirectory(prefix="bingo-prof-") as tmp:
        env, project = _world(Path(tmp), url, "anthropic")
        done = subprocess.run(
            [sys.executable, "-X", "importtime", LAUNCH, "-p", "hi"],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
        )
    rows: list[tuple[int, str]] = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            _, cumulative, name = line.removeprefix("import time:").split("|")
            rows.append((int(cumulative), name.rstrip()))
    top = sum(cum for cum, name in rows if not name.startswith("  "))
    print(f"{len(rows)} modules, {top / 1000:.1f} ms at top level; the 25 largest (cumulative µs):")
    for cumulative, name in sorted(rows, reverse=True)[:25]:
        print(f"{cumulative:>9}  {name}")


def launch_profile(url: str, api: str) -> None:
    with tempfile.TemporaryDirectory(prefix="bingo-prof-") as tmp:
        env, project = _world(Path(tmp), url, api)
        argv = [sys.executable, "-m", "pyinstrument", "-i", "0.0005", "-r", "text", "-o", "/dev/stdout", LAUNCH]
        done = subprocess.run([*argv, "-p", "hi"], env=env, cwd=project, capture_output=True, text=True)
    keep = [line for line in done.stdout.splitlines() if line.strip() and "frames hidden" not in line]
    print("\n".join(keep[:90]))


def loop_profile(url: str) -> None:
    with tempfile.TemporaryDirectory(prefix="bingo-prof-") as tmp:
        env, project = _world(Path(tmp), url, "anthropic", server=True)
        out = Path(tmp) / "loop.prof"
        argv = [sys.executable, "-m", "cProfile", "-o", str(out), LAUNCH, "-p", _prompt(True)]
        subprocess.run(argv, env=env, cwd=project, check=True, capture_output=True)
        stats = pstats.Stats(str(out))
    # cProfile's clock is wall time while a frame runs: a suspended coroutine is not
    # counted, a blocking call (and the scheduler's preemption in it) is.
    print(f"time inside bingo's own functions over the run, and per step ({STEPS} steps; first imports included):")
    rows: list[tuple[float, int, str]] = []
    for name, row in stats.get_stats_profile().func_profiles.items():
        calls = int(row.ncalls.split("/")[0])
        if "/bingo/" in row.file_name and calls >= STEPS:
            where = f"{row.file_name.split('/bingo/', 1)[1]}:{row.line_number}({name})"
            rows.append((row.cumtime, calls, where))
    for cumulative, calls, where in sorted(rows, reverse=True)[:30]:
        print(f"{cumulative * 1000:9.1f} ms {cumulative / STEPS * 1000:7.3f} ms/step {calls:6d} calls  {where}")


def main() -> None:
    with _model() as url:
        _heading('python -X importtime: bingo -p "hi" (anthropic)')
        importtime(url)
        for api in ("anthropic", "openai"):
            _heading(f'pyinstrument: bingo -p "hi" ({api})')
            launch_profile(url, api)
        _heading(f"cProfile: a {STEPS}-step tool loop (one MCP server)")
        loop_profile(url)


if __name__ == "__main__":
    main()
