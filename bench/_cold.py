"""Cold starts, as a person meets them: fresh processes, timed from spawn to exit.

Four contenders, interleaved round by round in one temporary world (a BINGO_HOME with the
example wordcount plugin installed, a project with `notes.txt`):
  - `bingo -p "/wordcount notes.txt"`, end to end;
  - `python3 -c pass`, the bare interpreter;
  - the plugin's own start: `python3 examples/plugins/wordcount/main.py` spawned, sent
    `initialize` and one `command/run` through a pipe, answered, stdin closed, exited;
  - the floor: `python3 -c "import asyncio, msgspec, pathlib"`, the standard library and
    msgspec that bingo's process imports before a line of its own runs.
`python3` is the bench venv's, put first on PATH, so neither side pays a version manager's
shim or the `.pth` files of the base interpreter's site-packages (on the project's machine
one of them imports certifi at every start: 60–90 ms that a clean machine does not pay).
Every process inherits the bench's CPU placement. It does not profile.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ColdWorld", "rounds", "world"]

REPO = Path(__file__).resolve().parents[1]
BINGO = str(Path(sys.executable).parent / "bingo")
WORDCOUNT = REPO / "examples" / "plugins" / "wordcount"

FLOOR = "import asyncio, msgspec, pathlib"
"""The imports no cold run of bingo can do without (see `ColdWorld.floor`)."""

_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocol": 5,
        "pluginRoot": "",
        "config": {},
        "env": {"host": "bingo", "hostVersion": "0.1.0", "platform": sys.platform, "cwd": "", "dataDir": ""},
    },
}


@dataclass(slots=True, frozen=True)
class ColdWorld:
    """Where the cold processes run."""

    env: dict[str, str]
    project: Path
    plugin: Path
    python3: str

    def _timed(self, argv: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(
            argv, env=self.env, cwd=self.project, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        return time.perf_counter() - start

    def bingo(self) -> float:
        """Seconds for `bingo -p "/wordcount notes.txt"`."""
        return self._timed([BINGO, "-p", "/wordcount notes.txt"])

    def bingo_help(self) -> float:
        """Seconds for `bingo -p "/help"` in the same world (the plugin started too)."""
        return self._timed([BINGO, "-p", "/help"])

    def bare(self) -> float:
        """Seconds for `python3 -c pass`."""
        return self._timed([self.python3, "-c", "pass"])

    def floor(self) -> float:
        """Seconds for `python3 -c "import asyncio, msgspec, pathlib"`: what a host built as
        bingo is (one asyncio loop, the msgspec contract, paths) imports before any of its
        own code, so the least a cold run could take even with the plugin's start wholly
        overlapped (bingo starts it only once it knows the command's plugin)."""
        return self._timed([self.python3, "-c", FLOOR])

    def plugin_alone(self) -> float:
        """Seconds for the plugin's own start: spawn, initialize, one command/run, exit."""
        run = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "command/run",
            "params": {"name": "wordcount", "args": "notes.txt", "cwd": str(self.project), "session": ""},
        }
        start = time.perf_counter()
        proc = subprocess.Popen(
            [self.python3, str(self.plugin / "main.py")],
            env=self.env,
            cwd=self.project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
        proc.stdin.write(json.dumps(run).encode() + b"\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
        proc.stdin.close()
        proc.wait(timeout=5)
        elapsed = time.perf_counter() - start
        if b'"view"' not in answer:
            raise RuntimeError(f"the wordcount plugin answered {answer!r}")
        return elapsed

    def check(self) -> str:
        """Run bingo once (warming .pyc files and the page cache); what it printed."""
        done = subprocess.run(
            [BINGO, "-p", "/wordcount notes.txt"],
            env=self.env,
            cwd=self.project,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if done.returncode != 0 or "words" not in done.stdout:
            raise RuntimeError(f"bingo -p /wordcount failed ({done.returncode}): {done.stdout}{done.stderr}")
        return done.stdout


@contextmanager
def world() -> Iterator[ColdWorld]:
    """A temporary world for the cold rows."""
    with tempfile.TemporaryDirectory(prefix="bingo-bench-") as tmp:
        root = Path(tmp)
        home = root / "home"
        plugin = home / ".bingo" / "plugins" / "wordcount"
        shutil.copytree(WORDCOUNT, plugin)
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        (project / "notes.txt").write_text("the quick brown fox\njumps over\nthe lazy dog\n", encoding="utf-8")
        bindir = Path(sys.executable).parent
        python3 = bindir / "python3"
        env = {key: value for key, value in os.environ.items() if not key.startswith("BINGO_")}
        env.update(HOME=str(home), BINGO_HOME=str(home / ".bingo"), PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}")
        for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONDONTWRITEBYTECODE"):
            env.pop(key, None)
        yield ColdWorld(env=env, project=project, plugin=plugin, python3=str(python3))


def rounds(steps: list[Callable[[], float]], count: int) -> list[list[float]]:
    """Run `steps` round by round, rotating who goes first; each step's samples."""
    samples: list[list[float]] = [[] for _ in steps]
    for r in range(count):
        for k in range(len(steps)):
            i = (r + k) % len(steps)
            samples[i].append(steps[i]())
    return samples
