"""The checker's live run of an MCP server: its start, handshake, lists and calls as bingo
makes them.

Owns what the checker asks of a running MCP server (INTERFACE.md §6) and the lines it makes
of the answers: that the process starts, that MCP's handshake completes within its deadline
(`initialize`, `notifications/initialized`, then `tools/list` and `prompts/list`, all on
bingo's own MCP connection, `bridge/_mcp.py`), what it lists as bingo reads it
(`_declared.check_served`), what it wrote to stdout besides MCP, and, with `--call`, each
tool that says it only reads (`annotations.readOnlyHint`) called once through bingo's own
tool proxy. A server's other tools act on the person's files and services: the checker never
calls them. The plugin handle, its process, log, sandbox and deadlines are `_run.py`'s, the
same as any plugin's.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec

from ...endpoint import BadAnswer
from ...kernel.errors import BadParams, ConnectionClosed, DeadlinePassed, MethodNotFound, PluginError
from ...kernel.interfaces import ToolCall
from ...kernel.log import cut
from ...kernel.settings import Settings
from ...sandbox import launcher
from ...wire import InitializeResult, Json, TextPart, ToolSpec, Wire
from .._mcp import McpClient
from .._mcp_session import RESOURCES_TOOL
from .._mcp_wire import McpCursor
from ..discovery import entry_command
from ..tool import BridgedTool
from ._declared import check_served
from ._report import Check, Live
from ._schema import sample
from ._watch import PREVIEW, Checked, Watch, line

__all__ = ["drive_server", "server_stdout"]

_PAGES_MAX = 50
"""Pages of `tools/list` read for the annotations (as the adapter reads them for the tools)."""
_NAMED = 8
"""Tools named in the line of those not called."""


class _Annotated(Wire, frozen=True):
    name: str
    annotations: dict[str, Json] | None = None


class _Page(Wire, frozen=True):
    tools: list[_Annotated] = []
    next_cursor: str | None = None


async def drive_server(plugin: Checked, live: Live, watch: Watch, *, call: bool, settings: Settings, cwd: Path) -> None:
    """Start MCP server `plugin` as bingo would, read its handshake and lists, and with
    `call` call each tool it says only reads; every line into `live`."""
    mcp = plugin.manifest.mcp
    assert mcp is not None  # the caller's choice: an MCP server's manifest
    group = "start"
    started = time.monotonic()
    outcome = await plugin.start()
    seconds = time.monotonic() - started
    log = plugin.log.path
    if mcp.url is None:
        if not plugin.spawned:
            live.start.append(
                line(
                    group,
                    "start.spawn",
                    "the process starts",
                    "fail",
                    plugin.why or "it could not be started",
                    "install its command, or name it by its full path",
                )
            )
            live.skip_rest("it did not start")
            return
        argv, _ = entry_command(plugin.manifest, plugin.source.root, {})
        live.start.append(line(group, "start.spawn", "the process starts", "pass", cut(" ".join(argv), 160)))
    title = "it completes MCP's handshake and lists within its deadline"
    if not isinstance(outcome, McpClient):
        why = plugin.why or (outcome.line() if isinstance(outcome, PluginError) else "it did not answer")
        if log.as_posix() not in why and mcp.url is None:
            why = f"{why}; log: {log}"
        runner = launcher(entry_command(plugin.manifest, plugin.source.root, {})[0]) if mcp.url is None else None
        if mcp.url is not None:
            fix = "check that the server is running at that URL and that its headers are right"
        elif runner is not None:
            # Its first start may install it first: the run's deadline for that is its own (ADR-0036).
            fix = f"run its command in a terminal to see why; if {runner.said} is still installing it, raise deadlines.packageInstall in your settings"
        else:
            fix = "run its command in a terminal to see why; if it only needs longer to start, raise deadlines.initialize in your settings"
        live.start.append(line(group, "start.handshake", title, "fail", why, fix))
        live.skip_rest("it did not complete its handshake")
        return
    conn = outcome
    server = conn.server
    said = (
        " ".join(part for part in (cut(server.name, PREVIEW), cut(server.version, 40)) if part)
        or "a server that gives no name"
    )
    live.start.append(line(group, "start.handshake", title, "pass", f"MCP {conn.revision}, {said}, in {seconds:.2f} s"))
    info = plugin.info
    if info is None:
        live.skip_rest("no declaration to read")
        return
    live.declarations.extend(check_served(info, plugin.name))
    if call:
        live.calls.extend(await _calls(conn, plugin, info, cwd))
    live.behaviour.append(
        line("behaviour", "behaviour.alive", "it stays up through the checks", "pass", "running")
        if plugin.state == "running"
        else line(
            "behaviour",
            "behaviour.alive",
            "it stays up through the checks",
            "fail",
            plugin.why or plugin.state,
            "an MCP server answers a failing call with an error (isError) and goes on; its log says why it stopped",
        )
    )


async def _read_only(conn: McpClient) -> tuple[set[str], set[str]]:
    """The tools the server lists, and those whose annotations say they only read."""
    listed: set[str] = set()
    reading: set[str] = set()
    if "tools" not in conn.capabilities:
        return listed, reading
    cursor: str | None = None
    for _ in range(_PAGES_MAX):
        try:
            page = await conn.request(
                "tools/list", McpCursor(cursor=cursor), _Page, deadline=conn.deadline("initialize")
            )
        except (MethodNotFound, BadParams, DeadlinePassed, BadAnswer):
            break
        for tool in page.tools:
            listed.add(tool.name)
            if tool.annotations is not None and tool.annotations.get("readOnlyHint") is True:
                reading.add(tool.name)
        cursor = page.next_cursor
        if not cursor:
            break
    return listed, reading


async def _calls(conn: McpClient, plugin: Checked, info: InitializeResult, cwd: Path) -> list[Check]:
    """Each tool that says it only reads, called once as bingo calls it; one line for the rest."""
    listed, reading = await _read_only(conn)
    checks: list[Check] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for number, spec in enumerate(info.tools, 1):
        if spec.name in seen:
            continue
        seen.add(spec.name)
        # bingo's own `resources` tool lists (or reads) what the server offers: it changes nothing.
        ours = spec.name == RESOURCES_TOOL and spec.name not in listed
        if spec.name in reading or ours:
            checks.append(await _call(plugin, spec, f"check-{number}", cwd))
        else:
            skipped.append(spec.name)
    if skipped:
        named = ", ".join(skipped[:_NAMED]) + (f" and {len(skipped) - _NAMED} more" if len(skipped) > _NAMED else "")
        checks.append(
            line(
                "call",
                "call.not-read-only",
                "tools that may change something are not called",
                "skip",
                f"{named}: {'its annotations do' if len(skipped) == 1 else 'their annotations do'} not say readOnlyHint; "
                "an MCP server's tools act on your files and services, so --call calls only those that say they only read",
            )
        )
    if not checks:
        checks.append(line("call", "call.none", "its tools are called", "skip", "it lists no tools"))
    return checks


async def _call(plugin: Checked, spec: ToolSpec, call_id: str, cwd: Path) -> Check:
    value = sample(spec.input_schema)
    shown = cut(msgspec.json.encode(value).decode(), 60)
    title = f"tool {spec.name} answers {shown}"
    check_id = f"call.{spec.name}.answer"
    call = ToolCall(call_id=call_id, input=value, cwd=str(cwd), session="bingo-check", turn=0)
    started = time.monotonic()
    try:
        output = await BridgedTool(plugin, spec).call(call)
    except (DeadlinePassed, ConnectionClosed, BadAnswer) as exc:
        return line(
            "call",
            check_id,
            title,
            "fail",
            exc.line(),
            f"an MCP server answers every tools/call it is sent; its log: {plugin.log.path}",
        )
    except PluginError as exc:
        return line(
            "call",
            check_id,
            title,
            "warn",
            f"it answered an error, not a result: {exc.line()}",
            "a tool's failure is a result with isError: true, which the model reads and can act on",
        )
    seconds = time.monotonic() - started
    text = " ".join(part.text for part in output.parts if isinstance(part, TextPart))
    kind = "an error result (isError)" if output.is_error else f"{len(output.parts)} part(s)"
    about = f": {cut(' '.join(text.split()), PREVIEW)!r}" if text.strip() else ""
    return line("call", check_id, title, "pass", f"{kind} in {seconds:.2f} s{about}")


def server_stdout(watch: Watch, log: Path) -> list[Check]:
    """The checks of what an MCP server wrote to stdout, all along."""
    from .. import _problems as P

    group = "behaviour"
    checks: list[Check] = []
    title = "nothing but MCP messages on stdout"
    if watch.strays:
        bad = watch.strays[0][1]
        count = len(watch.strays)
        checks.append(
            line(
                group,
                "behaviour.stdout",
                title,
                "fail",
                f"it wrote {count} line{'s' if count != 1 else ''} to stdout that {'are' if count != 1 else 'is'} not JSON-RPC "
                f"(the first {cut(bad.reason, 120)}: {bad.preview[:PREVIEW]!r}); bingo writes such lines to its log ({log}) and goes on",
                "a server writes only MCP messages to stdout and its own words to stderr: if it is yours, move them there; if not, tell its author",
            )
        )
    else:
        checks.append(line(group, "behaviour.stdout", title, "pass", f"{watch.lines} message(s)"))
    title = "its answers carry the ids bingo sent"
    if watch.unexpected:
        said = ", ".join(watch.unexpected[:3]) + (
            f" and {len(watch.unexpected) - 3} more" if len(watch.unexpected) > 3 else ""
        )
        checks.append(
            line(
                group,
                "behaviour.ids",
                title,
                "fail",
                P.UNEXPECTED_ID.said(said=said, log=log),
                "an answer carries the id of the request it answers, as it was sent",
            )
        )
    else:
        checks.append(line(group, "behaviour.ids", title, "pass", "every answer matched its request"))
    return checks
