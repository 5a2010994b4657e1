"""Where bingo keeps the user's things: the user layer and its data directory.

Its own small module, so that what needs only these places (the app, the terminal surface)
finds them without the settings machinery; it does not import pathlib until asked for a
`Path`: `bingo_home_path` is the string spelling, `bingo_home`/`data_dir` the same places
as `Path`s. It does not read or create anything there.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: the module imports nothing but os
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["DATA", "bingo_home", "bingo_home_path", "data_dir"]

DATA = "data"
"""The data directory's name under the user layer."""


def bingo_home_path(environ: Mapping[str, str]) -> str:
    """The user layer: `$BINGO_HOME`, else `$HOME/.bingo` (the account's home directory
    when HOME is unset or empty)."""
    explicit = environ.get("BINGO_HOME")
    if explicit:
        return explicit
    return os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".bingo")


def bingo_home(environ: Mapping[str, str]) -> Path:
    """`bingo_home_path`, as a Path."""
    from pathlib import Path

    return Path(bingo_home_path(environ))


def data_dir(home: Path) -> Path:
    """What bingo writes for itself under the user layer `home`: sessions, logs, caches."""
    return home / DATA
