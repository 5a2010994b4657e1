"""Time to first output: `bingo -p PROMPT` (the model's first text) beside
`bingo -p --output-format stream-json PROMPT` (its init line), interleaved in one run.

Issue 31's bar: stream-json's first line within 1.1x of `-p`'s time to first output. The
model is `_fast_model.py`, a provider plugin answering at once (its declaration cached by a
warm-up run, as every run after the first is), so the figures are bingo's own. Prints
figures, asserts nothing. Run: .venv/bin/python bench/script_output.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BINGO = str(Path(sys.executable).parent / "bingo")
MODEL = Path(__file__).with_name("_fast_model.py")


def _home(root: Path) -> tuple[dict[str, str], Path]:
    home = root / "home"
    plugin = home / ".bingo" / "plugins" / "fast-model"
    plugin.mkdir(parents=True)
    manifest = {"name": "fast-model", "version": "0", "entry": {"command": sys.executable, "args": [str(MODEL)]}}
    (plugin / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    settings = {"provider": "plugin__fast-model__fast", "plugins": {"fast-model": {"deltas": 1}}}
    (home / ".bingo" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    project = root / "project"
    (project / ".git").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BINGO_", "ANTHROPIC_", "OPENAI_"))}
    return {**env, "HOME": str(home), "BINGO_HOME": str(home / ".bingo")}, project


def _first_output(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Milliseconds from the start to the first byte on stdout (the run is then let finish)."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    assert process.stdout is not None
    first = process.stdout.read(1)
    took = (time.perf_counter() - start) * 1000
    process.stdout.read()
    process.wait(timeout=60)
    assert first, "no output"
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    # The sandbox's janitor may outlive a run by a moment (and make .git/hooks): not this figure's.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        env, project = _home(Path(tmp))
        text = [BINGO, "-p", "hi"]
        stream = [BINGO, "-p", "--output-format", "stream-json", "hi"]
        _first_output(text, env, project)  # the warm-up: the plugin's declaration is cached
        texts: list[float] = []
        streams: list[float] = []
        for _ in range(args.runs):
            texts.append(_first_output(text, env, project))
            streams.append(_first_output(stream, env, project))
    t, s = statistics.median(texts), statistics.median(streams)
    print(f"-p, first text          median {t:7.1f} ms  (runs {args.runs})")
    print(f"stream-json, init line  median {s:7.1f} ms  ({s / t:.2f}x of -p; the bar is 1.1x)")


if __name__ == "__main__":
    main()
