"""Where bingo keeps the user's things: the user layer and its data directory.

Its own small module so that the very start of a run (`bingo.bridge._early`, before any
heavy import) can find them without importing the settings machinery, or pathlib (with
`urllib.parse` and `ipaddress` behind it, about a tenth of what that start imports): the
`*_path` spellings are strings, and `bingo_home`/`data_dir` the same places as `Path`s.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: see above
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
