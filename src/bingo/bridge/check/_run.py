"""The checker's live run: the plugin started by bingo's own plugin handle, probed, stopped.

Owns starting the plugin exactly as a run of bingo starts it (the plugin handle of
`_plugin.py`: the same argv and environment, working directory, janitor, log, data
directory, `initialize` params and deadlines from the settings; the `bingo.host` service
answered by the run's own router), the start checks (it starts, nothing on stdout before its
answer, the answer within the deadline, protocol and name), the order of the probes
(`_probe.py`) and the end: stdin closed and the bounded shutdown's verdict, and what was seen
on stdout all along (`_watch.py`). No verdict here needs the plugin to behave: whatever it
does is a line.

It never calls a provider (`provider/stream` may spend money on a model) nor a compactor,
command or service (each may change something): those are declared and checked, not run.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ... import __version__
from ...endpoint import BadLine, Connection
from ...kernel.errors import PluginError
from ...kernel.log import cut
from ...kernel.notices import Notices
from ...kernel.registry import Registry
from ...kernel.settings import Settings
from ...sandbox import Sandbox
from ...wire import (
    InitializeResult,
    ToolSpec,
)
from .. import _problems as P
from .._backoff import Backoff
from .._plugin import HostFacts
from ..discovery import PluginSource
from ..manifest import Manifest
from ..process import EXIT_GRACE, TERM_GRACE
from ..service import HostService
from ._declared import check_declarations
from ._probe import Probes, unknown_method
from ._report import Check, Live
from ._server import drive_server, server_stdout
from ._watch import PREVIEW, Checked, Router, Watch, line

__all__ = ["run_plugin", "source_of"]

_log = logging.getLogger(__name__)


def source_of(directory: Path, manifest: Manifest, *, home: Path, project: Path) -> PluginSource:
    """The plugin in `directory` as discovery would find it: in the layer its directory is in
    (a directory in neither is taken as one of yours)."""
    root = directory.absolute()
    layer, base = "user", home
    try:
        if root.parent.resolve() == (project / ".bingo" / "plugins").resolve():
            layer, base = "project", project
    except OSError:
        pass
    return PluginSource(
        name=directory.name, layer=layer, root=root, manifest=manifest, problem=None, base=base.absolute()
    )


async def run_plugin(
    source: PluginSource,
    manifest: Manifest,
    *,
    call: bool,
    settings: Settings,
    cwd: Path,
    data_dir: Path,
    environ: Mapping[str, str],
    sandbox: Sandbox | None = None,
) -> Live:
    """Start plugin `source` as bingo would (an MCP server too), probe it (and with `call`,
    call its tools), stop it; every check made. Its `dataDir` is a temporary directory,
    removed afterwards: a check changes none of the person's data (its log is kept, where
    bingo keeps every plugin's)."""
    live = Live()
    mcp = manifest.mcp is not None
    watch = Watch(mcp=mcp)
    notices = Notices()
    registry = Registry(notices)
    registry.add_service(HostService())
    books: dict[str, Any] = {}
    router = Router(registry, notices, books, watch)
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="bingo-check-", ignore_cleanup_errors=True) as scratch:
        facts = HostFacts(
            version=__version__,
            cwd=cwd,
            data_dir=data_dir,
            environ=dict(environ),
            sandbox=sandbox,
            plugins_data=Path(scratch),
        )
        async with asyncio.TaskGroup() as group:
            plugin = Checked(
                source,
                manifest,
                facts=facts,
                settings=settings,
                notices=notices,
                router=router,
                group=group,
                clock=loop.time,
                backoff=Backoff(),
            )
            plugin.watch = watch
            books[plugin.name] = plugin.calls
            log_size = _size(plugin.log.path)
            try:
                if mcp:
                    await drive_server(plugin, live, watch, call=call, settings=settings, cwd=cwd)
                else:
                    await _drive(plugin, live, watch, call=call, settings=settings, cwd=cwd)
            except Exception as exc:  # boundary: whatever the plugin did, the checker reports
                _log.exception("the check of %s failed", plugin.name)
                live.behaviour.append(
                    line(
                        "behaviour",
                        "behaviour.checker",
                        "the checker ran to the end",
                        "fail",
                        f"it stopped at {type(exc).__name__}: {cut(str(exc), 200)}",
                        "see bingo's log; this is the checker's fault, not the plugin's",
                    )
                )
            running = plugin.state == "running"
            began = time.monotonic()
            plugin.stop()
        # The group is done: the process is gone, and with it any writer of the scratch.
    if mcp and not plugin.spawned:
        return live  # no process: no stdout, stdin or stderr to judge (a URL's server, or none)
    if running:
        live.behaviour.append(_eof(watch, time.monotonic() - began))
    live.behaviour.append(_stderr(watch, plugin.log.path, _size(plugin.log.path) - log_size))
    if plugin.spawned:
        live.behaviour[0:0] = server_stdout(watch, plugin.log.path) if mcp else _stdout(watch, plugin.log.path)
    return live


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


async def _drive(plugin: Checked, live: Live, watch: Watch, *, call: bool, settings: Settings, cwd: Path) -> None:
    group = "start"
    started = time.monotonic()
    outcome = await plugin.start()
    seconds = time.monotonic() - started
    deadline = settings.deadline("initialize")
    if not plugin.spawned:
        live.start.append(
            line(
                group,
                "start.spawn",
                "the process starts",
                "fail",
                plugin.why or "it could not be started",
                "check entry.command and entry.args (see the manifest checks above)",
            )
        )
        return
    live.start.append(line(group, "start.spawn", "the process starts", "pass", f"in {plugin.source.root}"))
    early = watch.early
    title = "nothing on stdout before initialize"
    if not early:
        live.start.append(line(group, "start.quiet", title, "pass", "quiet"))
    elif early[0] in ("{", "["):
        # Its answer, pretty-printed: one message per line says so.
        live.start.append(line(group, "start.quiet", title, "pass", "its first lines are its answer, pretty-printed"))
    else:
        lines = f"{len(early)} line{'s' if len(early) != 1 else ''}"
        live.start.append(
            line(
                group,
                "start.quiet",
                title,
                "fail",
                P.STDOUT_BEFORE_INITIALIZE.said(lines=lines, first=early[0]),
                P.STDOUT_BEFORE_INITIALIZE.fix,
            )
        )
    peek = _peek(watch.first_answer)
    answered = isinstance(outcome, Connection) or plugin.state == "refused"
    if answered:
        live.start.append(
            line(
                group,
                "start.handshake",
                f"it answers initialize within its deadline ({deadline:g} s)",
                "pass",
                f"in {seconds:.2f} s",
            )
        )
    else:
        why = plugin.why or (outcome.line() if isinstance(outcome, PluginError) else "it did not answer")
        live.start.append(
            line(
                group,
                "start.handshake",
                f"it answers initialize within its deadline ({deadline:g} s)",
                "fail",
                why,
                "answer initialize at once, with one line of JSON on stdout",
            )
        )
    if peek is None:
        for id, title in (
            ("start.protocol", "it speaks protocol 5"),
            ("start.name", "its handshake names it as the manifest does"),
        ):
            live.start.append(line(group, id, title, "skip", "no handshake answer to read"))
        live.skip_rest("it did not complete its handshake")
        return
    protocol, name = peek
    from ...wire import PROTOCOL_VERSION

    if protocol == PROTOCOL_VERSION:
        live.start.append(line(group, "start.protocol", "it speaks protocol 5", "pass", "protocol 5"))
    else:
        live.start.append(
            line(
                group,
                "start.protocol",
                "it speaks protocol 5",
                "fail",
                P.PROTOCOL.said(theirs=protocol, ours=PROTOCOL_VERSION),
                P.PROTOCOL.fix.format(ours=PROTOCOL_VERSION),
            )
        )
    if name == plugin.manifest.name:
        live.start.append(line(group, "start.name", "its handshake names it as the manifest does", "pass", repr(name)))
    else:
        live.start.append(
            line(
                group,
                "start.name",
                "its handshake names it as the manifest does",
                "fail",
                P.HANDSHAKE_NAME.said(theirs=name, ours=plugin.manifest.name),
                P.HANDSHAKE_NAME.fix,
            )
        )
    result = _result_of(watch.first_answer)
    infos: list[InitializeResult] = []
    if result is not None:
        live.declarations.extend(check_declarations(result, plugin.name, on_info=infos.append))
    if not isinstance(outcome, Connection) or not infos:
        live.skip_rest("bingo refuses its handshake")
        return
    conn, info = outcome, infos[0]
    live.behaviour.append(await unknown_method(conn))
    probes = Probes(conn, plugin, settings, cwd)
    await probes.complete(info, live.behaviour)
    await probes.decide(info, live.behaviour)
    await probes.contribute(info, live.behaviour)
    if call:
        for spec in _unique(info.tools):
            live.calls.extend(await probes.tool(spec, watch))
    live.behaviour.append(probes.extra_params(call))
    live.behaviour.append(
        line("behaviour", "behaviour.alive", "it stays up through the checks", "pass", "running")
        if plugin.state == "running"
        else line(
            "behaviour",
            "behaviour.alive",
            "it stays up through the checks",
            "fail",
            plugin.why or plugin.state,
            "a plugin's fault costs one answer, not the process: catch it, log it to stderr and answer an error",
        )
    )


def _unique(tools: list[ToolSpec]) -> list[ToolSpec]:
    seen: set[str] = set()
    out: list[ToolSpec] = []
    for spec in tools:
        if spec.name not in seen:
            seen.add(spec.name)
            out.append(spec)
    return out


class _Peeked(msgspec.Struct):
    result: msgspec.Raw = msgspec.Raw(b"null")


class _Fields(msgspec.Struct):
    protocol: Any = None
    name: Any = None


def _result_of(line: bytes | None) -> bytes | None:
    if line is None:
        return None
    try:
        raw = bytes(msgspec.json.decode(line, type=_Peeked).result)
    except msgspec.DecodeError:
        return None
    return None if raw == b"null" else raw


def _peek(line: bytes | None) -> tuple[Any, Any] | None:
    """The protocol and name of the first answer on stdout (the handshake's), as written."""
    raw = _result_of(line)
    if raw is None:
        return None
    try:
        fields = msgspec.json.decode(raw, type=_Fields)
    except msgspec.DecodeError:
        return None
    return fields.protocol, fields.name


def _pretty(strays: list[tuple[int, BadLine]]) -> tuple[int, list[tuple[int, BadLine]]]:
    """The longest run of consecutive stray lines that reads as one JSON value (a message
    pretty-printed), and the strays that are not part of such a run."""
    runs: list[list[tuple[int, BadLine]]] = []
    for index, bad in strays:
        if runs and runs[-1][-1][0] == index - 1:
            runs[-1].append((index, bad))
        else:
            runs.append([(index, bad)])
    longest = 0
    rest: list[tuple[int, BadLine]] = []
    for run in runs:
        previews = [bad.preview.strip() for _, bad in run]
        pretty = len(run) > 1 and previews[0] in ("{", "[") and previews[-1] in ("}", "]")
        if not pretty and len(run) > 1:
            try:
                msgspec.json.decode("\n".join(previews).encode())
                pretty = True
            except msgspec.DecodeError:
                pretty = False
        if pretty:
            longest = max(longest, len(run))
        else:
            rest.extend(run)
    return longest, rest


def _stdout(watch: Watch, log: Path) -> list[Check]:
    """The checks of what it wrote to stdout, all along."""
    group = "behaviour"
    checks: list[Check] = []
    pretty, rest = _pretty(watch.strays)
    title = "one message per line"
    if pretty:
        checks.append(
            line(group, "behaviour.lines", title, "fail", P.PRETTY_JSON.said(lines=pretty), P.PRETTY_JSON.fix)
        )
    else:
        checks.append(line(group, "behaviour.lines", title, "pass", f"{watch.lines} line(s)"))
    title = "nothing but JSON-RPC on stdout"
    if rest:
        reason = rest[0][1].reason
        checks.append(
            line(
                group,
                "behaviour.stdout",
                title,
                "fail",
                f"{P.STRAY_STDOUT.said(log=log)}: {len(rest)} such line(s), the first {cut(reason, 120)}: {rest[0][1].preview[:PREVIEW]!r}",
                P.STRAY_STDOUT.fix,
            )
        )
    elif watch.unknown:
        ((method, count),) = watch.unknown.most_common(1)
        total = sum(watch.unknown.values())
        what = f"method {method!r}" + (
            f" and {len(watch.unknown) - 1} other unknown method(s)" if len(watch.unknown) > 1 else ""
        )
        checks.append(
            line(
                group,
                "behaviour.stdout",
                title,
                "fail",
                P.UNKNOWN_NOTIFICATION.said(
                    what=what, count=total if len(watch.unknown) > 1 else count, s="s" if total != 1 else ""
                ),
                P.UNKNOWN_NOTIFICATION.fix,
            )
        )
    else:
        checks.append(line(group, "behaviour.stdout", title, "pass", "only messages"))
    title = "answers carry the host's integer id"
    if watch.unexpected:
        problem = P.UNEXPECTED_STRING_ID if watch.string_id else P.UNEXPECTED_ID
        said = ", ".join(watch.unexpected[:3]) + (
            f" and {len(watch.unexpected) - 3} more" if len(watch.unexpected) > 3 else ""
        )
        checks.append(
            line(group, "behaviour.ids", title, "fail", problem.said(said=said, log=log), problem.fix.format(log=log))
        )
    else:
        checks.append(line(group, "behaviour.ids", title, "pass", "every answer matched its request"))
    return checks


def _eof(watch: Watch, seconds: float) -> Check:
    title = f"it exits within {EXIT_GRACE:g} s of its stdin closing"
    stop = watch.faults.get("ignores-stop")
    if stop is None:
        return line("behaviour", "behaviour.eof", title, "pass", f"gone in {seconds:.2f} s")
    killed = seconds > EXIT_GRACE + TERM_GRACE
    problem = P.IGNORES_STOP_KILLED if killed else P.IGNORES_STOP_TERM
    said = problem.said(grace=EXIT_GRACE, closing=f"within {EXIT_GRACE:g} s of its stdin closing, nor ")
    return line("behaviour", "behaviour.eof", title, "fail", said, problem.fix)


def _stderr(watch: Watch, log: Path, grew: int) -> Check:
    title = "stderr goes to its log"
    flood = watch.faults.get("stderr-flood")
    if flood is not None:
        from ..process import LOG_MAX_BYTES

        return line(
            "behaviour",
            "behaviour.stderr",
            title,
            "fail",
            P.STDERR_FLOOD.said(mib=LOG_MAX_BYTES // 1024 // 1024),
            P.STDERR_FLOOD.fix,
        )
    return line("behaviour", "behaviour.stderr", title, "pass", f"{log} ({max(grew, 0)} bytes this run)")
