"""Checkpoints on a generated project (issue 28, ADR-0044), rows side by side in one run.

A project of `--files` files (default 10,000) totalling about `--mb` MB (default 100), in
directories of 100, with a `.gitignore` and an ignored directory, is generated in a
temporary directory. Rows (p50 and p90 of `--rounds` runs each):
- first checkpoint (every file read and kept);
- checkpoint, nothing changed (the stat cache: no file read) — targets ≤ 50 ms p50 and
  ≤ 1× the next row;
- `git add -A && git write-tree` in a shadow repository on the same tree, nothing changed
  (git's own index doing the same job), when git is installed: its rounds interleaved with
  the row above's, whose turn first alternating, so the machine's load hits both alike;
- checkpoint after 10 files changed;
- restore of 10 files (a look, the plan, the writes);
- the store's size after `--turns` turns that change 10 files each (objects and index),
  beside the project's own size.
`measure` and `rows_of` are `bench/run`'s rows (bench/rows.py). Prints; never asserts.
Run: `.venv/bin/python bench/checkpoint.py [--files N] [--mb M] [--rounds R] [--turns T]`.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bingo.checkpoint import Checkpoints, Point

__all__ = ["Found", "measure", "rows_of"]

TARGET_MS = 50.0
"""Issue 28: a checkpoint when nothing changed, p50, on 10,000 files / 100 MB."""


@dataclass(slots=True)
class Found:
    """What one run measured: seconds per sample, and the store's sizes in bytes."""

    files: int
    mb: int
    turns: int
    first: list[float] = field(default_factory=lambda: [])
    unchanged: list[float] = field(default_factory=lambda: [])
    git: list[float] = field(default_factory=lambda: [])
    changed: list[float] = field(default_factory=lambda: [])
    restored: list[float] = field(default_factory=lambda: [])
    store: int = 0
    store_turns: int = 0
    project: int = 0


def _generate(root: Path, files: int, total: int) -> list[Path]:
    rng = random.Random(7)
    size = max(total // files, 1)
    made: list[Path] = []
    for n in range(files):
        directory = root / f"d{n // 100:03d}"
        directory.mkdir(exist_ok=True)
        path = directory / f"f{n:05d}.txt"
        path.write_bytes(rng.randbytes(size))
        made.append(path)
    (root / ".gitignore").write_text("node_modules/\n*.log\n")
    (root / "node_modules").mkdir()
    for n in range(200):
        (root / "node_modules" / f"m{n}.js").write_text("x")
    old = time.time_ns() - 10_000_000_000
    for path in made:
        os.utime(path, ns=(old, old))  # as a project is: not written this very instant
    return made


def _timed(step: Callable[[], object]) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _change(rng: random.Random, made: list[Path]) -> None:
    for path in rng.sample(made, 10):
        path.write_bytes(rng.randbytes(path.stat().st_size))


def measure(
    base: Path,
    *,
    files: int = 10_000,
    mb: int = 100,
    rounds: int = 20,
    turns: int = 100,
    say: Callable[[str], None] = lambda _: None,
) -> Found:
    """Every row's samples, on a project generated under `base`; `say` is told as each
    step begins (a 100,000-file run takes minutes, mostly making the project and the first
    checkpoint and git's first `add -A`, which read and keep every file)."""
    project = base / "project"
    project.mkdir(parents=True)
    say(f"making the project: {files:,} files, {mb} MB")
    made = _generate(project, files, mb * 1_000_000)
    found = Found(files, mb, turns)
    checkpoints = Checkpoints(base / "checkpoints", project, lambda _: None)
    turn = 0

    def take(session: str = "s") -> None:
        nonlocal turn
        turn += 1
        checkpoints.take(session=session, seq=turn, turn=turn, label=f"turn {turn}")

    say("the first checkpoint (every file read and kept)")
    found.first.append(_timed(take))
    env = {**os.environ, "GIT_DIR": str(base / "shadow.git"), "GIT_WORK_TREE": str(project)}

    def git() -> None:
        subprocess.run(["git", "add", "-A"], env=env, check=True)
        subprocess.run(["git", "write-tree"], env=env, check=True, capture_output=True)

    has_git = shutil.which("git") is not None
    if has_git:
        say("git's first add -A in the shadow repository (every file read and kept)")
        subprocess.run(["git", "init", "-q"], env=env, check=True)
        git()
    say(f"{rounds} rounds of each row")
    take()  # as a running bingo is: not its first look in this process
    for n in range(rounds):
        if has_git and n % 2:
            found.git.append(_timed(git))
        found.unchanged.append(_timed(take))
        if has_git and not n % 2:
            found.git.append(_timed(git))
    rng = random.Random(11)
    for _ in range(rounds):
        _change(rng, made)
        found.changed.append(_timed(take))

    def restore(point: Point) -> None:
        looked = checkpoints.look()
        assert looked.scan is not None
        checkpoints.restore(checkpoints.plan(looked.scan, point))

    for _ in range(rounds):
        point = checkpoints.points("s")[0]
        _change(rng, made)
        found.restored.append(_timed(lambda point=point: restore(point)))
    store = base / "checkpoints"
    checkpoints.close()  # its index's log folded in, as after a process: sizes compare
    before = _du(store)
    say(f"{turns} turns of 10 changed files")
    for _ in range(turns):
        _change(rng, made)
        take("t")
    checkpoints.close()
    after = _du(store)
    found.store, found.store_turns, found.project = after, after - before, _du(project)
    return found


def rows_of(found: Found) -> list[tuple[str, float | None, str, str, str, bool | None]]:
    """(what, p50 seconds or None, against, ratio, target, met) for the table."""
    median = statistics.median
    where = f"{found.files:,} files / {found.mb} MB"
    unchanged = median(found.unchanged)
    rows: list[tuple[str, float | None, str, str, str, bool | None]] = [
        (f"checkpoint, first, {where}", median(found.first), "every file read and kept", "", "", None),
        (
            f"checkpoint p50, nothing changed, {where}",
            unchanged,
            "a turn's budget of 50 ms",
            f"{unchanged * 1000 / TARGET_MS:.2f}×",
            f"≤ {TARGET_MS:g} ms",
            unchanged * 1000 <= TARGET_MS,
        ),
    ]
    if found.git:
        git = median(found.git)
        rows.append(
            (
                f"checkpoint p50, nothing changed: bingo / git, {where}",
                unchanged,
                f"git add -A && git write-tree {git * 1000:,.1f} ms",
                f"{unchanged / git:.2f}×",
                "≤ 1×",
                unchanged <= git,
            )
        )
    rows += [
        (f"checkpoint p50, 10 files changed, {where}", median(found.changed), "", "", "", None),
        (f"restore of 10 files p50 (look, plan, write), {where}", median(found.restored), "", "", "", None),
        (
            f"checkpoint store after {found.turns} turns of 10 changed files",
            None,
            f"{found.store / 1e6:,.1f} MB ({found.store_turns / 1e6:,.1f} MB for the turns;"
            f" project {found.project / 1e6:,.1f} MB)",
            "",
            "",
            None,
        ),
    ]
    return rows


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered) * 1000:8.1f} ms p50 {p90 * 1000:8.1f} ms p90"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        started = time.monotonic()

        def say(step: str) -> None:
            print(f"  [{time.monotonic() - started:6.1f} s] {step}", file=sys.stderr, flush=True)

        found = measure(Path(temp), files=args.files, mb=args.mb, rounds=args.rounds, turns=args.turns, say=say)
        _print(found, args.files, args.mb)
        say("removing the project, the store and the shadow repository")  # minutes, at 100,000 files


def _print(found: Found, files: int, mb: int) -> None:
    rows = [
        ("first checkpoint (every file read)", _ms(found.first)),
        ("checkpoint, nothing changed", _ms(found.unchanged)),
    ]
    if found.git:
        rows.append(("git add -A && git write-tree, nothing changed (interleaved)", _ms(found.git)))
        ratio = statistics.median(found.unchanged) / statistics.median(found.git)
        rows.append(("  bingo / git, p50", f"{ratio:8.2f}×"))
    rows += [
        ("checkpoint after 10 files changed", _ms(found.changed)),
        ("restore of 10 files (look, plan, write)", _ms(found.restored)),
        (
            f"store after {found.turns} turns of 10 changed files",
            f"{found.store / 1e6:8.1f} MB ({found.store_turns / 1e6:.1f} MB for the turns;"
            f" project {found.project / 1e6:.1f} MB)",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"checkpoints: {files} files, {mb} MB, load {os.getloadavg()[0]:.2f}", flush=True)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}", flush=True)


if __name__ == "__main__":
    main()
