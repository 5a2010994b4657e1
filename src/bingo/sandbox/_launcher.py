"""Package runners: the commands that install what they run before running it.

Owns the one recognition of a server started through a package runner (`npx`, `npm exec`,
`pnpx`, `pnpm dlx`, `yarn dlx`, `bunx`, `bun x`, `uvx`, `uv tool run`, `pipx run`), by the
command's base name and, for a package manager's own command, its subcommand. The sandbox
grants such a server its manager's cache and registry (`_build.launcher_grants`); the bridge
gives its first start longer and never kills it in the middle of an install (ADR-0036). It
decides nothing itself and does no I/O.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Literal

import msgspec

__all__ = ["Launcher", "Manager", "launcher"]

Manager = Literal["npm", "pnpm", "yarn", "bun", "uv", "pipx"]
"""Whose cache and registry a package runner uses."""


class Launcher(msgspec.Struct, frozen=True):
    """A package runner a command starts its server through."""

    said: str
    """How a person writes it: `npx`, `npm exec`, `uvx`, `pipx run`."""
    manager: Manager


_SUFFIX = re.compile(r"(\.exe|\.cmd)\Z")
_ALONE: dict[str, Manager] = {"npx": "npm", "pnpx": "pnpm", "bunx": "bun", "uvx": "uv"}
"""Commands that are a package runner whatever follows them."""
_SUBCOMMANDS: dict[str, tuple[Manager, tuple[tuple[str, ...], ...]]] = {
    "npm": ("npm", (("exec",), ("x",))),
    "pnpm": ("pnpm", (("dlx",),)),
    "yarn": ("yarn", (("dlx",),)),
    "bun": ("bun", (("x",),)),
    "pipx": ("pipx", (("run",),)),
    "uv": ("uv", (("tool", "run"),)),
}
"""A package manager's own command, and the subcommands that make it a package runner."""


def launcher(argv: Sequence[str]) -> Launcher | None:
    """The package runner `argv` starts its server through, or None for any other command."""
    if not argv:
        return None
    base = _SUFFIX.sub("", os.path.basename(argv[0]))
    alone = _ALONE.get(base)
    if alone is not None:
        return Launcher(said=base, manager=alone)
    known = _SUBCOMMANDS.get(base)
    if known is None:
        return None
    manager, subcommands = known
    # The subcommand is the first words that are not options (`npm --yes exec` is rare, but
    # an option before the subcommand must not hide it).
    words = [arg for arg in argv[1:] if not arg.startswith("-")]
    for subcommand in subcommands:
        if tuple(words[: len(subcommand)]) == subcommand:
            return Launcher(said=" ".join((base, *subcommand)), manager=manager)
    return None
