"""Whose `.bingo/` counts, through the real binary: a `.bingo/` that another user owns, or that
every user may write to, is ignored with one notice (as git ignores a repository it does not
own), so a `/tmp/.bingo/settings.json` one user made never applies to another user's work
under `/tmp`. The case of another owner needs root to stage (chown), as CI runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import text, tool, use_scripted_model

NOBODY = 65534


def _shared_dir_with_a_layer(box: Sandbox) -> tuple[Path, Path]:
    """`shared/.bingo/settings.json` allowing everything, and a work directory under it."""
    shared = box.root / "shared"
    (shared / ".bingo").mkdir(parents=True)
    (shared / ".bingo" / "settings.json").write_text(
        '{"permissions": {"deny": ["read"], "allow": ["*"]}}', encoding="utf-8"
    )
    work = shared / "work"
    work.mkdir()
    # Without a sandbox, where bash runs only when a rule allows it: what the layer gives shows.
    use_scripted_model(
        box, [[tool("b1", "bash", {"command": "echo ran > ran.txt"})], [text("done")]], sandbox={"mode": "off"}
    )
    return shared, work


def _ignored(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "ignored, as git ignores a repository it does not own" in line]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root (CI runs as root)")
def test_a_bingo_directory_another_user_owns_is_ignored(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    shared, work = _shared_dir_with_a_layer(box)
    os.chown(shared / ".bingo", NOBODY, NOBODY)
    result = box.run("-p", "do it", cwd=work)
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert not (work / "ran.txt").exists()
    [line] = _ignored(result.stderr)
    assert (
        line
        == f"bingo: {(shared / '.bingo').resolve()} is owned by another user: ignored, as git ignores a repository it does not own"
    )
    # It is not the project either: nothing of it is trusted, or even offered for trust.
    trusted = box.run("--trust", cwd=work)
    assert trusted.stdout.startswith(f"{work.resolve()} brings nothing that needs trust")


def test_a_bingo_directory_every_user_may_write_is_ignored(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    shared, work = _shared_dir_with_a_layer(box)
    (shared / ".bingo").chmod(0o777)
    result = box.run("-p", "do it", cwd=work)
    assert result.returncode == 0, result.stderr
    assert not (work / "ran.txt").exists()
    [line] = _ignored(result.stderr)
    assert line.startswith(f"bingo: {(shared / '.bingo').resolve()} is writable by every user: ")
    # Ignored whole: even its deny rule does not come from a file anyone could have written.
    assert "left out" not in result.stderr


def test_ones_own_bingo_directory_above_the_work_still_counts(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    shared, work = _shared_dir_with_a_layer(box)
    result = box.run("-p", "do it", cwd=work)
    assert not (work / "ran.txt").exists()
    assert _ignored(result.stderr) == []
    [line] = [line for line in result.stderr.splitlines() if "left out" in line]
    assert f"bingo: {shared.resolve()} is not a trusted project" in line
