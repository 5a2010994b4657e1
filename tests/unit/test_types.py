"""The code is clean under pyright: strict for src/, basic for the tests (pyproject.toml)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_pyright_finds_no_errors() -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    assert pyright is not None, "pyright is a test dependency: bash scripts/test installs it"
    result = subprocess.run(
        [pyright, "--pythonpath", sys.executable, "--outputjson"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message'].splitlines()[0]}"
        for d in json.loads(result.stdout)["generalDiagnostics"]
        if d["severity"] == "error"
    ]
    assert errors == []
