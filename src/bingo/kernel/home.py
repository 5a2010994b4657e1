"""Where bingo keeps the user's things: the user layer and its data directory.

Its own small module so that the very start of a run (`bingo.cli`, before any heavy import)
can find them without importing the settings machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

__all__ = ["bingo_home", "data_dir"]


def bingo_home(environ: Mapping[str, str]) -> Path:
    """The user layer: `$BINGO_HOME`, else `$HOME/.bingo`."""
    explicit = environ.get("BINGO_HOME")
    if explicit:
        return Path(explicit)
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()) / ".bingo"


def data_dir(home: Path) -> Path:
    """What bingo writes for itself under the user layer `home`: sessions, logs, caches."""
    return home / "data"
