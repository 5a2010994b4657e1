"""Finding a program on PATH without finding one in the project (ADR-0050).

A PATH entry that is empty or relative (`PATH=.:/usr/bin`, a trailing `:`, `node_modules/.bin`)
names a directory relative to wherever the search runs, and bingo runs in the project: a
`git` found there is the repository's own program, which bingo would start, unconfined,
before anybody trusted the project (the first checkpoint asks git where its excludes file is).
So every program bingo starts by a bare name — its own helpers (git, find, npm) and the
commands of plugins and servers — is looked for only in PATH's absolute directories, as Go's
`os/exec` has done since 1.19. A program meant to come from elsewhere is named by its path.
What a shell started by bingo finds (the model's `bash`, a hook's `bash -c`) is that shell's,
under the sandbox.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

__all__ = ["absolute_path", "which"]


def absolute_path(environ: Mapping[str, str] | None = None) -> str:
    """`environ`'s PATH (the process's own when None; `os.defpath` when unset) with every
    empty or relative entry left out."""
    path = (os.environ if environ is None else environ).get("PATH", os.defpath)
    return os.pathsep.join(entry for entry in path.split(os.pathsep) if os.path.isabs(entry))


def which(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The absolute path of the program `name` (a bare name) in `environ`'s PATH's absolute
    directories, or None."""
    path = absolute_path(environ)
    return shutil.which(name, path=path) if path else None
