"""The commands that look after plugins and open no run: `bingo --check-plugin`, a plugin's
(or a `.mcp.json`'s servers') checkup, run as bingo would run it (confined, where the sandbox
is in force), its report on stdout; and `bingo mcp login|logout NAME` (INTERFACE §14).

It owns which path is checked and in which project, and the report's printing; the checks
and the sign-ins are the bridge's (`bridge.check`, `bridge.signin`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .kernel.errors import UsageError
from .kernel.home import data_dir as data_dir_of
from .kernel.log import setup_logging
from .kernel.notices import Notices
from .kernel.settings import Settings, bingo_home, find_project, read_settings
from .run import start_sandbox
from .surfaces import escape

if TYPE_CHECKING:
    from .bridge.check import McpJsonReport, Report

__all__ = ["check_plugin", "run_mcp"]


async def check_plugin(
    where: str,
    *,
    call: bool,
    json: bool,
    settings: Settings,
    home: Path,
    project: Path,
    cwd: Path,
    data_dir: Path,
    environ: dict[str, str],
) -> int:
    """`--check-plugin DIR` (a plugin's directory, or one holding a `.mcp.json`) or
    `--check-plugin FILE` (a `.mcp.json`), or what people bring (a directory of skills or
    markdown commands, a host's directory holding them, a settings file's command hooks:
    `bring.check`): the report on stdout, escaped (it quotes the
    plugin's own words, §8); 0 when no check failed, 1 otherwise."""
    from .bridge import MCP_JSON
    from .bridge.check import check_mcp_json
    from .bridge.check import check_plugin as check_dir

    path = Path(where)
    if path.exists() and path.name != MCP_JSON and not (path / MCP_JSON).is_file():
        from .bring.check import brings_anything, check_brought, report_json

        if brings_anything(path):
            # Skills, markdown commands, or a settings file's command hooks (ADR-0045).
            lines = check_brought(Path(os.path.abspath(path)))
            sys.stdout.write(report_json(lines) if json else escape("".join(c.line() + "\n" for c in lines)))
            return 0 if all(c.ok for c in lines) else 1
    if path.is_dir() and not (path / "plugin.json").exists() and (path / MCP_JSON).is_file():
        path = path / MCP_JSON  # a project's directory: the servers its .mcp.json declares
    if not path.is_dir() and not path.is_file():
        raise UsageError(
            f"{where} is neither a directory nor a file",
            "pass the plugin's directory (the one holding its plugin.json) or a .mcp.json",
        )
    path = path.absolute()
    if path.is_file() and path.name == "plugin.json":
        raise UsageError(f"{where} is a plugin's manifest", f"pass its directory: bingo --check-plugin {path.parent}")
    if path.is_file():
        # Run as bingo would in the project that holds the file: from `cwd` when it is inside.
        project = path.parent
        if not cwd.absolute().is_relative_to(project):
            cwd = project
    # Run as bingo would run it: confined, where the sandbox is in force.
    notices = Notices()
    notices.listen(lambda notice: print(escape(f"bingo: {notice.message}"), file=sys.stderr))
    user_home = Path(environ.get("HOME") or Path.home())
    sandbox = start_sandbox(settings, user_home=user_home, home=home, project=project, environ=environ, notices=notices)
    async with sandbox:
        if path.is_file():
            report: McpJsonReport | Report = await check_mcp_json(
                path,
                call=call,
                settings=settings,
                home=home,
                cwd=cwd,
                data_dir=data_dir,
                environ=environ,
                sandbox=sandbox,
            )
        else:
            report = await check_dir(
                path,
                call=call,
                settings=settings,
                home=home,
                project=project,
                cwd=cwd,
                data_dir=data_dir,
                environ=environ,
                sandbox=sandbox,
            )
    sys.stdout.write(report.json() if json else escape(report.text()))
    return 0 if report.ok else 1


async def run_mcp(argv: list[str]) -> int:
    """`bingo mcp login NAME` and `bingo mcp logout NAME` (INTERFACE §14); the exit status."""
    if len(argv) != 2 or argv[0] not in ("login", "logout"):
        raise UsageError("bingo mcp takes login NAME or logout NAME", "write bingo mcp login NAME")
    action, name = argv
    environ = dict(os.environ)
    home = bingo_home(environ)
    user_home = Path(environ.get("HOME") or Path.home())
    cwd = Path.cwd()
    project = find_project(cwd, user_home)
    files = read_settings(home=home, project=project, overrides={})
    settings = files.merged(project_trusted=False)
    data_dir = data_dir_of(home)
    setup_logging(data_dir)
    from .bridge import admitted, discover, mcp_login, mcp_logout, trust_state

    sources = discover(home=home, project=project, environ=environ, variables=settings.mcp_variables)
    state = trust_state(project=project, cwd=cwd, sources=sources, settings=settings, data_dir=data_dir)
    if state.trusted:
        settings = files.merged(project_trusted=True)
    run_sources, listed = admitted(sources, state)
    if action == "logout":
        print(escape(mcp_logout(name, sources=run_sources, listed=listed, data_dir=data_dir)))
        return 0
    said = await mcp_login(
        name,
        sources=run_sources,
        listed=listed,
        settings=settings,
        data_dir=data_dir,
        environ=environ,
        say=lambda line: print(escape(line), flush=True),  # the URL: the server's words are in it (§8)
    )
    print(escape(said))
    return 0
