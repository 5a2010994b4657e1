"""A child conversation's own git worktree (`isolation: worktree`, INTERFACE.md §15).

Owns making a new worktree of the project's repository on a new branch for one child, and,
when the child is done, removing it (and its branch) if the child left nothing in it: no
change in its files (`git status` clean, ignored files aside) and no commit past where it
started. The worktree lives in the repository's own git directory
(`<git dir>/bingo-worktrees/<name>`): inside the project, so the sandbox lets the child's
`bash` write there and `write`/`edit` keep to it, and inside `.git`, so the main tree's
`git status`, its checkpoints and glob/grep never see it; the gate judges a path below it as
a working tree's, not as one in `.git` (`kernel.gate.GIT_WORKTREES`, ADR-0049).

git runs in bingo's own process with the repository's code-running configuration
neutralised (`tools._git.environment`: no hooks, no fsmonitor, no filters), each command
within `GIT_SECONDS`; what git says on failure is cut to `_SAID` characters.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from ..kernel.errors import BingoError
from ..kernel.gate import GIT_WORKTREES
from ..kernel.programs import which

__all__ = ["GIT_SECONDS", "Worktree", "WorktreeError", "make_worktree"]

GIT_SECONDS = 30.0
"""Seconds one git command of a worktree's making or removal may take."""
_SAID = 300
"""Characters of git's own words kept in an error."""


class WorktreeError(BingoError):
    """A worktree could not be made (not a git repository, no commit yet, git missing)."""


@dataclass(frozen=True, slots=True)
class Worktree:
    """A child's worktree: its directory, its branch, and the commit it started from."""

    path: Path
    branch: str
    base: str

    async def changed(self) -> bool:
        """Whether the child left anything: a change in the files or a commit past `base`
        (True when git cannot tell: a worktree is never removed on a guess)."""
        try:
            status = await _git(self.path, "status", "--porcelain", "--untracked-files=all")
            head = await _git(self.path, "rev-parse", "HEAD")
        except WorktreeError:
            return True
        return bool(status.strip()) or head.strip() != self.base

    async def remove(self) -> str | None:
        """Remove the worktree and its branch; None when done, else what went wrong."""
        try:
            await _git(self.path, "worktree", "remove", "--force", str(self.path))
            await _git(self.path.parent, "branch", "-D", self.branch)
        except WorktreeError as exc:
            return exc.line()
        return None


async def _git(cwd: Path, *args: str) -> str:
    """git's stdout for `args` in `cwd`.

    Raises:
        WorktreeError: git is missing, fails, or takes longer than GIT_SECONDS.
    """
    from ..tools._git import environment

    try:
        neutral = await environment(str(cwd))
    except OSError:
        neutral = {}
    env = {**os.environ, **neutral, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    git = which("git")
    if git is None:
        raise WorktreeError("git could not be run (it is not on PATH)", "install git")
    try:
        process = await asyncio.create_subprocess_exec(
            git,
            *args,
            cwd=str(cwd),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise WorktreeError(f"git could not be run ({exc.strerror or exc})", "install git") from None
    try:
        async with asyncio.timeout(GIT_SECONDS):
            out, err = await process.communicate()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise WorktreeError(f"git {args[0]} took longer than {GIT_SECONDS:g} s", "try again") from None
    if process.returncode != 0:
        said = " ".join(err.decode("utf-8", "replace").split())[:_SAID] or f"exit {process.returncode}"
        raise WorktreeError(f"git {args[0]} failed: {said}")
    return out.decode("utf-8", "replace")


async def make_worktree(cwd: Path, agent: str) -> tuple[Worktree, Path]:
    """A new worktree of the repository `cwd` is in, on a new branch named for `agent`, and
    the directory in it that stands for `cwd` (the same place below the top).

    Raises:
        WorktreeError: `cwd` is not in a git repository, the repository has no commit yet,
            or git cannot make it.
    """
    try:
        top = Path((await _git(cwd, "rev-parse", "--show-toplevel")).strip())
        common = (await _git(cwd, "rev-parse", "--git-common-dir")).strip()
    except WorktreeError as exc:
        raise WorktreeError(
            f"{cwd} is not in a git repository that git can read ({exc.message})",
            "run bingo in a git repository, or leave `isolation: worktree` out of the agent's file",
        ) from None
    try:
        base = (await _git(cwd, "rev-parse", "--verify", "HEAD^{commit}")).strip()
    except WorktreeError:
        raise WorktreeError(
            f"the git repository at {top} has no commit yet, so no worktree can be made of it",
            "commit once, then call the agent again",
        ) from None
    name = f"agent-{agent}-{secrets.token_hex(3)}"
    branch = f"bingo/{name}"
    home = (cwd / common if not Path(common).is_absolute() else Path(common)).resolve() / GIT_WORKTREES
    path = home / name
    home.mkdir(parents=True, exist_ok=True)
    await _git(top, "worktree", "add", "--quiet", "-b", branch, str(path), base)
    try:
        below = cwd.resolve().relative_to(top.resolve())
    except ValueError:
        below = Path()
    where = path / below
    return Worktree(path, branch, base), where if where.is_dir() else path
