"""Which of a project's paths git would not track: the `.gitignore` files of every directory
(and `.git/info/exclude`), read whether or not the project is a git repository.

Owns the matching, through `pathspec`'s `GitIgnoreSpec` (the gitignore dialect: negation,
anchoring, `**`, directory-only patterns and git's own precedence quirks), one spec per
`.gitignore`, the deepest deciding first as git does, and where git's own excludes file is
(`core.excludesFile`, by default `$XDG_CONFIG_HOME/git/ignore`: `excludes_file`), whose rules
come below every other's. It does not walk the tree (`_scan` does, asking `Ignores.below` for
each directory it enters and `ignored` for each name).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..kernel.files import read_regular
from ..kernel.programs import which

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["Ignores", "excludes_file", "read_spec"]

_MAX_IGNORE_BYTES = 1 << 20
"""A `.gitignore` longer than this is read only this far: a rule file, not data."""


_GIT_SECONDS = 5.0
"""How long `git config` may take to say where the excludes file is."""


def excludes_file(project: str) -> str | None:
    """The excludes file git reads for `project` (`core.excludesFile` as `git config` says it
    in the project: system, global and the repository's own settings, includes and `~`
    expanded; unset, `$XDG_CONFIG_HOME/git/ignore`, or `~/.config/git/ignore` when that
    variable is unset or empty, as git does). When git refuses the project's repository (its
    config cannot be read), the setting as the system's and the person's own settings give it,
    outside any repository. Without git, or when it cannot answer, the default place. None
    when there is no home to find it in."""
    git = which("git")
    if git is not None:
        answer = _git_config(git, project, None)
        if answer is None:
            # Not "unset" but refused (a config line git cannot read): the person's global
            # setting still says what they want ignored everywhere; no repository is read
            # when GIT_DIR is not a directory.
            answer = _git_config(git, project, os.devnull)
        if answer:
            return os.path.join(project, answer)  # as git: relative to where it runs
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return os.path.join(xdg, "git", "ignore")
    home = os.environ.get("HOME")
    return os.path.join(home, ".config", "git", "ignore") if home else None


def _git_config(git: str, project: str, git_dir: str | None) -> str | None:
    """`core.excludesFile` as `git config` run in `project` gives it ("" when unset, or when
    git could not be run or took too long: then nothing is asked again), or None when git
    refused to answer (a config it cannot read). `git_dir` set: no repository's config read."""
    env = None if git_dir is None else {**os.environ, "GIT_DIR": git_dir}
    try:
        done = subprocess.run(
            [git, "config", "--get", "--path", "core.excludesFile"],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    if done.returncode == 0:
        return done.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    return "" if done.returncode == 1 else None  # 1: the key is not set


def read_spec(path: str) -> tuple[GitIgnoreSpec | None, list[int]]:
    """The rules of the gitignore-format file at `path`, or None when there is none (or it
    cannot be read: then nothing more is ignored, so more is recorded, never less); and the
    numbers of its lines left out, which RE2 cannot match (a bracket holding `[:` that is no
    class it knows: git reads `[[:alpha:]]`, and no engine here reads it as git does).

    Raises:
        ImportError: google-re2 is not installed.
    """
    try:
        data = read_regular(path, _MAX_IGNORE_BYTES)[:_MAX_IGNORE_BYTES]
    except OSError:
        return None, []
    lines = data.decode("utf-8", "surrogateescape").splitlines()
    left: list[int] = []
    try:
        spec = _spec(lines)
    except ImportError:
        raise
    except Exception:  # re2.error: some line RE2 cannot compile; each is tried alone
        left = [n for n, line in enumerate(lines, 1) if not _compiles(line)]
        spec = _spec([line for n, line in enumerate(lines, 1) if n not in left])
    return (spec if spec.patterns else None), left


def _spec(lines: list[str]) -> GitIgnoreSpec:
    # RE2, not Python's backtracking `re`: a repository's `*a*a*a*a*a*a*a*a*a*a*a*a*b` against
    # a file named with 40 `a`s took Python two minutes, with the turn's first tool waiting and
    # bingo's exit after it; RE2 takes time linear in the name (ADR-0044).
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines, backend="re2")


def _compiles(line: str) -> bool:
    try:
        _spec([line])
    except ImportError:
        raise
    except Exception:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Ignores:
    """The rules in force in one directory: each spec with the directory (relative to the
    project, "" for its root, else ending in "/") its patterns are relative to, the deepest
    last."""

    specs: tuple[tuple[str, GitIgnoreSpec], ...] = ()
    key: tuple[int, ...] = ()
    """The serial numbers of the specs: equal keys, equal rules."""

    def below(self, directory: str, spec: GitIgnoreSpec | None, serial: int = 0) -> Ignores:
        """The rules in force in `directory` (relative, "" or ending in "/"), whose own
        `.gitignore` is `spec` (numbered `serial` by whoever parsed it)."""
        return self if spec is None else Ignores((*self.specs, (directory, spec)), (*self.key, serial))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git would ignore `path` (relative to the project, no trailing "/"): the
        deepest file whose patterns match decides, and its last matching pattern within it."""
        for base, spec in reversed(self.specs):
            rel = path[len(base) :] + ("/" if is_dir else "")
            decided = spec.check_file(rel).include
            if decided is not None:
                return decided
        return False
