"""bingo's version is written once in pyproject.toml and once in `bingo.__version__` (so no
start-up pays for `importlib.metadata`); this keeps the two equal."""

from __future__ import annotations

import tomllib
from pathlib import Path

import bingo


def test_the_version_constant_is_pyprojects_version() -> None:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"] == bingo.__version__


def test_the_terminal_libraries_are_ordinary_dependencies() -> None:
    # `pip install bingo` alone must give a working terminal (issue 14): no extra to know about.
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    names = {requirement.split(">")[0].split("=")[0].strip() for requirement in project["dependencies"]}
    assert {"rich", "prompt_toolkit"} <= names
    assert "terminal" not in project.get("optional-dependencies", {})
