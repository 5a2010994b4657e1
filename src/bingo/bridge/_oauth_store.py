"""The sign-ins bingo keeps: one file per MCP server under `~/.bingo/data/oauth/` (INTERFACE
§14), mode 0600 in a 0700 directory, written atomically (`kernel.atomic`).

Owns the record (`Grant`: where the server signs in, the client bingo is there, the tokens)
and reading, writing and forgetting it. A file that cannot be read is no sign-in (the person
signs in again), never an error that stops a run. A record made for another URL than the
server's now is no sign-in for it either: a token goes only where it was issued.

It does not speak OAuth (`_oauth.py`) and never logs what a record holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from ..kernel.atomic import write_atomic
from ._oauth import AuthServer, Client, Tokens

__all__ = ["Grant", "GrantStore"]

_FILE_MODE = 0o600
_DIR_MODE = 0o700


class Grant(msgspec.Struct, frozen=True):
    """What bingo keeps of one server's sign-in."""

    url: str
    """The MCP server's URL it was made for."""
    server: AuthServer
    client: Client | None = None
    tokens: Tokens | None = None


class GrantStore:
    """The sign-ins under `directory` (`<data>/oauth`), one `<plugin name>.json` each."""

    __slots__ = ("directory",)

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    def has(self, name: str) -> bool:
        """Whether a record of `name` exists (one stat: the run's start pays no more)."""
        return self.path(name).is_file()

    def load(self, name: str, url: str) -> Grant | None:
        """The record of server `name` at `url`; None when there is none, it cannot be read,
        or it was made for another URL."""
        try:
            data = self.path(name).read_bytes()
            grant = msgspec.json.decode(data, type=Grant)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return None
        return grant if grant.url == url else None

    def save(self, name: str, grant: Grant) -> None:
        """Write the record (0600, atomically).

        Raises:
            OSError: it cannot be written.
        """
        self.directory.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)
        os.chmod(self.directory, _DIR_MODE)
        write_atomic(self.path(name), msgspec.json.encode(grant), mode=_FILE_MODE)

    def forget(self, name: str) -> bool:
        """Remove the record; whether there was one."""
        try:
            self.path(name).unlink()
        except FileNotFoundError:
            return False
        return True
