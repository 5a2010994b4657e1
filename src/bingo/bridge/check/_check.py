"""One run of the checker: the manifest's checks, then the live run's, as one Report.

Owns the order of the groups and what is skipped when bingo would not start the plugin (a
manifest it refuses). An MCP server (`mcp` in its manifest) is started and checked as one
(`_server.py`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from ...kernel.settings import Settings
from ...sandbox import Sandbox
from ._manifest import check_manifest
from ._report import Check, Report
from ._run import run_plugin, source_of

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
        report.add(
            Check(
                id="start",
                group="start",
                status="skip",
                title="it starts and answers",
                detail="not checked: bingo would not start it",
            )
        )
    else:
        report.plugin, report.mcp, report.started = manifest.name, manifest.mcp is not None, True
        source = source_of(directory, manifest, home=home, project=project)
        live = await run_plugin(
            source, manifest, call=call, settings=settings, cwd=cwd, data_dir=data_dir, environ=environ, sandbox=sandbox
        )
        for check in live.all():
            report.add(check)
    report.seconds = time.monotonic() - started
    return report
