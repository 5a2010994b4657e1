"""What the sandbox's tests share: running a Python, with bingo importable, as an unprivileged
user (uid 65534), to show confinement holds for a person who is not root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["as_nobody"]


def as_nobody() -> list[str] | None:
    """The command line that runs this Python as uid 65534 with bingo importable, or None
    where that cannot be done here (not root, no setpriv, no Python that user can run)."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        return None
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    src = str(Path(__file__).resolve().parents[3] / "src")
    site = next(p for p in sys.path if p.endswith("site-packages"))
    env = ["env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", f"PYTHONPATH={src}:{site}"]
    version = "%d.%d" % sys.version_info[:2]
    for python in (sys.executable, shutil.which(f"python{version}") or "", "/usr/bin/python3"):
        if not python:
            continue
        check = [*drop, *env, python, "-c", "import sys, msgspec, bingo.sandbox; print('%d.%d' % sys.version_info[:2])"]
        probe_run = subprocess.run(check, capture_output=True, text=True, timeout=30)
        if probe_run.returncode == 0 and probe_run.stdout.strip() == version:
            return [*drop, *env, python]
    return None
