"""The checker's live run: the plugin started by bingo's own plugin handle, then probed.

Owns starting the plugin exactly as a run of bingo starts it (the plugin handle of
`_plugin.py`: the same argv and environment, working directory, janitor, log, data
directory, `initialize` params and deadlines from the settings; the `bingo.host` service
answered by the run's own router), what it watches while it runs (every stdout line on its
way to the connection, through `_Tap`; the handle's faults, stray lines and unexpected ids,
as the handle raises them), the probes that have no side effects (an unknown method,
`command/complete`, `hook/decide`, `context/contribute`, each also with a field the plugin
cannot know), the tool calls of `--call` (through the tool proxy of `tool.py`, so an answer
is read as bingo reads it, and once more cancelled at once), and the end: stdin closed, and
the bounded shutdown's verdict. No verdict here needs the plugin to behave: whatever it does
is a line.

It never calls a provider (`provider/stream` may spend money on a model) nor a compactor,
command or service (each may change something): those are declared and checked, not run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ... import __version__
from ...kernel.errors import BadParams, ConnectionClosed, DeadlinePassed, MethodNotFound, PluginError, Refused
from ...kernel.interfaces import ToolCall
from ...kernel.log import cut
from ...kernel.notices import NOTICE_BURST, NOTICES_PER_SECOND, Notices
from ...kernel.registry import Registry
from ...kernel.settings import Settings
from ...wire import (
    CommandCompleteParams,
    CommandCompleteResult,
    ContextQuery,
    ContributeParams,
    ContributeResult,
    HookDecideParams,
    HOST_SERVICE_KEY,
    HookOutcome,
    InitializeResult,
    Json,
    ServiceCallParams,
    TextPart,
    ToolCallParams,
    ToolCancelParams,
    ToolProgressParams,
    ToolSpec,
    Wire,
    is_object,
    too_deep,
)
from ...wire.rpc import Envelope, RequestId
from .. import _problems as P
from .._backoff import Backoff
from .._framing import MAX_LINE, BadLine, LineWriter
from .._link import PROGRESS_PER_SECOND
from .._message import envelope_decoder, is_envelope
from .._plugin import HostFacts, Plugin
from ..connection import BadAnswer, Connection
from ..discovery import PluginSource
from ..manifest import Manifest
from ..process import EXIT_GRACE, TERM_GRACE
from ..service import HostService, ServiceRouter
from ..tool import BridgedTool
from ._declared import check_declarations
from ._report import Check, Status
from ._schema import sample

__all__ = ["Live", "run_plugin"]

_log = logging.getLogger(__name__)

PROBE_WAIT = 5.0
"""Seconds a probe of a method the wire does not have waits (it has no deadline of its own)."""
CANCEL_WAIT = 1.0
"""Seconds within which an answer after `tool/cancel` counts as the cancel honoured."""
CANCEL_LIMIT = 10.0
"""Seconds the checker waits for a cancelled call's answer at most (bingo would wait the
call's whole deadline)."""
_KEPT = 200
"""Stray lines, unknown methods and progress faults kept: enough to say what they were."""
_PREVIEW = 80
"""Characters of a stdout line quoted in a verdict."""
_EXTRA = "bingoCheckExtra"
"""The field no plugin knows, sent to see that unknown fields are ignored (INTERFACE.md §5)."""
_PAYLOADS: dict[tuple[str, str], Json] = {
    ("prompt", "submit"): {"text": "bingo --check-plugin"},
    ("tool", "before"): {"tool": "bingo-check", "input": {}, "callId": "check-hook"},
    ("command", "before"): {"name": "bingo-check", "args": ""},
}
"""A harmless payload for each decision point."""
_PLUGIN_SENDS = frozenset({"tool/progress", "provider/delta", "service/call"})
"""The methods a plugin may send (the rest of the wire is the host's to send)."""


class _Empty(Wire, frozen=True):
    """`{}`."""


class _CompleteExtra(CommandCompleteParams, frozen=True):
    bingo_check_extra: str


class _DecideExtra(HookDecideParams, frozen=True):
    bingo_check_extra: str


class _ContributeExtra(ContributeParams, frozen=True):
    bingo_check_extra: str


class _ToolCallExtra(ToolCallParams, frozen=True):
    bingo_check_extra: str


@dataclass(slots=True)
class _Watch:
    """What the checker saw of the plugin while it ran."""

    lines: int = 0
    answered: bool = False
    first_answer: bytes | None = None
    early: list[str] = field(default_factory=list[str])
    strays: list[tuple[int, BadLine]] = field(default_factory=list[tuple[int, BadLine]])
    unknown: Counter[str] = field(default_factory=Counter[str])
    progress_ok: int = 0
    progress_bad: list[str] = field(default_factory=list[str])
    in_flight: set[str] = field(default_factory=set[str])
    unexpected: list[str] = field(default_factory=list[str])
    string_id: bool = False
    faults: dict[str, str] = field(default_factory=dict[str, str])
    refused_asks: list[str] = field(default_factory=list[str])
    host_notices: int = 0

    def seen(self, line: bytes) -> None:
        """One stdout line on its way to the connection (bounded work: msgspec's decode)."""
        self.lines += 1
        if too_deep(line):
            return  # the connection reads its top level, or calls it a stray line
        try:
            env = envelope_decoder.decode(line)
        except msgspec.DecodeError:
            if not self.answered and len(self.early) < _KEPT:
                self.early.append(cut(line.decode("utf-8", "replace").strip(), _PREVIEW))
            return
        if not is_envelope(env):
            if not self.answered and len(self.early) < _KEPT:
                self.early.append(cut(line.decode("utf-8", "replace").strip(), _PREVIEW))
            return
        if isinstance(env.method, msgspec.UnsetType):
            if not self.answered:
                self.answered, self.first_answer = True, line
            return
        self._message(env)

    def _message(self, env: Envelope) -> None:
        method = env.method
        assert isinstance(method, str)
        if method not in _PLUGIN_SENDS:
            if len(self.unknown) < _KEPT or method in self.unknown:
                self.unknown[cut(method, _PREVIEW)] += 1
            return
        if method != "tool/progress":
            return
        params = env.params if not isinstance(env.params, msgspec.UnsetType) else b"null"
        try:
            progress = msgspec.json.decode(params, type=ToolProgressParams)
        except msgspec.DecodeError as exc:
            self._bad(f"with params of the wrong shape ({exc})")
            return
        if progress.call_id not in self.in_flight:
            self._bad(f"for callId {cut(progress.call_id, _PREVIEW)!r}, which is no call in flight")
        elif "\n" in progress.tail.strip("\n"):
            self._bad("whose tail is more than one line (the live line shows one)")
        else:
            self.progress_ok += 1

    def _bad(self, why: str) -> None:
        if len(self.progress_bad) < _KEPT:
            self.progress_bad.append(why)


class _Tap(asyncio.StreamReader):
    """The plugin's stdout as the connection reads it, each line shown to `seen` on the way:
    the same bytes, in the same pieces (nothing is buffered here)."""

    def __init__(self, inner: asyncio.StreamReader, seen: Callable[[bytes], None]) -> None:
        super().__init__(limit=MAX_LINE)
        self._inner = inner
        self._seen = seen

    # Any: the base's separator type is private to typeshed (`_ReaduntilBuffer`).
    async def readuntil(self, separator: Any = b"\n") -> bytes:
        try:
            line = await self._inner.readuntil(separator)
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                self._seen(exc.partial)
            raise
        self._seen(line)
        return line

    async def readexactly(self, n: int) -> bytes:
        return await self._inner.readexactly(n)

    async def read(self, n: int = -1) -> bytes:
        return await self._inner.read(n)

    def at_eof(self) -> bool:
        return self._inner.at_eof()


class _Checked(Plugin):
    """bingo's plugin handle, telling the checker what it would tell the person."""

    watch: _Watch

    def _connection(
        self, reader: asyncio.StreamReader, writer: LineWriter, *, on_eof: Callable[[], Awaitable[ConnectionClosed]]
    ) -> Connection:
        return super()._connection(_Tap(reader, self.watch.seen), writer, on_eof=on_eof)

    def _stray(self, bad: BadLine) -> None:
        if len(self.watch.strays) < _KEPT:
            self.watch.strays.append((self.watch.lines, bad))
        super()._stray(bad)

    def _unexpected(self, request_id: RequestId) -> None:
        if len(self.watch.unexpected) < _KEPT:
            self.watch.unexpected.append(cut(repr(request_id), _PREVIEW))
        self.watch.string_id = self.watch.string_id or isinstance(request_id, str)
        super()._unexpected(request_id)

    def fault(self, key: str, message: str) -> None:
        self.watch.faults.setdefault(key, message)
        super().fault(key, message)

    @property
    def spawned(self) -> bool:
        """Whether a process was started at all."""
        return self._proc is not None


class _Router(ServiceRouter):
    """The run's `bingo.host` router, counting what the plugin asks of it."""

    def __init__(self, registry: Registry, notices: Notices, books: Mapping[str, Any], watch: _Watch) -> None:
        super().__init__(registry, notices, books)
        self._watch = watch

    async def route(self, plugin: str, params: ServiceCallParams) -> Json:
        if params.key == HOST_SERVICE_KEY and params.method == "notice":
            self._watch.host_notices += 1
        try:
            return await super().route(plugin, params)
        except Refused as exc:
            if len(self._watch.refused_asks) < _KEPT:
                self._watch.refused_asks.append(exc.message)
            raise


@dataclass(slots=True)
class Live:
    """The checks of a run, by group, as they are made."""

    start: list[Check] = field(default_factory=list[Check])
    declarations: list[Check] = field(default_factory=list[Check])
    behaviour: list[Check] = field(default_factory=list[Check])
    calls: list[Check] = field(default_factory=list[Check])

    def all(self) -> list[Check]:
        return [*self.start, *self.declarations, *self.behaviour, *self.calls]


def _line(group: str, id: str, title: str, status: Status, detail: str = "", fix: str = "") -> Check:
    return Check(id=id, group=group, status=status, title=title, detail=detail, fix=fix)


def _source(directory: Path, manifest: Manifest, *, home: Path, project: Path) -> PluginSource:
    """The plugin as discovery would find it: in the layer its directory is in (a directory
    in neither is taken as one of yours)."""
    root = directory.absolute()
    layer, base = "user", home
    try:
        if root.parent.resolve() == (project / ".bingo" / "plugins").resolve():
            layer, base = "project", project
    except OSError:
        pass
    return PluginSource(name=directory.name, layer=layer, root=root, manifest=manifest, problem=None, base=base.absolute())


async def run_plugin(
    directory: Path,
    manifest: Manifest,
    *,
    call: bool,
    settings: Settings,
    home: Path,
    project: Path,
    cwd: Path,
    data_dir: Path,
    environ: Mapping[str, str],
) -> Live:
    """Start the plugin in `directory` as bingo would, probe it (and with `call`, call each
    tool), stop it; every check made."""
    live = Live()
    watch = _Watch()
    notices = Notices()
    registry = Registry(notices)
    registry.add_service(HostService())
    books: dict[str, Any] = {}
    router = _Router(registry, notices, books, watch)
    facts = HostFacts(version=__version__, cwd=cwd, data_dir=data_dir, environ=dict(environ))
    loop = asyncio.get_running_loop()
    async with asyncio.TaskGroup() as group:
        plugin = _Checked(
            _source(directory, manifest, home=home, project=project),
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
            await _drive(plugin, live, watch, call=call, settings=settings, cwd=cwd)
        except Exception as exc:  # boundary: whatever the plugin did, the checker reports
            _log.exception("the check of %s failed", plugin.name)
            live.behaviour.append(_line("behaviour", "behaviour.checker", "the checker ran to the end", "fail", f"it stopped at {type(exc).__name__}: {cut(str(exc), 200)}", "see bingo's log; this is the checker's fault, not the plugin's"))
        running = plugin.state == "running"
        began = time.monotonic()
        plugin.stop()
    if running:
        live.behaviour.append(_eof(watch, time.monotonic() - began))
    live.behaviour.append(_stderr(watch, plugin.log.path, _size(plugin.log.path) - log_size))
    live.behaviour[0:0] = _stdout(watch, plugin.log.path) if plugin.spawned else []
    return live


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


async def _drive(plugin: _Checked, live: Live, watch: _Watch, *, call: bool, settings: Settings, cwd: Path) -> None:
    group = "start"
    started = time.monotonic()
    outcome = await plugin.start()
    seconds = time.monotonic() - started
    deadline = settings.deadline("initialize")
    if not plugin.spawned:
        live.start.append(_line(group, "start.spawn", "the process starts", "fail", plugin.why or "it could not be started", "check entry.command and entry.args (see the manifest checks above)"))
        return
    live.start.append(_line(group, "start.spawn", "the process starts", "pass", f"in {plugin.source.root}"))
    early = watch.early
    title = "nothing on stdout before initialize"
    if not early:
        live.start.append(_line(group, "start.quiet", title, "pass", "quiet"))
    elif early[0] in ("{", "["):
        # Its answer, pretty-printed: one message per line says so.
        live.start.append(_line(group, "start.quiet", title, "pass", "its first lines are its answer, pretty-printed"))
    else:
        lines = f"{len(early)} line{'s' if len(early) != 1 else ''}"
        live.start.append(_line(group, "start.quiet", title, "fail", P.STDOUT_BEFORE_INITIALIZE.said(lines=lines, first=early[0]), P.STDOUT_BEFORE_INITIALIZE.fix))
    peek = _peek(watch.first_answer)
    answered = isinstance(outcome, Connection) or plugin.state == "refused"
    if answered:
        live.start.append(_line(group, "start.handshake", f"it answers initialize within its deadline ({deadline:g} s)", "pass", f"in {seconds:.2f} s"))
    else:
        why = plugin.why or (outcome.line() if isinstance(outcome, PluginError) else "it did not answer")
        live.start.append(_line(group, "start.handshake", f"it answers initialize within its deadline ({deadline:g} s)", "fail", why, "answer initialize at once, with one line of JSON on stdout"))
    if peek is None:
        for id, title in (("start.protocol", "it speaks protocol 5"), ("start.name", "its handshake names it as the manifest does")):
            live.start.append(_line(group, id, title, "skip", "no handshake answer to read"))
        _skip_rest(live, "it did not complete its handshake")
        return
    protocol, name = peek
    from ...wire import PROTOCOL_VERSION

    if protocol == PROTOCOL_VERSION:
        live.start.append(_line(group, "start.protocol", "it speaks protocol 5", "pass", "protocol 5"))
    else:
        live.start.append(_line(group, "start.protocol", "it speaks protocol 5", "fail", P.PROTOCOL.said(theirs=protocol, ours=PROTOCOL_VERSION), P.PROTOCOL.fix.format(ours=PROTOCOL_VERSION)))
    if name == plugin.manifest.name:
        live.start.append(_line(group, "start.name", "its handshake names it as the manifest does", "pass", repr(name)))
    else:
        live.start.append(_line(group, "start.name", "its handshake names it as the manifest does", "fail", P.HANDSHAKE_NAME.said(theirs=name, ours=plugin.manifest.name), P.HANDSHAKE_NAME.fix))
    result = _result_of(watch.first_answer)
    infos: list[InitializeResult] = []
    if result is not None:
        live.declarations.extend(check_declarations(result, plugin.name, on_info=infos.append))
    if not isinstance(outcome, Connection) or not infos:
        _skip_rest(live, "bingo refuses its handshake")
        return
    conn, info = outcome, infos[0]
    live.behaviour.append(await _unknown_method(conn))
    probes = _Probes(conn, plugin, settings, cwd)
    await probes.complete(info, live)
    await probes.decide(info, live)
    await probes.contribute(info, live)
    if call:
        for spec in _unique(info.tools):
            live.calls.extend(await probes.tool(spec, watch))
    live.behaviour.append(probes.extra_params(call))
    live.behaviour.append(
        _line("behaviour", "behaviour.alive", "it stays up through the checks", "pass", "running")
        if plugin.state == "running"
        else _line("behaviour", "behaviour.alive", "it stays up through the checks", "fail", plugin.why or plugin.state, "a plugin's fault costs one answer, not the process: catch it, log it to stderr and answer an error")
    )


def _skip_rest(live: Live, why: str) -> None:
    live.behaviour.append(_line("behaviour", "behaviour", "its behaviour on the wire", "skip", f"not checked: {why}"))


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


async def _unknown_method(conn: Connection) -> Check:
    title = "it answers a method it does not have with -32601"
    method = "bingo/checkNoSuchMethod"
    try:
        await conn.call(method, _Empty(), msgspec.Raw, deadline=PROBE_WAIT)
    except MethodNotFound:
        return _line("behaviour", "behaviour.unknown-method", title, "pass", "-32601")
    except DeadlinePassed:
        got = f"no answer within {PROBE_WAIT:g} s"
    except PluginError as exc:
        got = f"error {exc.code}" if exc.code else exc.line()
    else:
        got = "a result"
    return _line("behaviour", "behaviour.unknown-method", title, "fail", P.UNKNOWN_METHOD.said(method=method, got=got), P.UNKNOWN_METHOD.fix)


class _Probes:
    """The calls without side effects, and the tool calls of `--call`."""

    def __init__(self, conn: Connection, plugin: _Checked, settings: Settings, cwd: Path) -> None:
        self._conn = conn
        self._plugin = plugin
        self._settings = settings
        self._cwd = str(cwd)
        self._tried: list[str] = []
        """The methods sent a field they cannot know."""
        self._refused: list[str] = []
        """Those that answered it Invalid params, where the same call without it was not."""
        self._calls = 0

    async def _extra(self, method: str, plain: Wire, extra: Wire, result: type[Any]) -> Any:
        """Call `method` with a field it cannot know (`extra`); on Invalid params, once more
        without (`plain`), to tell the field from the call. The answer, or what it raised."""
        self._tried.append(method)
        try:
            return await self._conn.call(method, extra, result)
        except BadParams as exc:
            try:
                answer = await self._conn.call(method, plain, result)
            except BadParams:
                return exc
            except PluginError as again:
                return again
            self._refused.append(method)
            return answer
        except PluginError as exc:
            return exc

    async def complete(self, info: InitializeResult, live: Live) -> None:
        for command in info.commands:
            if command.args.kind != "free":
                continue
            title = f"/{command.name}: command/complete is answered within {self._settings.deadline('command/complete'):g} s"
            plain = CommandCompleteParams(name=command.name, partial="", cwd=self._cwd)
            extra = _CompleteExtra(name=command.name, partial="", cwd=self._cwd, bingo_check_extra="x")
            answer = await self._extra("command/complete", plain, extra, CommandCompleteResult)
            check_id = f"behaviour.complete.{command.name}"
            if isinstance(answer, CommandCompleteResult):
                live.behaviour.append(_line("behaviour", check_id, title, "pass", f"{len(answer.completions)} completion(s)"))
            elif isinstance(answer, MethodNotFound):
                live.behaviour.append(_line("behaviour", check_id, title, "pass", "-32601: it offers none"))
            elif isinstance(answer, DeadlinePassed):
                seconds = self._settings.deadline("command/complete")
                live.behaviour.append(_line("behaviour", check_id, title, "fail", P.COMPLETE_LATE.said(name=command.name, seconds=seconds), P.COMPLETE_LATE.fix))
            else:
                live.behaviour.append(_line("behaviour", check_id, title, "fail", _said(answer), "answer {\"completions\": [{\"value\": ...}]} (see schema/plugin.json)"))

    async def decide(self, info: InitializeResult, live: Live) -> None:
        from ...kernel.hooks import hook_problem

        for hook in info.hooks:
            if hook_problem(hook) is not None:
                continue
            for point in hook.points:
                payload = _PAYLOADS.get((hook.site, point))
                if payload is None:
                    continue  # an observation point: nothing waits on it
                title = f"hook {hook.name} ({hook.site}.{point}) answers hook/decide with a decision"
                plain = HookDecideParams(id=hook.name, site=hook.site, point=point, payload=payload)
                extra = _DecideExtra(id=hook.name, site=hook.site, point=point, payload=payload, bingo_check_extra="x")
                answer = await self._extra("hook/decide", plain, extra, msgspec.Raw)
                check_id = f"behaviour.hook.{hook.name}.{point}"
                live.behaviour.append(self._decision(check_id, title, hook.name, payload, answer))

    def _decision(self, check_id: str, title: str, name: str, payload: Json, answer: Any) -> Check:
        if not isinstance(answer, msgspec.Raw):
            return _line("behaviour", check_id, title, "fail", _said(answer), "answer within hook/decide's deadline with {\"outcome\": ...}")
        try:
            outcome = msgspec.json.decode(answer, type=HookOutcome)
        except msgspec.DecodeError as exc:
            got = _outcome_of(answer) or f"an answer of the wrong shape ({exc})"
            return _line("behaviour", check_id, title, "fail", P.HOOK_ANSWER.said(name=name, got=got), P.HOOK_ANSWER.fix.format())
        if outcome.outcome == "redirect" and is_object(payload) and is_object(outcome.value):
            became: Json = outcome.value.get("tool")
            if "tool" in payload and became != payload["tool"]:
                return _line("behaviour", check_id, title, "warn", f"it redirected a call of {payload['tool']} to {cut(repr(became), _PREVIEW)}", "a redirect is asked about again as the call it becomes; make sure that is what you mean")
        return _line("behaviour", check_id, title, "pass", outcome.outcome)

    async def contribute(self, info: InitializeResult, live: Live) -> None:
        for contributor in info.contributors:
            query = ContextQuery(session="bingo-check", turn=0, cwd=self._cwd, prompt="bingo --check-plugin")
            plain = ContributeParams(id=contributor.name, query=query)
            extra = _ContributeExtra(id=contributor.name, query=query, bingo_check_extra="x")
            answer = await self._extra("context/contribute", plain, extra, ContributeResult)
            title = f"contributor {contributor.name} answers context/contribute within {self._settings.deadline('context/contribute'):g} s"
            check_id = f"behaviour.contributor.{contributor.name}"
            if isinstance(answer, ContributeResult):
                live.behaviour.append(_line("behaviour", check_id, title, "pass", f"{len(answer.pieces)} piece(s)"))
            else:
                live.behaviour.append(_line("behaviour", check_id, title, "fail", _said(answer), "answer {\"pieces\": [...]} at once: a late contributor is dropped from the turn"))

    def extra_params(self, called: bool) -> Check:
        title = "it ignores params fields it does not know"
        if self._refused:
            refused = ", ".join(sorted(set(self._refused)))
            return _line("behaviour", "behaviour.extra-params", title, "fail", P.EXTRA_PARAMS.said(method=refused, field=_EXTRA), P.EXTRA_PARAMS.fix)
        if not self._tried:
            why = "it declares nothing to probe without side effects" + ("" if called else " (--call probes its tools)")
            return _line("behaviour", "behaviour.extra-params", title, "skip", why)
        return _line("behaviour", "behaviour.extra-params", title, "pass", ", ".join(sorted(set(self._tried))))

    async def tool(self, spec: ToolSpec, watch: _Watch) -> list[Check]:
        """Call tool `spec` twice with an input made from its schema: cancelled at once (with
        a field it cannot know), then as bingo calls it."""
        name = spec.name
        group = "call"
        value = sample(spec.input_schema)
        checks: list[Check] = []
        cancelled, after = await self._cancelled(spec, value, watch)
        proxy = BridgedTool(self._plugin, spec)
        self._calls += 1
        call = ToolCall(call_id=f"check-{self._calls}", input=value, cwd=self._cwd, session="bingo-check", turn=0)
        watch.in_flight.add(call.call_id)
        asks, notices = len(watch.refused_asks), watch.host_notices
        started = time.monotonic()
        try:
            output = await proxy.call(call)
            failed: PluginError | None = None
        except PluginError as exc:
            output, failed = None, exc
        finally:
            watch.in_flight.discard(call.call_id)
        seconds = time.monotonic() - started
        title = f"tool {name} answers {_short(value)} as a ToolOutput"
        if failed is None and isinstance(cancelled, (BadAnswer, DeadlinePassed, ConnectionClosed)):
            failed = cancelled  # an error answered to a cancelled call (-32800) is no fault
        if output is not None and failed is None:
            kind = "an error output (isError)" if output.is_error else f"{len(output.parts)} part(s)"
            checks.append(_line(group, f"call.{name}.answer", title, "pass", f"{kind} in {seconds:.2f} s"))
        else:
            detail = failed.line() if failed is not None else "no answer"
            if output is not None and output.is_error and output.parts:
                detail = "; ".join(p.text for p in output.parts if isinstance(p, TextPart))[:200] or detail
            checks.append(_line(group, f"call.{name}.answer", title, "fail", detail, 'answer {"output": {"parts": [{"type": "text", "text": ...}]}} (a failure the model should read: "isError": true)'))
        dropped = watch.faults.get(f"tool/call display {name}")
        if dropped is not None:
            checks.append(_line(group, f"call.{name}.display", "its display is a View", "fail", dropped, P.DISPLAY_DROPPED.fix.format()))
        elif output is not None and output.display is not None:
            checks.append(_line(group, f"call.{name}.display", "its display is a View", "pass", f"a {type(output.display).__name__.removesuffix('View').lower()} View"))
        else:
            checks.append(_line(group, f"call.{name}.display", "its display is a View", "pass" if output is not None else "skip", "none (the person sees the parts)" if output is not None else "no answer to read"))
        checks.append(self._cancel_line(name, cancelled, after))
        checks.append(_progress(name, watch))
        refused = watch.refused_asks[asks:]
        noticed = watch.host_notices - notices
        if refused:
            checks.append(_line(group, f"call.{name}.host", "what it asks bingo.host is answered", "fail", f"bingo.host ask was refused: {refused[0]}", "ask only on the callId of a call you are running, while it runs"))
        elif noticed > NOTICE_BURST:
            checks.append(_line(group, f"call.{name}.host", "what it asks bingo.host is answered", "fail", P.NOTICE_FLOOD.said(count=noticed, burst=NOTICE_BURST, per_second=NOTICES_PER_SECOND), P.NOTICE_FLOOD.fix))
        else:
            checks.append(_line(group, f"call.{name}.host", "what it asks bingo.host is answered", "pass", f"{noticed} notice(s)" if noticed else "not used"))
        return checks

    async def _cancelled(self, spec: ToolSpec, value: Json, watch: _Watch) -> tuple[Any, float]:
        """Call the tool and send `tool/cancel` at once; the answer (or what it raised) and
        the seconds it took after the cancel."""
        self._calls += 1
        call_id = f"check-{self._calls}"
        params = _ToolCallExtra(call_id=call_id, name=spec.name, input=value, cwd=self._cwd, session="bingo-check", turn=0, bingo_check_extra="x")
        plain = ToolCallParams(call_id=call_id, name=spec.name, input=value, cwd=self._cwd, session="bingo-check", turn=0)
        conn = self._conn
        loop = asyncio.get_running_loop()

        def cancel() -> None:
            try:
                conn.notify("tool/cancel", ToolCancelParams(call_id=call_id))
            except PluginError:
                pass  # it ended: the call fails with that already

        watch.in_flight.add(call_id)
        self._plugin.calls.begin(ToolCall(call_id=call_id, input=value, cwd=self._cwd, session="bingo-check", turn=0))
        # On the loop's next turn: after the request, which `call` writes before it waits.
        loop.call_soon(cancel)
        started = time.monotonic()
        wait = min(CANCEL_LIMIT, self._conn.deadline("tool/call"))
        try:
            async with asyncio.timeout(wait + 0.5):
                answer = await self._extra("tool/call", plain, params, msgspec.Raw)
        except TimeoutError:
            answer = TimeoutError()
        finally:
            watch.in_flight.discard(call_id)
            self._plugin.calls.end(call_id)
        return answer, time.monotonic() - started

    def _cancel_line(self, name: str, answer: Any, after: float) -> Check:
        title = f"tool {name} answers soon after tool/cancel"
        if isinstance(answer, msgspec.Raw | PluginError) and not isinstance(answer, DeadlinePassed) and after <= CANCEL_WAIT:
            return _line("call", f"call.{name}.cancel", title, "pass", f"answered {after:.2f} s after it")
        if isinstance(answer, TimeoutError | DeadlinePassed):
            how = f"did not answer within {after:.0f} s"
        else:
            how = f"answered {after:.1f} s"
        return _line("call", f"call.{name}.cancel", title, "warn", P.CANCEL_IGNORED.said(name=name, how=how), P.CANCEL_IGNORED.fix)


def _progress(name: str, watch: _Watch) -> Check:
    title = "its tool/progress is well-formed"
    flood = watch.faults.get("progress-flood")
    if flood is not None:
        return _line("call", f"call.{name}.progress", title, "fail", P.PROGRESS_FLOOD.said(per_second=PROGRESS_PER_SECOND), P.PROGRESS_FLOOD.fix)
    if watch.progress_bad:
        return _line("call", f"call.{name}.progress", title, "fail", P.BAD_PROGRESS.said(why=watch.progress_bad[0]), P.BAD_PROGRESS.fix)
    return _line("call", f"call.{name}.progress", title, "pass", f"{watch.progress_ok} live line(s)" if watch.progress_ok else "none sent")


def _outcome_of(raw: msgspec.Raw) -> str | None:
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    if is_object(value):
        outcome: Json = value.get("outcome")
        if outcome is not None:
            return f"outcome {cut(repr(outcome), _PREVIEW)}"
    return None


def _said(answer: Any) -> str:
    if isinstance(answer, PluginError):
        return answer.line()
    if isinstance(answer, BaseException):
        return type(answer).__name__
    return "an answer of the wrong shape"


def _short(value: Json) -> str:
    return cut(msgspec.json.encode(value).decode(), 60)


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


def _stdout(watch: _Watch, log: Path) -> list[Check]:
    """The checks of what it wrote to stdout, all along."""
    group = "behaviour"
    checks: list[Check] = []
    pretty, rest = _pretty(watch.strays)
    title = "one message per line"
    if pretty:
        checks.append(_line(group, "behaviour.lines", title, "fail", P.PRETTY_JSON.said(lines=pretty), P.PRETTY_JSON.fix))
    else:
        checks.append(_line(group, "behaviour.lines", title, "pass", f"{watch.lines} line(s)"))
    title = "nothing but JSON-RPC on stdout"
    if rest:
        reason = rest[0][1].reason
        checks.append(_line(group, "behaviour.stdout", title, "fail", f"{P.STRAY_STDOUT.said(log=log)}: {len(rest)} such line(s), the first {cut(reason, 120)}: {rest[0][1].preview[:_PREVIEW]!r}", P.STRAY_STDOUT.fix))
    elif watch.unknown:
        (method, count), = watch.unknown.most_common(1)
        total = sum(watch.unknown.values())
        what = f"method {method!r}" + (f" and {len(watch.unknown) - 1} other unknown method(s)" if len(watch.unknown) > 1 else "")
        checks.append(_line(group, "behaviour.stdout", title, "fail", P.UNKNOWN_NOTIFICATION.said(what=what, count=total if len(watch.unknown) > 1 else count, s="s" if total != 1 else ""), P.UNKNOWN_NOTIFICATION.fix))
    else:
        checks.append(_line(group, "behaviour.stdout", title, "pass", "only messages"))
    title = "answers carry the host's integer id"
    if watch.unexpected:
        problem = P.UNEXPECTED_STRING_ID if watch.string_id else P.UNEXPECTED_ID
        said = ", ".join(watch.unexpected[:3]) + (f" and {len(watch.unexpected) - 3} more" if len(watch.unexpected) > 3 else "")
        checks.append(_line(group, "behaviour.ids", title, "fail", problem.said(said=said, log=log), problem.fix.format(log=log)))
    else:
        checks.append(_line(group, "behaviour.ids", title, "pass", "every answer matched its request"))
    return checks


def _eof(watch: _Watch, seconds: float) -> Check:
    title = f"it exits within {EXIT_GRACE:g} s of its stdin closing"
    stop = watch.faults.get("ignores-stop")
    if stop is None:
        return _line("behaviour", "behaviour.eof", title, "pass", f"gone in {seconds:.2f} s")
    killed = seconds > EXIT_GRACE + TERM_GRACE
    problem = P.IGNORES_STOP_KILLED if killed else P.IGNORES_STOP_TERM
    said = problem.said(grace=EXIT_GRACE, closing=f"within {EXIT_GRACE:g} s of its stdin closing, nor ")
    return _line("behaviour", "behaviour.eof", title, "fail", said, problem.fix)


def _stderr(watch: _Watch, log: Path, grew: int) -> Check:
    title = "stderr goes to its log"
    flood = watch.faults.get("stderr-flood")
    if flood is not None:
        from ..process import LOG_MAX_BYTES

        return _line("behaviour", "behaviour.stderr", title, "fail", P.STDERR_FLOOD.said(mib=LOG_MAX_BYTES // 1024 // 1024), P.STDERR_FLOOD.fix)
    return _line("behaviour", "behaviour.stderr", title, "pass", f"{log} ({max(grew, 0)} bytes this run)")
