"""The bot's machine's paths as a room reads them: no absolute path of it in a message.

Everyone in a room reads what the bot says there, and a room is read on other machines: the
bot's directory layout (its user name, where its projects and logs are) is not theirs to
read, and is noise besides. So every string a room is sent passes `Paths`: a path under the
room's working directory is shown relative to it (`src/calc.py`, the directory itself `.`),
bingo's own directory as `$BINGO_HOME` (or `~/.bingo` when it is the default), the home
directory as `~`. Those three are lossless: the person can find the file from what is shown.
bingo's own lines (notices, the status of a turn's calls) go further (`Paths.line`): any
other absolute path is shortened to its last name (`…/plugin-x.log`), as it names something
the person reads about, not something they approve. A question keeps every other path whole,
since what is asked is what runs.

It does not decide what is sent (`_room.py` does) and never touches the filesystem beyond
resolving the three directories once.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["Paths"]

_ABSOLUTE = re.compile(r"(?<![\w.~$/:\\-])/(?:[^\s/'\"`()<>\[\]{},;|]+/)+[^\s/'\"`()<>\[\]{},;|]*")
"""An absolute path of two names or more in running text (`/stop` and URLs are not: a URL's
path follows its host, and one name alone is a command's)."""


def _variants(path: Path) -> list[str]:
    """`path` as written and as resolved (a link such as /tmp on some systems), no trailing /."""
    out = {str(path).rstrip("/") or "/"}
    try:
        out.add(str(path.resolve()).rstrip("/") or "/")
    except (OSError, RuntimeError):
        pass
    return [p for p in out if p != "/"]


class Paths:
    """The rewriting of one room's strings (see the module docstring)."""

    def __init__(self, *, cwd: Path, home: Path | None, bingo_home: Path | None) -> None:
        shown: list[tuple[str, str]] = []
        for path in _variants(cwd):
            shown.append((path, "."))
        if bingo_home is not None:
            default = home is not None and bingo_home == home / ".bingo"
            for path in _variants(bingo_home):
                shown.append((path, "~/.bingo" if default else "$BINGO_HOME"))
        if home is not None:
            for path in _variants(home):
                shown.append((path, "~"))
        # The longest first: the cwd is usually under the home directory.
        shown.sort(key=lambda pair: len(pair[0]), reverse=True)
        self._shown = shown
        self._pattern = (
            re.compile("|".join(f"(?:{re.escape(path)})(?![\\w-]|\\.[\\w-])" for path, _ in shown)) if shown else None
        )
        self._names = dict(shown)

    def known(self, text: str) -> str:
        """`text` with the cwd, bingo's directory and the home directory written short."""
        if self._pattern is None:
            return text
        pattern = self._pattern

        def one(match: re.Match[str]) -> str:
            end = match.end()
            short = self._names[match.group(0)]
            if short == "." and end < len(text) and text[end] == "/":
                return "\0"  # `/cwd/src` is `src`: the slash after it goes too (below)
            return short

        out = pattern.sub(one, text)
        return out.replace("\0/", "") if "\0" in out else out

    def line(self, text: str) -> str:
        """`known`, and any other absolute path shortened to its last name (bingo's own lines)."""
        text = self.known(text)
        return _ABSOLUTE.sub(lambda m: "…/" + (m.group(0).rstrip("/").rsplit("/", 1)[-1] or m.group(0)), text)

    @classmethod
    def of(cls, environ: dict[str, str], bingo_home: Path) -> Paths:
        """The paths of this process: its cwd (the room's), HOME and bingo's directory."""
        home = environ.get("HOME")
        return cls(cwd=Path(os.getcwd()), home=Path(home) if home else None, bingo_home=bingo_home)
