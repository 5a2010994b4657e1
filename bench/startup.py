"""Cold start of `bingo -p "/help"` beside a bare `python3 -c pass`, interleaved in one run.

Prints figures, asserts nothing. Each sample is a fresh process in a fresh temporary
BINGO_HOME with no plugins (the kernel's own start-up cost), and, when --with-wordcount is
given, `bingo -p "/wordcount notes.txt"` with the example plugin installed (its declaration
cached by the warm-up run, so this is the run a person meets every day after the first).
Run: .venv/bin/python bench/startup.py [--runs N] [--with-wordcount]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BINGO = str(Path(sys.executable).parent / "bingo")


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--with-wordcount", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        (home / ".bingo").mkdir(parents=True)
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        (project / "notes.txt").write_text("the quick brown fox\n")
        # The venv's python3 first on PATH, as bench/_cold.py does: the plugin's `python3`
        # is then not a version manager's shim (which costs more than bingo's own start).
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        env = {**os.environ, "HOME": str(home), "BINGO_HOME": str(home / ".bingo"), "PATH": path}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's machine caches bytecode
        wc_home = root / "wc" / ".bingo"
        if args.with_wordcount:
            shutil.copytree(REPO / "examples" / "plugins" / "wordcount", wc_home / "plugins" / "wordcount")
        wc_env = {**env, "HOME": str(wc_home.parent), "BINGO_HOME": str(wc_home)}
        rows: dict[str, list[float]] = {"python3 -c pass": [], 'bingo -p "/help"': []}
        if args.with_wordcount:
            rows['bingo -p "/wordcount notes.txt"'] = []
        _time([BINGO, "-p", "/help"], env, project)  # warm the page cache and .pyc files once
        for _ in range(args.runs):
            rows["python3 -c pass"].append(_time([sys.executable, "-c", "pass"], env, project))
            rows['bingo -p "/help"'].append(_time([BINGO, "-p", "/help"], env, project))
            if args.with_wordcount:
                rows['bingo -p "/wordcount notes.txt"'].append(
                    _time([BINGO, "-p", "/wordcount notes.txt"], wc_env, project)
                )
    base = statistics.median(rows["python3 -c pass"])
    print(f"cold start, {args.runs} interleaved runs, median (p90) in ms:")
    for name, samples in rows.items():
        med = statistics.median(samples)
        p90 = sorted(samples)[int(len(samples) * 0.9) - 1]
        print(f"  {name:34s} {med:8.1f} ({p90:7.1f})   {med / base:5.1f}x python3 -c pass")


if __name__ == "__main__":
    main()
