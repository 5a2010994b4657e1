"""What a checkpoint with nothing changed costs against its floor and against git (ADR-0044).

On `bench/checkpoint.py`'s generated project (`--files`, default 10,000, in directories of
100), every row's rounds interleaved, the order rotated each round so the machine's load hits
all rows alike; p50 of `--rounds` and the ratio to git's row:
- `git add -A && git write-tree` in a shadow repository, and the same with
  `core.preloadIndex=false` (git's `lstat`s from one thread);
- bingo's checkpoint (look and record), and the same with GNU `find` not used;
- the bare Python loop: one `lstat` per file from each directory's descriptor, nothing else;
- the ways tried to go below it: that loop in two threads (half the directories each), in
  this process and a second one (half each, the signatures compared there), and GNU
  `find -newerct` (what changed since a moment ago) in one process and in two (bingo's own
  `_find` runner).
Prints; never asserts. Run: `.venv/bin/python bench/checkpoint_floor.py [--files N] [--rounds R]`.
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing
import operator
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path

from checkpoint import _generate  # pyright: ignore[reportPrivateUsage]

from bingo.checkpoint import Checkpoints, _find  # pyright: ignore[reportPrivateUsage]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_COLUMNS = [operator.attrgetter(n) for n in ("st_mtime_ns", "st_ctime_ns", "st_size", "st_ino", "st_mode")]


def _lstat_dir(directory: str, names: list[str]) -> list[os.stat_result]:
    fd = os.open(directory, _DIRECTORY)
    try:
        return list(map(functools.partial(os.lstat, dir_fd=fd), names))
    finally:
        os.close(fd)


def _columns(stats: list[os.stat_result]) -> list[list[int]]:
    return [list(map(get, stats)) for get in _COLUMNS]


def _worker(conn: Connection, dirs: list[tuple[str, list[str]]]) -> None:
    """The second process: its half's signatures, compared again at each request."""
    last = [_columns(_lstat_dir(d, n)) for d, n in dirs]
    conn.send(True)
    try:
        while conn.recv():
            conn.send([i for i, (d, n) in enumerate(dirs) if _columns(_lstat_dir(d, n)) != last[i]])
    except EOFError:  # the bench is over
        return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp)
        project = base / "project"
        project.mkdir()
        _generate(project, args.files, args.files * 1000)
        rows = _rows(base, project)
        found: dict[str, list[float]] = {name: [] for name in rows}
        names = list(rows)
        for n in range(args.rounds):
            for name in names[n % len(names) :] + names[: n % len(names)]:
                started = time.perf_counter()
                rows[name]()
                found[name].append(time.perf_counter() - started)
    git = statistics.median(found[names[0]])
    print(f"checkpoint floor: {args.files} files, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}")
    width = max(len(name) for name in names)
    for name in names:
        p50 = statistics.median(found[name])
        print(f"  {name:<{width}}  {p50 * 1000:7.1f} ms p50  {p50 / git:5.2f}× git")


def _rows(base: Path, project: Path) -> dict[str, Callable[[], object]]:
    env = {**os.environ, "GIT_DIR": str(base / "shadow.git"), "GIT_WORK_TREE": str(project)}
    subprocess.run(["git", "init", "-q"], env=env, check=True)

    def git(*options: str) -> None:
        subprocess.run(["git", *options, "add", "-A"], env=env, check=True)
        subprocess.run(["git", "write-tree"], env=env, check=True, capture_output=True)

    git()

    def checkpoint(root: Path) -> Callable[[], None]:
        checkpoints = Checkpoints(root, project, lambda _: None)
        turns = [0]

        def take() -> None:
            turns[0] += 1
            checkpoints.take(session="s", seq=turns[0], turn=turns[0], label="")

        return take

    def without_find(step: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            saved, _find._MIN_NAMES = _find._MIN_NAMES, 1 << 62  # pyright: ignore[reportPrivateUsage]
            try:
                step()
            finally:
                _find._MIN_NAMES = saved  # pyright: ignore[reportPrivateUsage]

        return run

    bingo, python = checkpoint(base / "a"), without_find(checkpoint(base / "b"))
    for _ in range(2):  # the first reads every file, the second asks find
        bingo()
        python()
    dirs: list[tuple[str, list[str]]] = []
    for top, subdirs, files in os.walk(project):
        subdirs[:] = [d for d in subdirs if d != "node_modules"]
        dirs.append((top, sorted(files) + sorted(subdirs)))
    half = len(dirs) // 2
    pool = ThreadPoolExecutor(2)

    def bare() -> None:
        for directory, names in dirs:
            _lstat_dir(directory, names)

    def threads() -> None:
        parts = [pool.submit(lambda p=p: [_lstat_dir(d, n) for d, n in p]) for p in (dirs[:half], dirs[half:])]
        for part in parts:
            part.result()

    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    context.Process(target=_worker, args=(theirs, dirs[half:]), daemon=True).start()
    mine.recv()
    last = {d: _columns(_lstat_dir(d, n)) for d, n in dirs[:half]}

    def process() -> None:
        mine.send(True)
        for directory, names in dirs[:half]:
            assert _columns(_lstat_dir(directory, names)) == last[directory]
        assert mine.recv() == []

    find = _find.gnu_find()
    paths = [d for d, _ in dirs]

    seconds, nanoseconds = divmod(time.time_ns() - 1_000_000_000, 1_000_000_000)
    after = f"@{seconds}.{nanoseconds:09d}".encode()

    def finds(program: str, groups: list[list[str]]) -> Callable[[], None]:
        encoded = [[os.fsencode(d) for d in group] for group in groups]

        def run() -> None:
            got = _find._run(program, encoded, after, lambda: False)  # pyright: ignore[reportPrivateUsage]
            assert got == [b""] * len(groups)

        return run

    rows: dict[str, Callable[[], object]] = {
        "git add -A && git write-tree": git,
        "git, core.preloadIndex=false (one thread)": lambda: git("-c", "core.preloadIndex=false"),
        "bingo checkpoint": bingo,
        "bingo checkpoint, find not used": python,
        "bare Python lstat loop, one thread": bare,
        "Python lstat, two threads (half each)": threads,
        "Python lstat, two processes (half each)": process,
    }
    if find is not None:
        rows["GNU find -newerct, one process"] = finds(find, [paths])
        rows["GNU find -newerct, two processes"] = finds(find, [paths[:half], paths[half:]])
    return rows


if __name__ == "__main__":
    main()
