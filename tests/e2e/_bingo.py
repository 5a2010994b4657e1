"""The black-box harness: the real `bingo` executable in a temporary HOME and BINGO_HOME.

Not a fixture module on purpose: each test file builds its own `Sandbox` so what it sets up
is visible in the file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "plugins"
TEST_PLUGINS = REPO / "tests" / "plugins"
BINGO = str(Path(sys.executable).parent / "bingo")

TIMEOUT = 60
"""No single bingo run in these tests may take longer: a hang fails, it does not stall CI."""


@dataclass
class Sandbox:
    """A temporary world for one test: HOME, BINGO_HOME and a project directory."""

    root: Path
    env: dict[str, str] = field(default_factory=lambda: {})

    def __post_init__(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.bingo_home.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        (self.project / ".git").mkdir(exist_ok=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("BINGO_", "ANTHROPIC_", "OPENAI_"))}
        base.update({"HOME": str(self.home), "BINGO_HOME": str(self.bingo_home), "NO_COLOR": "1"})
        self.env = {**base, **self.env}

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def bingo_home(self) -> Path:
        return self.root / "home" / ".bingo"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def logs(self) -> Path:
        return self.bingo_home / "data" / "logs"

    def install(self, source: Path, *, layer: str = "user", name: str | None = None) -> Path:
        """Copy a plugin directory into the user or project layer."""
        base = self.bingo_home if layer == "user" else self.project / ".bingo"
        target = base / "plugins" / (name or source.name)
        shutil.copytree(source, target)
        return target

    def settings(self, value: dict[str, Any], *, layer: str = "user") -> None:
        """Write a settings file of the given layer."""
        path = {
            "user": self.bingo_home / "settings.json",
            "project": self.project / ".bingo" / "settings.json",
            "local": self.project / ".bingo" / "settings.local.json",
        }[layer]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")

    def run(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run bingo to completion with no stdin; text out."""
        return subprocess.run(
            [BINGO, *args],
            cwd=cwd or self.project,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run_with_input(
        self, *args: str, input: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT
    ) -> subprocess.CompletedProcess[str]:
        """Run bingo to completion with `input` on its stdin (a pipe); text out."""
        return subprocess.run(
            [BINGO, *args],
            cwd=self.project,
            env={**self.env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start bingo and return at once."""
        return subprocess.Popen(
            [BINGO, *args],
            cwd=self.project,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


def no_traceback(result: subprocess.CompletedProcess[str]) -> bool:
    """True when nothing that looks like a Python traceback reached the person."""
    return "Traceback (most recent call last)" not in result.stderr + result.stdout
