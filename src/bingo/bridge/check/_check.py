"""One run of the checker: the manifest's checks, then the live run's, as one Report.

Owns the order of the groups and what is skipped when bingo would not start the plugin (a
manifest it refuses, an MCP server, which speaks MCP and not bingo's wire).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from ...kernel.settings import Settings
from ._manifest import check_manifest
from ...sandbox import Sandbox
from ._report import Check, Report
from ._run import run_plugin

__all__ = ["check_plugin"]


async def check_plugin(
    directory: Path,
    *,
    call: bool,
    settings: Settings,
    home: Path,
    project: Path,
    cwd: Path,
    data_dir: Path,
    environ: Mapping[str, str],
    sandbox: Sandbox | None = None,
) -> Report:
    """Check the plugin in `directory` as a run of bingo in `cwd` would start it (confined by
    `sandbox` when it is in force): the report of every check (with `call`, each tool called
    once as bingo calls it, and once cancelled)."""
    started = time.monotonic()
    report = Report(plugin=directory.name, directory=str(directory), called=call)
    checks, manifest = check_manifest(directory, cwd=cwd, environ=environ)
    for check in checks:
        report.add(check)
    if manifest is None:
        report.add(Check(id="start", group="start", status="skip", title="it starts and answers", detail="not checked: bingo would not start it"))
    elif manifest.mcp is not None:
        report.add(Check(id="start", group="start", status="skip", title="it speaks bingo's wire", detail="an MCP server: it speaks MCP, which bingo translates; check it with MCP's own tools (the MCP Inspector)"))
    else:
        report.plugin = manifest.name
        live = await run_plugin(
            directory, manifest, call=call, settings=settings, home=home, project=project, cwd=cwd, data_dir=data_dir, environ=environ, sandbox=sandbox
        )
        for check in live.all():
            report.add(check)
    report.seconds = time.monotonic() - started
    return report
