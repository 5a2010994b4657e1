"""The MCP servers an editor passes with its sessions (`session/new`, `session/load`), hosted
for the process's runs: each a plugin of this process, started once however many sessions
pass it, under the gate like every plugin's, and stopped when the process's stack closes.

It does not speak ACP (`surfaces.acp` names the servers) nor open runs (the factory).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..kernel.notices import Notices
from ..kernel.registry import Registry
from ..kernel.settings import Settings
from ..sandbox import Sandbox

if TYPE_CHECKING:
    from ..bridge import PluginSource
    from ..surfaces.acp import HostMcp, McpServerSpec

__all__ = ["editor_mcp"]


def editor_mcp(
    stack: contextlib.AsyncExitStack,
    *,
    registry: Registry,
    notices: Notices,
    settings: Settings,
    data_dir: Path,
    plugins: set[str],
    sandbox: Sandbox,
) -> HostMcp:
    """The host of the MCP servers an editor passes with its sessions: each a plugin of this
    run (the user's own, as the editor's settings are), its tools untrusted and under the
    gate like every plugin's, started once however many sessions pass it, and stopped when
    the run ends (`stack`). A server named like one of this run's `plugins`, or like a plugin
    an allow rule names, is not started: its tools would be that plugin's names, and the
    person's rules for that plugin would allow them (ADR-0026)."""
    from ..bridge import McpServer, PluginHost, PluginSource, check_name, mcp_manifest, named_plugin
    from ..kernel.gate import parse_rule

    hosted: dict[str, McpServerSpec] = {}
    refused: set[str] = set()  # said once a run, however many sessions pass them
    ruled = {name for rule in settings.permissions.allow if (name := named_plugin(parse_rule(rule).tool)) is not None}

    def taken(name: str) -> str | None:
        if name in plugins:
            return f"bingo has a plugin named {name} already, and its permission rules would apply to this server's tools; rename the server in the editor's settings"
        if name in ruled:
            return f"an allow rule names a plugin {name} (plugin__{name}__…), and it would allow this server's tools; rename the server in the editor's settings"
        return None

    async def host(servers: list[McpServerSpec], cwd: str) -> None:
        fresh: list[PluginSource] = []
        for spec in servers:
            known = hosted.get(spec.name)
            problem = check_name(spec.name) or taken(spec.name)
            if known == spec or spec.name in refused:
                continue
            if known is not None or problem is not None:
                why = problem or "one of that name runs already, as the editor first passed it"
                if problem is not None:
                    refused.add(spec.name)
                notices.say("bingo", f"the editor's MCP server {spec.name} is not started: {why}", "warning")
                continue
            hosted[spec.name] = spec
            server = McpServer(
                command=spec.command,
                args=list(spec.args),
                env=dict(spec.env),
                url=spec.url,
                headers=dict(spec.headers),
                type="http" if spec.url else None,
            )
            fresh.append(
                PluginSource(
                    name=spec.name,
                    layer="user",
                    root=Path(cwd),
                    manifest=mcp_manifest(spec.name, server),
                    problem=None,
                    base=Path(cwd),
                )
            )
        if fresh:
            plugins_host = await stack.enter_async_context(
                PluginHost(
                    sources=fresh,
                    registry=registry,
                    notices=notices,
                    settings=settings,
                    data_dir=data_dir,
                    cwd=Path(cwd),
                    cache=False,
                    sandbox=sandbox,
                )
            )
            await plugins_host.start()

    return host
