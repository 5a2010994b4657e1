"""Where a package comes from: a `SOURCE` read (a directory, or a git repository with an
optional `#REF`) and fetched into a temporary directory (ADR-0048)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

import msgspec

from ..kernel.errors import UsageError

__all__ = ["Fetched", "fetch"]

_GIT_TIMEOUT: Final = 300
"""Seconds a clone may take before it is given up (and nothing is left behind)."""


class Fetched(msgspec.Struct, frozen=True):
    """A package's files in `directory`; the ref asked for and the commit got, for git."""

    directory: Path
    ref: str | None = None
    commit: str | None = None


def _is_git(source: str) -> bool:
    return source.startswith(("https://", "http://", "git@", "file://", "ssh://", "git://"))


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    if git is None:
        raise UsageError("git is not installed, and this source is a git repository", "install git, then run it again")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        [git, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=_GIT_TIMEOUT, check=False
    )


def fetch(source: str, into: Path) -> Fetched:
    """The package `source` names, its files copied or cloned into `into` (which must not
    exist). Raises UsageError with one line when the source is none bingo reads or fails."""
    if source.startswith("npm:"):
        raise UsageError(
            "npm: sources are not supported yet", "pack or clone the package and add its directory or repository"
        )
    location, _, ref = source.partition("#")
    ref = ref or None
    path = Path(location).expanduser()
    if not _is_git(location):
        if not path.exists():
            raise UsageError(
                f"{source} is not a directory, a git repository or an npm: package",
                "give a plugin's directory, a git URL (https://, git@, file://) or a repository's path",
            )
        if not path.is_dir():
            raise UsageError(f"{source} is not a directory", "give the plugin's directory")
        if ref is None and not (path / ".git").exists():
            shutil.copytree(path, into, symlinks=True)
            return Fetched(into)
        location = str(path.absolute())
    args = ["clone", "--quiet", "--no-recurse-submodules"]
    if ref is None:
        args += ["--depth", "1"]
    try:
        done = _git([*args, "--", location, str(into)])
        if done.returncode != 0:
            raise UsageError(
                f"git could not clone {location}: {_last(done.stderr)}", "check the address and that you can reach it"
            )
        if ref is not None:
            done = _git(["checkout", "--quiet", ref, "--"], cwd=into)
            if done.returncode != 0:
                raise UsageError(f"{location} has no ref {ref!r}: {_last(done.stderr)}", "give a branch, tag or commit")
        head = _git(["rev-parse", "HEAD"], cwd=into).stdout.strip() or None
    except subprocess.TimeoutExpired as exc:
        raise UsageError(f"git took longer than {_GIT_TIMEOUT} s on {location}", "try again") from exc
    shutil.rmtree(into / ".git", ignore_errors=True)
    return Fetched(into, ref, head)


def _last(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no reason given"
