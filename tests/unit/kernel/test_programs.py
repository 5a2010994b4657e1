"""`kernel.programs`: a bare name is looked for only in PATH's absolute directories."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bingo.kernel.programs import absolute_path, which


def _program(directory: Path, name: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_empty_and_relative_entries_are_left_out_and_the_rest_kept_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, first, second = tmp_path / "project", tmp_path / "first", tmp_path / "second"
    _program(here, "tool")
    _program(here / "bin", "tool")
    _program(second, "tool")
    wanted = _program(first, "tool")
    monkeypatch.chdir(here)
    path = os.pathsep.join([".", "", "bin", str(first), "", str(second), "./bin"])
    assert absolute_path({"PATH": path}) == os.pathsep.join([str(first), str(second)])
    assert which("tool", {"PATH": path}) == str(wanted)
    assert which("tool", {"PATH": ".:bin:"}) is None  # found only where the project is: not found
    monkeypatch.setenv("PATH", path)
    assert which("tool") == str(wanted)  # the process's own PATH when none is given
    assert absolute_path({}) == os.pathsep.join(e for e in os.defpath.split(os.pathsep) if os.path.isabs(e))
