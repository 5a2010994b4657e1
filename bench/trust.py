"""What trust costs: a project plugin with a 50 MB `node_modules/`, pinned byte for byte on
every run (ADR-0016: nothing is trusted by size or time, so nothing can be cached by them).

Prints figures, asserts nothing. The plugin is the wordcount example plus a synthetic
`node_modules/` shaped like a real one (about 6,000 files in nested packages, most of them a
few kB, a few of several MB; seeded, so every run builds the same tree). Rows:
- the fingerprint alone, in-process (`bridge.fingerprint.fingerprint`), median of the runs;
- a cold `bingo -p "/wordcount notes.txt"` in the trusted project, against the same command
  with the same plugin in the user layer (which no trust check hashes), interleaved.
Run: python bench/trust.py [--runs N] [--megabytes M]
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BINGO = str(Path(sys.executable).parent / "bingo")
FILES = 6_000
"""Files in the synthetic node_modules (a 50 MB install of a few dev tools has about this many)."""


def build_node_modules(where: Path, megabytes: int, seed: int = 6) -> tuple[int, int]:
    """A node_modules of about `megabytes` MB; (files, bytes) written."""
    rng = random.Random(seed)
    weights = [rng.lognormvariate(8.0, 1.6) for _ in range(FILES)]  # median ~3 kB, a long tail
    scale = megabytes * 1_000_000 / sum(weights)
    total = 0
    for index, weight in enumerate(weights):
        package = f"pkg{index % 400:03d}"
        depth = ["lib", "dist", "src/util", "lib/internal/deep"][index % 4]
        path = where / package / depth / f"file{index}.js"
        path.parent.mkdir(parents=True, exist_ok=True)
        size = max(1, int(weight * scale))
        path.write_bytes(rng.randbytes(size))
        total += size
    return FILES, total


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--megabytes", type=int, default=50)
    args = parser.parse_args()
    from bingo.bridge.discovery import discover
    from bingo.bridge.fingerprint import fingerprint

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        base = {**os.environ, "PATH": path}
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        worlds: dict[str, tuple[dict[str, str], Path]] = {}
        for name in ("project", "user"):
            home = root / name / "home" / ".bingo"
            project = root / name / "work"
            (project / ".git").mkdir(parents=True)
            (project / "notes.txt").write_text("the quick brown fox\n")
            layer = project / ".bingo" / "plugins" if name == "project" else home / "plugins"
            plugin = layer / "wordcount"
            shutil.copytree(REPO / "examples" / "plugins" / "wordcount", plugin)
            files, total = build_node_modules(plugin / "node_modules", args.megabytes)
            env = {**base, "HOME": str(home.parent), "BINGO_HOME": str(home)}
            worlds[name] = (env, project)
        env, project = worlds["project"]
        subprocess.run([BINGO, "--trust"], env=env, cwd=project, check=True, stdout=subprocess.DEVNULL)
        [source] = [s for s in discover(home=Path(env["BINGO_HOME"]), project=project) if s.layer == "project"]
        hashing: list[float] = []
        for _ in range(args.runs):
            start = time.perf_counter()
            found = fingerprint(source, project)
            hashing.append((time.perf_counter() - start) * 1000)
            assert found.digest is not None, found.problem
        cold: dict[str, list[float]] = {"project": [], "user": []}
        for name in cold:  # warm the page cache and the declaration cache once
            _time([BINGO, "-p", "/wordcount notes.txt"], *worlds[name])
        for _ in range(args.runs):
            for name in cold:
                cold[name].append(_time([BINGO, "-p", "/wordcount notes.txt"], *worlds[name]))
        mb = total / 1e6
        print(f"trust: a plugin with a {mb:.0f} MB node_modules/ ({files:,} files), {args.runs} runs, medians")
        fp = statistics.median(hashing)
        print(f"  fingerprint alone (in-process)                    {fp:8.1f} ms   {mb / (fp / 1000):6.0f} MB/s")
        trusted, user = statistics.median(cold["project"]), statistics.median(cold["user"])
        print(f'  cold bingo -p "/wordcount notes.txt", trusted     {trusted:8.1f} ms')
        print(
            f"  the same plugin in the user layer (no trust)      {user:8.1f} ms   trust adds {trusted - user:+.1f} ms ({trusted / user:.2f}x)"
        )


if __name__ == "__main__":
    main()
