"""What people's skills and command hooks cost (issue 29, ADR-0045).

Prints figures, asserts nothing. Rows:
- the system prompt's size with 50 skills (descriptions of about 200 characters, as real ones
  are: anthropics/skills' run 170 to 300) and with 2,000, against the same prompt with none:
  the catalogue is bounded at `bring.CATALOGUE_CHARS`;
- a `PreToolUse` command hook's added latency per tool call: `Hooks.decide("tool", "before")`
  with one command hook (a Python script that reads its JSON and exits 0) minus the same with
  no hook, against the hook process's own start-to-exit time run bare (the same command,
  the same stdin, through asyncio); target: added ≤ own + 5 ms. Unconfined, in process;
- the same through the real binary, confined where the sandbox is in force: `bingo -p` whose
  scripted model makes CALLS `glob` calls, with the hook matching `Glob` and without,
  interleaved; (with − without) / CALLS per call; against the hook process's own start to
  exit confined as a hook is (the run's sandbox, spawned as `bring.hooks` spawns it), since a
  hook runs in the sandbox (INTERFACE.md section 11) and its confinement is part of its start.
Run: python bench/bring.py [--runs N] [--binary-runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bingo.bring import CATALOGUE_CHARS, Skill, catalogue
from bingo.bring._bring import bring
from bingo.kernel.hooks import Hooks
from bingo.kernel.notices import Notices
from bingo.kernel.settings import CommandHookEntry, Settings
from bingo.kernel.system import system_prompt

REPO = Path(__file__).resolve().parents[1]
_HOOK = "import json, sys\njson.load(sys.stdin)\nsys.exit(0)\n"
_PAYLOAD = {"tool": "bash", "input": {"command": "ls -la"}, "callId": "c1"}


def _skills(count: int) -> dict[str, Skill]:
    words = "Use it when the person asks to turn a spreadsheet into a chart or a report"
    return {
        f"skill-{i:04}": Skill(f"skill-{i:04}", f"{words}, case {i}: " + "details " * 14, Path("/s"), "", "user")
        for i in range(count)
    }


def prompt_sizes(where: Path) -> None:
    base = system_prompt(cwd=where, project=where, home=where).text
    print(f"system prompt, no skills: {len(base):,} characters")
    for count in (50, 2000):
        added = catalogue(_skills(count))
        print(
            f"system prompt, {count} skills: {len(base) + 2 + len(added):,} characters"
            f" (catalogue {len(added):,}; bound {CATALOGUE_CHARS:,}; ~{len(added) // 4:,} tokens)"
        )


async def _decide(hooks: Hooks) -> float:
    started = time.perf_counter()
    await hooks.decide("tool", "before", _PAYLOAD)
    return time.perf_counter() - started


async def _bare(command: list[str], data: bytes) -> float:
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    await proc.communicate(data)
    return time.perf_counter() - started


async def hook_latency(where: Path, runs: int) -> None:
    script = where / "hook.py"
    script.write_text(_HOOK, encoding="utf-8")
    command = f"{sys.executable} {script}"
    entry = CommandHookEntry("PreToolUse", "Bash", command, 10.0, False, "bench")
    notices = Notices()
    brought = bring(
        home=where / "none",
        user_home=where / "none",
        project=None,
        settings=Settings(command_hooks=(entry,)),
        notices=notices,
        sandbox=None,
        workdir=where,
        session=lambda: "bench",
        mcp=set(),
    )
    data = b'{"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": "Bash"}'
    bare: list[float] = []
    with_hook: list[float] = []
    without: list[float] = []
    async with Hooks(brought.hooks, notices, 30.0) as hooked, Hooks([], notices, 30.0) as empty:
        for _ in range(3):  # warm the page cache and the interpreter's files
            await _decide(hooked)
        for _ in range(runs):  # interleaved, so drift in the machine's load falls on all three
            bare.append(await _bare(["/bin/bash", "-c", command], data))
            with_hook.append(await _decide(hooked))
            without.append(await _decide(empty))
    own, hooked_ms, none_ms = (statistics.median(v) * 1000 for v in (bare, with_hook, without))
    added = hooked_ms - none_ms
    mark = "✓" if added <= own + 5 else "✗"
    print(f"PreToolUse hook, added per call: {added:.1f} ms (median of {runs}); no hook: {none_ms:.3f} ms")
    print(f"the hook process's own start to exit (bash -c, same stdin): {own:.1f} ms")
    print(f"target added ≤ own + 5 ms: {own + 5:.1f} ms {mark}")


async def confined_own(where: Path, runs: int) -> float | None:
    """The hook process's own start to exit when it is confined as a hook is (the run's
    sandbox, `for_bash`'s policy, spawned without a warden by the janitor): the baseline of
    the confined row below. None where the sandbox is not in force."""
    from bingo.bring.hooks import _Process  # pyright: ignore[reportPrivateUsage]
    from bingo.sandbox import Sandbox

    home, project = where / "confined-home", where / "confined-project"
    (home / ".bingo").mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    script = where / "hook.py"
    script.write_text(_HOOK, encoding="utf-8")
    command = f"{sys.executable} {script}"
    data = b'{"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": "Glob"}'
    sandbox = Sandbox(
        Settings().sandbox,
        home=home,
        bingo_home=home / ".bingo",
        project=project,
        environ=os.environ,
        notices=Notices(),
    )
    sandbox.start()
    times: list[float] = []
    async with sandbox:
        confined = await sandbox.for_bash()
        if confined is None:
            return None
        for i in range(runs + 3):  # the first three warm the janitor and its parked process
            started = time.perf_counter()
            process = await _Process.start(command, dict(confined.env), project, confined.policy)
            await process.communicate(data)
            await process.reap()
            if i >= 3:
                times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


_CALLS = 20
"""Tool calls in one `bingo -p` run of the binary row."""


def _world(root: Path, hooked: bool) -> tuple[dict[str, str], Path]:
    home, project = root / "home", root / "project"
    (home / ".bingo" / "plugins").mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    shutil.copytree(REPO / "tests" / "plugins" / "scripted-model", home / ".bingo" / "plugins" / "scripted-model")
    steps = [[{"tool": {"id": f"g{i}", "name": "glob", "input": {"pattern": "*"}}}] for i in range(_CALLS)]
    settings: dict[str, object] = {
        "provider": "plugin__scripted-model__scripted",
        "plugins": {"scripted-model": {"replies": [*steps, [{"text": "done"}]]}},
    }
    if hooked:
        script = root / "hook.py"
        script.write_text(_HOOK, encoding="utf-8")
        entry = {"matcher": "Glob", "hooks": [{"type": "command", "command": f"{sys.executable} {script}"}]}
        settings["hooks"] = {"PreToolUse": [entry]}
    (home / ".bingo" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BINGO_", "ANTHROPIC_", "OPENAI_"))}
    return {**env, "HOME": str(home), "BINGO_HOME": str(home / ".bingo")}, project


def through_the_binary(where: Path, runs: int, *flags: str, own: float | None = None) -> None:
    bingo = str(Path(sys.executable).parent / "bingo")
    worlds = {hooked: _world(where / ("with" if hooked else "without"), hooked) for hooked in (True, False)}
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(runs):
        for hooked in (True, False):
            env, project = worlds[hooked]
            started = time.perf_counter()
            subprocess.run([bingo, *flags, "-p", "look"], cwd=project, env=env, capture_output=True, check=True)
            times[hooked].append(time.perf_counter() - started)
    env, project = worlds[False]
    state = subprocess.run([bingo, *flags, "-p", "/sandbox"], cwd=project, env=env, capture_output=True)
    added = (statistics.median(times[True]) - statistics.median(times[False])) / _CALLS * 1000
    print(f"through the binary ({state.stdout.decode().splitlines()[0]}): {added:.1f} ms added per call")
    print(f"  (median of {runs} runs of {_CALLS} glob calls each, with the hook and without, interleaved)")
    if own is not None:
        mark = "✓" if added <= own + 5 else "✗"
        print(
            f"  the hook process's own start to exit, confined as a hook is: {own:.1f} ms; target ≤ {own + 5:.1f} ms {mark}"
        )
    shutil.rmtree(where / "with")
    shutil.rmtree(where / "without")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--binary-runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as where:
        prompt_sizes(Path(where))
        asyncio.run(hook_latency(Path(where), args.runs))
        own = asyncio.run(confined_own(Path(where), args.runs))
        through_the_binary(Path(where), args.binary_runs, own=own)
        through_the_binary(Path(where), args.binary_runs, "--no-sandbox")


if __name__ == "__main__":
    main()
