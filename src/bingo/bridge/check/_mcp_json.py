"""The checker's reading of a `.mcp.json`: each server it declares, checked as bingo runs it.

Owns the checks of the file (it reads as JSON with an `mcpServers` object) and of each
server's entry as discovery reads it (`discovery.py`): its key is a plugin name, its keys are
ones bingo reads, every `${VAR}` it reads is one the person's `mcpVariables` list and is set
(`_expand.py`, ADR-0028), its command can be run, in words fit for a `.mcp.json` (no fix
names `${PLUGIN_ROOT}`, which such a file has no use for). Each server bingo would start is
then started and checked as any MCP server (`_run.py`, `_server.py`), in the project the
file is in. It asks no trust question: the person named the file.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from pathlib import Path

import msgspec

from ...kernel.settings import Settings
from ...sandbox import Sandbox
from ...wire import Json, is_object
from .. import _problems as P
from .._expand import MCP_VARIABLES, expand_server, expansion_problem, variables_read
from ..discovery import PluginSource, entry_command, misspelled, read_mcp_json
from ..manifest import Manifest, McpServer, check_name, mcp_manifest, mcp_problem
from ..process import resolve
from ._report import Check, McpJsonReport, Report, Status
from ._run import run_plugin

__all__ = ["check_mcp_json"]

_KEYS = tuple(field.encode_name for field in msgspec.structs.fields(McpServer))
"""The keys of a server's entry that bingo reads."""


def _line(id: str, title: str, status: Status, detail: str = "", fix: str = "") -> Check:
    return Check(id=id, group="entry", status=status, title=title, detail=detail, fix=fix)


def _entry(
    name: str,
    written: Json,
    *,
    where: str,
    environ: Mapping[str, str],
    variables: frozenset[str],
    settings_file: Path,
    project: Path,
    cwd: Path,
) -> tuple[list[Check], Manifest | None]:
    """The checks of one server's entry, and the manifest bingo makes of it (None: it would
    leave the server out)."""
    checks: list[Check] = []
    named = check_name(name)
    checks.append(
        _line(
            "entry.name",
            "its key is a plugin name",
            "pass" if named is None else "fail",
            repr(name) if named is None else named,
            "" if named is None else "rename the key",
        )
    )
    if not is_object(written):
        checks.append(
            _line(
                "entry.shape",
                "it is an object bingo reads as a server",
                "fail",
                f"`{where}` is not a JSON object",
                'write {"command": ..., "args": [...]} or {"type": "http", "url": ...}',
            )
        )
        return checks, None
    strays = P.unknown_keys(list(written), _KEYS)
    if strays:
        words = (
            P.UNKNOWN_KEYS.said(whose=f"`{where}`", has="has", s="s" if len(strays) > 1 else "", keys=", ".join(strays))
            + f" (its keys are {', '.join(_KEYS)})"
        )
        # Another host's key is no fault of the file: bingo reads what it knows.
        checks.append(
            _line(
                "entry.keys",
                "every key is one bingo reads",
                "warn",
                words,
                "bingo ignores a key it does not know: if it is one of bingo's misspelled, correct it",
            )
        )
    else:
        checks.append(_line("entry.keys", "every key is one bingo reads", "pass", "none unknown"))
    try:
        server = msgspec.convert(written, McpServer)
    except msgspec.ValidationError as exc:
        checks.append(
            _line(
                "entry.shape",
                "it is an object bingo reads as a server",
                "fail",
                f"`{where}`: {exc}",
                "see INTERFACE.md section 6 for a server's keys and their types",
            )
        )
        return checks, None
    read = variables_read(server)
    title = f"every ${{VAR}} it reads is listed in your {MCP_VARIABLES} and set (or has a default)"
    problem = expansion_problem(server, environ, variables, settings=str(settings_file))
    if problem is not None:
        checks.append(_line("entry.variables", title, "fail", *problem))
        checks.append(
            _line("entry.command", "its command can be run", "skip", "not checked: bingo leaves the server out")
        )
        return checks, None
    checks.append(
        _line(
            "entry.variables",
            title,
            "pass",
            "reads " + ", ".join(f"${{{name}}}" for name in read) if read else "it reads none",
        )
    )
    expanded = expand_server(server, environ, variables, settings=str(settings_file))
    assert not isinstance(expanded, str)  # expansion_problem said None
    refused = mcp_problem(expanded, where, mcp_json=True)
    if refused is not None:
        checks.append(_line("entry.command", "its command can be run", "fail", refused + misspelled(written)))
        return checks, None
    manifest = mcp_manifest(name, expanded)
    if expanded.url is not None:
        checks.append(_line("entry.command", "its URL is one bingo speaks to (Streamable HTTP)", "pass", expanded.url))
        return checks, manifest if named is None else None
    argv, env = entry_command(manifest, project, environ)
    try:
        found = resolve(argv, env, cwd)
    except OSError as exc:
        why = "not found on PATH" if os.sep not in argv[0] else (exc.strerror or str(exc))
        checks.append(
            _line(
                "entry.command",
                "its command can be run",
                "fail",
                f"`{where}.command` {argv[0]!r} cannot be run: {why}",
                "install it, or write its absolute path",
            )
        )
        return checks, None
    checks.append(_line("entry.command", "its command can be run", "pass", found))
    return checks, manifest if named is None else None


async def check_mcp_json(
    path: Path,
    *,
    call: bool,
    settings: Settings,
    home: Path,
    cwd: Path,
    data_dir: Path,
    environ: Mapping[str, str],
    sandbox: Sandbox | None = None,
) -> McpJsonReport:
    """Check every server the `.mcp.json` at `path` declares as bingo would run it in the
    project that holds the file (from `cwd` when that is inside it): one report per server."""
    started = time.monotonic()
    project = path.parent.absolute()
    file = McpJsonReport(path=str(path))
    servers = read_mcp_json(path)
    if not isinstance(servers, dict):
        said = servers if servers is not None else "does not exist"
        file.checks.append(
            Check(
                id="file",
                group="file",
                status="fail",
                title="it is a .mcp.json bingo reads",
                detail=f"{path}: {said}",
                fix='write {"mcpServers": {"<name>": {"command": ..., "args": [...]}}}',
            )
        )
        file.seconds = time.monotonic() - started
        return file
    file.checks.append(
        Check(
            id="file",
            group="file",
            status="pass",
            title="it is a .mcp.json bingo reads",
            detail=f"{len(servers)} server(s)",
        )
    )
    variables = frozenset(settings.mcp_variables)
    settings_file = home / "settings.json"

    async def one(name: str) -> Report:
        where = f"mcpServers.{name}"
        report = Report(plugin=name, directory=str(path), called=call, mcp=True)
        checks, manifest = _entry(
            name,
            servers[name],
            where=where,
            environ=environ,
            variables=variables,
            settings_file=settings_file,
            project=project,
            cwd=cwd,
        )
        for check in checks:
            report.add(check)
        if manifest is None:
            report.add(
                Check(
                    id="start",
                    group="start",
                    status="skip",
                    title="it starts and answers",
                    detail="not checked: bingo would leave it out",
                )
            )
        else:
            report.started = True
            source = PluginSource(
                name=name,
                layer="project",
                root=project,
                manifest=manifest,
                problem=None,
                base=project,
                declared_in=path.absolute(),
            )
            live = await run_plugin(
                source,
                manifest,
                call=call,
                settings=settings,
                cwd=cwd,
                data_dir=data_dir,
                environ=environ,
                sandbox=sandbox,
            )
            for check in live.all():
                report.add(check)
        report.seconds = time.monotonic() - started
        return report

    # At once, as a run starts them: the slowest start sets the wait, not their sum.
    file.servers = list(await asyncio.gather(*(one(name) for name in sorted(servers))))
    file.seconds = time.monotonic() - started
    return file
