"""What a rule-allowed `bash` command runs git with (tools/_git.py, ADR-0018 as amended by
issue 23 item 14): every key of the repository's own configuration that names a program is
put back to the person's own value, or to one that runs nothing."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from bingo.tools._git import environment, overrides

FIXED = [("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("protocol.ext.allow", "never")]


def _listing(*entries: tuple[str, str, str | None]) -> bytes:
    return b"".join(
        f"{scope}\0{key}{'' if value is None else chr(10) + value}\0".encode() for scope, key, value in entries
    )


def test_the_repositorys_programs_are_neutralised_and_the_persons_own_values_kept() -> None:
    listing = _listing(
        ("global", "core.pager", "less -R"),
        ("global", "credential.helper", "store"),
        ("global", "filter.lfs.clean", "git-lfs clean -- %f"),
        ("local", "core.pager", "evil"),
        ("local", "core.fsmonitor", "/x/monitor"),
        ("local", "credential.helper", "!evil"),
        ("local", "filter.lfs.clean", "evil"),
        ("local", "filter.Crypt.smudge", "evil"),
        ("local", "diff.Pic.textconv", "evil"),
        ("worktree", "alias.st", "!evil"),
        ("local", "pager.log", "evil"),
        ("local", "gpg.ssh.program", "evil"),
        ("local", "user.name", "someone"),
        ("local", "core.bare", None),
    )

    assert overrides(listing) == [
        *FIXED,
        ("core.pager", "less -R"),
        ("credential.helper", ""),
        ("credential.helper", "store"),
        ("filter.lfs.clean", "git-lfs clean -- %f"),
        ("filter.Crypt.smudge", "cat"),
        ("diff.Pic.textconv", "cat"),
        ("alias.st", ""),
        ("pager.log", "false"),
        ("gpg.ssh.program", "ssh-keygen"),
    ]


def test_without_a_listing_only_the_fixed_keys_are_set() -> None:
    assert overrides(b"") == FIXED


def test_the_environment_comes_after_a_count_already_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")

    extra = asyncio.run(environment(str(tmp_path)))

    assert extra["GIT_CONFIG_COUNT"] == str(2 + len(FIXED))
    assert [extra[f"GIT_CONFIG_KEY_{n}"] for n in range(2, 5)] == [key for key, _ in FIXED]


def test_a_repositorys_filter_and_textconv_do_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho "$0" >> {marker}\ncat\n', encoding="utf-8")
    evil.chmod(0o755)
    repo = tmp_path / "repo"
    env = {**os.environ, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str, extra: dict[str, str] | None = None) -> None:
        subprocess.run(
            ["git", "-C", str(repo), *args], check=True, env={**env, **(extra or {})}, capture_output=True, timeout=30
        )

    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env, timeout=30)
    (repo / "a.txt").write_text("a\n", encoding="utf-8")
    (repo / ".gitattributes").write_text("*.txt filter=x diff=y\n", encoding="utf-8")
    git("add", ".")
    git("-c", "user.name=a", "-c", "user.email=b", "commit", "-qm", "one")
    for key in ("filter.x.clean", "filter.x.smudge", "diff.y.textconv"):
        git("config", key, str(evil))
    (repo / "a.txt").write_text("b\n", encoding="utf-8")

    extra = asyncio.run(environment(str(repo)))
    git("status", extra=extra)
    git("diff", extra=extra)
    git("stash", "-q", extra=extra)
    assert not marker.exists()
    git("stash", "pop", "-q")  # without the environment the repository's filter runs
    assert marker.exists()


def test_a_configuration_too_large_to_read_fails_closed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A repository that makes its listing too large (or too slow) to read must not run its
    # programs for it: git is given a key it refuses, and says why.
    monkeypatch.setattr("bingo.tools._git._LISTING_LIMIT", 10)
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    marker = tmp_path / "ran"
    subprocess.run(["git", "-C", str(repo), "config", "alias.st", f"!touch {marker}"], check=True, timeout=30)

    extra = asyncio.run(environment(str(repo)))
    ran = subprocess.run(
        ["git", "st"], cwd=repo, env={**os.environ, **extra}, capture_output=True, text=True, timeout=30
    )

    assert ran.returncode != 0
    assert "configuration could not be read in time or is too large, so git does not run under a rule" in ran.stderr
    assert not marker.exists()
