"""`${VAR}` in an MCP server's declaration, and who may read what (ADR-0028).

Owns the one reading of `${VAR}` and `${VAR:-default}` (INTERFACE.md §6): the variables a
server's `command`, `args`, `env`, `url` and `headers` read (`variables_read`, for the trust
question and for the check), and their expansion (`expand_server`), which a project's server
may do only for the variables the person lists in `mcpVariables`: a server that reads any
other is left out, with why, and so is one that reads a variable that is unset and has no
default. `${PLUGIN_ROOT}` is no variable: the entry's own expansion (`discovery.entry_command`)
replaces it. It reads no settings and no environment of its own: both are given.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Final

import msgspec

from .manifest import PLUGIN_ROOT, McpServer

__all__ = ["MCP_VARIABLES", "expand_server", "expansion_problem", "variables_read"]

MCP_VARIABLES: Final = "mcpVariables"
"""The setting (user settings and the command line only) naming the variables a project's
MCP servers may read."""

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_NAMED_MAX = 5
"""Variables named in one refusal; a server reading more is said to read 'and N more'."""


def _texts(server: McpServer) -> Iterator[str]:
    if server.command is not None:
        yield server.command
    yield from server.args
    yield from server.env.values()
    if server.url is not None:
        yield server.url
    yield from server.headers.values()


def variables_read(server: McpServer) -> list[str]:
    """The variables `server` reads, each once, in the order written (`PLUGIN_ROOT` is none)."""
    found: dict[str, None] = {}
    for text in _texts(server):
        for match in _REFERENCE.finditer(text):
            if f"${{{match.group(1)}}}" != PLUGIN_ROOT:
                found[match.group(1)] = None
    return list(found)


def _named(names: list[str]) -> str:
    shown = [f"${{{name}}}" for name in names[:_NAMED_MAX]]
    more = f" and {len(names) - _NAMED_MAX} more" if len(names) > _NAMED_MAX else ""
    return (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]) + more


def expansion_problem(
    server: McpServer, environ: Mapping[str, str], allowed: Collection[str] | None, *, settings: str
) -> tuple[str, str] | None:
    """Why `server`'s variables cannot be expanded, as what is wrong and what to do, or None:
    it reads a variable `allowed` does not hold (None: every variable is allowed, a user
    plugin's), or one that is unset with no default. `settings` is the file to name in the
    fix (the person's own settings)."""
    read = variables_read(server)
    unlisted = [name for name in read if allowed is not None and name not in allowed]
    if unlisted:
        quoted = ", ".join(f'"{name}"' for name in unlisted[:_NAMED_MAX])
        return (
            f"it reads {_named(unlisted)}, which your settings do not let a project's MCP server read",
            f"add {quoted} to {MCP_VARIABLES} in {settings} to let it",
        )
    unset: dict[str, None] = {}
    for text in _texts(server):
        for match in _REFERENCE.finditer(text):
            name, default = match.group(1), match.group(2)
            if f"${{{name}}}" != PLUGIN_ROOT and default is None and name not in environ:
                unset[name] = None
    if unset:
        names = list(unset)
        return (
            f"it reads {_named(names)}, which {'is' if len(names) == 1 else 'are'} not set",
            f"set {'it' if len(names) == 1 else 'them'}, or give a default (${{{names[0]}:-...}})",
        )
    return None


def expand_server(
    server: McpServer, environ: Mapping[str, str], allowed: Collection[str] | None, *, settings: str
) -> McpServer | str:
    """`server` with every `${VAR}` and `${VAR:-default}` expanded from `environ`, or why it
    cannot run (`expansion_problem`, in one line)."""
    problem = expansion_problem(server, environ, allowed, settings=settings)
    if problem is not None:
        return ": ".join(problem)

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if f"${{{name}}}" == PLUGIN_ROOT:
            return match.group(0)
        found = environ.get(name)
        if found is None or (found == "" and default is not None):
            return default or ""
        return found

    def expand(text: str) -> str:
        return _REFERENCE.sub(value, text)

    return msgspec.structs.replace(
        server,
        command=expand(server.command) if server.command is not None else None,
        args=[expand(arg) for arg in server.args],
        env={key: expand(text) for key, text in server.env.items()},
        url=expand(server.url) if server.url is not None else None,
        headers={key: expand(text) for key, text in server.headers.items()},
    )
