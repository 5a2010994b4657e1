"""`bingo mcp login NAME` and `bingo mcp logout NAME` (INTERFACE §14): the one HTTP MCP
server of that name, as a run would start it, signed in to or forgotten.

Owns finding the server (a plugin or a `.mcp.json` entry this project's trust lets run) and
saying what happened; the sign-in itself is `_signin.py`'s. It does not start the server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..kernel.errors import UsageError
from ..kernel.settings import Settings
from ._oauth_store import GrantStore
from .discovery import PluginSource

__all__ = ["mcp_login", "mcp_logout"]

CLIENT_CONNECT: float = 10.0
"""Seconds to reach the server or its authorization server."""


def _server(name: str, sources: Sequence[PluginSource], listed: Sequence[tuple[PluginSource, str]]) -> PluginSource:
    """The URL of HTTP MCP server `name` among the plugins a run would start.

    Raises:
        UsageError: there is none of that name, or it is no HTTP server, or it would not start.
    """
    for source in sources:
        if source.name != name:
            continue
        mcp = source.manifest.mcp if source.manifest is not None else None
        if source.manifest is None:
            raise UsageError(f"plugin {name} cannot be used: {source.problem}", "correct it first")
        if mcp is None or mcp.url is None:
            raise UsageError(
                f"plugin {name} is no HTTP MCP server: only a server with a url signs in",
                "a stdio server gets its keys from its env",
            )
        return source
    for source, why in listed:
        if source.name == name:
            raise UsageError(f"plugin {name} does not run here: {why}", "run bingo --trust in the project first")
    known = sorted(source.name for source in sources if source.manifest is not None and source.manifest.mcp)
    raise UsageError(
        f"there is no MCP server named {name}",
        f"the MCP servers are: {', '.join(known)}" if known else "declare it in a plugin.json or .mcp.json first",
    )


async def mcp_login(
    name: str,
    *,
    sources: Sequence[PluginSource],
    listed: Sequence[tuple[PluginSource, str]],
    settings: Settings,
    data_dir: Path,
    environ: Mapping[str, str],
    say: Callable[[str], None],
) -> str:
    """Sign in to server `name` now; the line that says it did.

    Raises:
        UsageError: there is no such server.
        OAuthError: the sign-in failed.
    """
    import httpx

    from ._signin import OAuthSettings, SignIn

    source = _server(name, sources, listed)
    assert source.manifest is not None and source.manifest.mcp is not None and source.manifest.mcp.url is not None
    url = source.manifest.mcp.url
    config = OAuthSettings.read(name, settings.plugins.get(name, {}))
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=CLIENT_CONNECT), follow_redirects=False) as client:
        sign_in = SignIn(
            name,
            url,
            store=GrantStore(data_dir / "oauth"),
            config=config,
            environ=environ,
            client=client,
            say=say,
            readable=settings.mcp_variables if source.layer == "project" else None,
        )
        await sign_in.login()
    return f"Signed in to {name}."


def mcp_logout(
    name: str, *, sources: Sequence[PluginSource], listed: Sequence[tuple[PluginSource, str]], data_dir: Path
) -> str:
    """Forget server `name`'s sign-in; the line that says so.

    Raises:
        UsageError: there is no such server.
    """
    store = GrantStore(data_dir / "oauth")
    if not store.has(name):
        _server(name, sources, listed)  # a typo is said as one
        return f"{name} was not signed in."
    store.forget(name)
    return f"Signed out of {name}: its tokens and registration are forgotten."
