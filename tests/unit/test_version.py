"""bingo's version is written once in pyproject.toml and once in `bingo.__version__` (so no
start-up pays for `importlib.metadata`); this keeps the two equal."""

from __future__ import annotations

import tomllib
from pathlib import Path

import bingo


def test_the_version_constant_is_pyprojects_version() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"] == bingo.__version__
