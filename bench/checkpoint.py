"""Checkpoints on a generated project (issue 28, ADR-0044), rows side by side in one run.

A project of `--files` files (default 10,000) totalling about `--mb` MB (default 100), in
directories of 100, with a `.gitignore` and an ignored directory, is generated in a
temporary directory. Rows (p50 and p90 of `--rounds` runs each):
- first checkpoint (every file read and kept);
- checkpoint, nothing changed (the stat cache: no file read) — target ≤ 50 ms p50;
- `git add -A && git write-tree` in a shadow repository on the same tree, nothing changed
  (git's own index doing the same job), when git is installed;
- checkpoint after 10 files changed;
- restore of 10 files (plan + write);
- the store's size after 100 turns that change 10 files each (objects and index), beside
  the project's own size.
Prints; never asserts. Run: `.venv/bin/python bench/checkpoint.py [--files N] [--mb M]`.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bingo.checkpoint import Checkpoints


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


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered) * 1000:8.1f} ms p50 {p90 * 1000:8.1f} ms p90"


def _take(checkpoints: Checkpoints, session: str, turn: int) -> float:
    started = time.perf_counter()
    checkpoints.take(session=session, seq=turn, turn=turn, label=f"turn {turn}")
    return time.perf_counter() - started


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--turns", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        project = base / "project"
        project.mkdir()
        made = _generate(project, args.files, args.mb * 1_000_000)
        said: list[str] = []
        checkpoints = Checkpoints(base / "checkpoints", project, said.append)
        rows: list[tuple[str, str]] = []
        rows.append(("first checkpoint (every file read)", _ms([_take(checkpoints, "s", 0)])))
        rows.append(
            ("checkpoint, nothing changed", _ms([_take(checkpoints, "s", n) for n in range(1, args.rounds + 1)]))
        )
        if shutil.which("git"):
            env = {**os.environ, "GIT_DIR": str(base / "shadow.git"), "GIT_WORK_TREE": str(project)}
            subprocess.run(["git", "init", "-q"], env=env, check=True)
            subprocess.run(["git", "add", "-A"], env=env, check=True)
            git: list[float] = []
            for _ in range(args.rounds):
                started = time.perf_counter()
                subprocess.run(["git", "add", "-A"], env=env, check=True)
                subprocess.run(["git", "write-tree"], env=env, check=True, capture_output=True)
                git.append(time.perf_counter() - started)
            rows.append(("git add -A && git write-tree, nothing changed", _ms(git)))
        rng = random.Random(11)
        changed: list[float] = []
        turn = args.rounds + 1
        for _ in range(args.rounds):
            for path in rng.sample(made, 10):
                path.write_bytes(rng.randbytes(path.stat().st_size))
            changed.append(_take(checkpoints, "s", turn))
            turn += 1
        rows.append(("checkpoint after 10 files changed", _ms(changed)))
        restores: list[float] = []
        for _ in range(args.rounds):
            point = checkpoints.points("s")[0]
            for path in rng.sample(made, 10):
                path.write_bytes(rng.randbytes(path.stat().st_size))
            started = time.perf_counter()
            looked = checkpoints.look()
            assert looked.scan is not None
            plan = checkpoints.plan(looked.scan, point)
            checkpoints.restore(plan)
            restores.append(time.perf_counter() - started)
        rows.append(("restore of 10 files (look, plan, write)", _ms(restores)))
        store = base / "checkpoints"
        before = _du(store)
        for _ in range(args.turns):
            for path in rng.sample(made, 10):
                path.write_bytes(rng.randbytes(path.stat().st_size))
            _take(checkpoints, "t", turn)
            turn += 1
        rows.append(
            (
                f"store after {args.turns} turns of 10 changed files",
                f"{_du(store) / 1e6:8.1f} MB ({(_du(store) - before) / 1e6:.1f} MB for the turns;"
                f" project {_du(project) / 1e6:.1f} MB)",
            )
        )
        checkpoints.close()
        width = max(len(name) for name, _ in rows)
        print(f"checkpoints: {args.files} files, {args.mb} MB")
        for name, value in rows:
            print(f"  {name:<{width}}  {value}")


if __name__ == "__main__":
    main()
