"""The checker's probes: the calls without side effects, and the tool calls of `--call`.

Owns each call the checker makes once a plugin is running: a method the wire does not have
(which must be answered -32601), `command/complete`, `hook/decide` and `context/contribute`
with a field the plugin cannot know (which must not be Invalid params), and each tool called
through bingo's own tool proxy and once more cancelled at once. Each becomes a Check; what it
saw on stdout meanwhile is the watch's (`_watch.py`).

Whole at about 500 lines on purpose: the probes without side effects and the tool calls share
one connection, one call counter and the record of which methods were sent a field they cannot
know (`_extra`, which the cancelled tool call goes through too, and `extra_params` reports on),
so splitting them would pass that state between modules; most of the length is the one-line
verdicts each call gives.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec

from ...endpoint import BadAnswer, Connection
from ...kernel.errors import BadParams, ConnectionClosed, DeadlinePassed, MethodNotFound, PluginError
from ...kernel.interfaces import ToolCall
from ...kernel.log import cut
from ...kernel.notices import NOTICE_BURST, NOTICES_PER_SECOND
from ...kernel.settings import Settings
from ...wire import (
    CommandCompleteParams,
    CommandCompleteResult,
    ContextQuery,
    ContributeParams,
    ContributeResult,
    HookDecideParams,
    HookOutcome,
    InitializeResult,
    Json,
    TextPart,
    ToolCallParams,
    ToolCancelParams,
    ToolSpec,
    Wire,
    is_object,
)
from .. import _problems as P
from .._link import PROGRESS_PER_SECOND
from ..tool import BridgedTool
from ._report import Check
from ._schema import sample
from ._watch import PREVIEW, Checked, Watch, line

__all__ = ["CANCEL_LIMIT", "CANCEL_WAIT", "PROBE_WAIT", "Probes", "unknown_method"]

PROBE_WAIT = 5.0
"""Seconds a probe of a method the wire does not have waits (it has no deadline of its own)."""
CANCEL_WAIT = 1.0
"""Seconds within which an answer after `tool/cancel` counts as the cancel honoured."""
CANCEL_LIMIT = 10.0
"""Seconds the checker waits for a cancelled call's answer at most (bingo would wait the
call's whole deadline)."""
_NO_DISPLAY = "none: the person sees the first lines of its text parts under the call, and /result shows them whole"
"""What a call with no display shows the person (ADR-0034)."""
_EXTRA = "bingoCheckExtra"
"""The field no plugin knows, sent to see that unknown fields are ignored (INTERFACE.md §5)."""
_PAYLOADS: dict[tuple[str, str], Json] = {
    ("prompt", "submit"): {"text": "bingo --check-plugin"},
    ("tool", "before"): {"tool": "bingo-check", "input": {}, "callId": "check-hook"},
    ("command", "before"): {"name": "bingo-check", "args": ""},
}
"""A harmless payload for each decision point."""


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


async def unknown_method(conn: Connection) -> Check:
    title = "it answers a method it does not have with -32601"
    method = "bingo/checkNoSuchMethod"
    try:
        await conn.call(method, _Empty(), msgspec.Raw, deadline=PROBE_WAIT)
    except MethodNotFound:
        return line("behaviour", "behaviour.unknown-method", title, "pass", "-32601")
    except DeadlinePassed:
        got = f"no answer within {PROBE_WAIT:g} s"
    except PluginError as exc:
        got = f"error {exc.code}" if exc.code else exc.line()
    else:
        got = "a result"
    return line(
        "behaviour",
        "behaviour.unknown-method",
        title,
        "fail",
        P.UNKNOWN_METHOD.said(method=method, got=got),
        P.UNKNOWN_METHOD.fix,
    )


class Probes:
    """The calls without side effects, and the tool calls of `--call`."""

    def __init__(self, conn: Connection, plugin: Checked, settings: Settings, cwd: Path) -> None:
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

    async def complete(self, info: InitializeResult, into: list[Check]) -> None:
        for command in info.commands:
            if command.args.kind != "free":
                continue
            title = f"/{command.name}: command/complete is answered within {self._settings.deadline('command/complete'):g} s"
            plain = CommandCompleteParams(name=command.name, partial="", cwd=self._cwd)
            extra = _CompleteExtra(name=command.name, partial="", cwd=self._cwd, bingo_check_extra="x")
            answer = await self._extra("command/complete", plain, extra, CommandCompleteResult)
            check_id = f"behaviour.complete.{command.name}"
            if isinstance(answer, CommandCompleteResult):
                into.append(line("behaviour", check_id, title, "pass", f"{len(answer.completions)} completion(s)"))
            elif isinstance(answer, MethodNotFound):
                into.append(line("behaviour", check_id, title, "pass", "-32601: it offers none"))
            elif isinstance(answer, DeadlinePassed):
                seconds = self._settings.deadline("command/complete")
                into.append(
                    line(
                        "behaviour",
                        check_id,
                        title,
                        "fail",
                        P.COMPLETE_LATE.said(name=command.name, seconds=seconds),
                        P.COMPLETE_LATE.fix,
                    )
                )
            else:
                into.append(
                    line(
                        "behaviour",
                        check_id,
                        title,
                        "fail",
                        _said(answer),
                        'answer {"completions": [{"value": ...}]} (see schema/plugin.json)',
                    )
                )

    async def decide(self, info: InitializeResult, into: list[Check]) -> None:
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
                into.append(self._decision(check_id, title, hook.name, payload, answer))

    def _decision(self, check_id: str, title: str, name: str, payload: Json, answer: Any) -> Check:
        if not isinstance(answer, msgspec.Raw):
            return line(
                "behaviour",
                check_id,
                title,
                "fail",
                _said(answer),
                'answer within hook/decide\'s deadline with {"outcome": ...}',
            )
        try:
            outcome = msgspec.json.decode(answer, type=HookOutcome)
        except msgspec.DecodeError as exc:
            got = _outcome_of(answer) or f"an answer of the wrong shape ({exc})"
            return line(
                "behaviour", check_id, title, "fail", P.HOOK_ANSWER.said(name=name, got=got), P.HOOK_ANSWER.fix.format()
            )
        if outcome.outcome == "redirect" and is_object(payload) and is_object(outcome.value):
            became: Json = outcome.value.get("tool")
            if "tool" in payload and became != payload["tool"]:
                return line(
                    "behaviour",
                    check_id,
                    title,
                    "warn",
                    f"it redirected a call of {payload['tool']} to {cut(repr(became), PREVIEW)}",
                    "a redirect is asked about again as the call it becomes; make sure that is what you mean",
                )
        return line("behaviour", check_id, title, "pass", outcome.outcome)

    async def contribute(self, info: InitializeResult, into: list[Check]) -> None:
        for contributor in info.contributors:
            query = ContextQuery(session="bingo-check", turn=0, cwd=self._cwd, prompt="bingo --check-plugin")
            plain = ContributeParams(id=contributor.name, query=query)
            extra = _ContributeExtra(id=contributor.name, query=query, bingo_check_extra="x")
            answer = await self._extra("context/contribute", plain, extra, ContributeResult)
            title = f"contributor {contributor.name} answers context/contribute within {self._settings.deadline('context/contribute'):g} s"
            check_id = f"behaviour.contributor.{contributor.name}"
            if isinstance(answer, ContributeResult):
                into.append(line("behaviour", check_id, title, "pass", f"{len(answer.pieces)} piece(s)"))
            else:
                into.append(
                    line(
                        "behaviour",
                        check_id,
                        title,
                        "fail",
                        _said(answer),
                        'answer {"pieces": [...]} at once: a late contributor is dropped from the turn',
                    )
                )

    def extra_params(self, called: bool) -> Check:
        title = "it ignores params fields it does not know"
        if self._refused:
            refused = ", ".join(sorted(set(self._refused)))
            return line(
                "behaviour",
                "behaviour.extra-params",
                title,
                "fail",
                P.EXTRA_PARAMS.said(method=refused, field=_EXTRA),
                P.EXTRA_PARAMS.fix,
            )
        if not self._tried:
            why = "nothing it declares can be probed without side effects" + (
                "" if called else "; --call probes its tools"
            )
            return line("behaviour", "behaviour.extra-params", title, "skip", why)
        return line("behaviour", "behaviour.extra-params", title, "pass", ", ".join(sorted(set(self._tried))))

    async def tool(self, spec: ToolSpec, watch: Watch) -> list[Check]:
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
            checks.append(line(group, f"call.{name}.answer", title, "pass", f"{kind} in {seconds:.2f} s"))
        else:
            detail = failed.line() if failed is not None else "no answer"
            if output is not None and output.is_error and output.parts:
                detail = "; ".join(p.text for p in output.parts if isinstance(p, TextPart))[:200] or detail
            checks.append(
                line(
                    group,
                    f"call.{name}.answer",
                    title,
                    "fail",
                    detail,
                    'answer {"output": {"parts": [{"type": "text", "text": ...}]}} (a failure the model should read: "isError": true)',
                )
            )
        dropped = watch.faults.get(f"tool/call display {name}")
        if dropped is not None:
            checks.append(
                line(
                    group,
                    f"call.{name}.display",
                    "its display is a View",
                    "fail",
                    dropped,
                    P.DISPLAY_DROPPED.fix.format(),
                )
            )
        elif output is not None and output.display is not None:
            checks.append(
                line(
                    group,
                    f"call.{name}.display",
                    "its display is a View",
                    "pass",
                    f"a {type(output.display).__name__.removesuffix('View').lower()} View",
                )
            )
        else:
            checks.append(
                line(
                    group,
                    f"call.{name}.display",
                    "its display is a View",
                    "pass" if output is not None else "skip",
                    _NO_DISPLAY if output is not None else "no answer to read",
                )
            )
        checks.append(self._cancel_line(name, cancelled, after))
        checks.append(_progress(name, watch))
        refused = watch.refused_asks[asks:]
        noticed = watch.host_notices - notices
        if refused:
            checks.append(
                line(
                    group,
                    f"call.{name}.host",
                    "what it asks bingo.host is answered",
                    "fail",
                    f"bingo.host ask was refused: {refused[0]}",
                    "ask only on the callId of a call you are running, while it runs",
                )
            )
        elif noticed > NOTICE_BURST:
            checks.append(
                line(
                    group,
                    f"call.{name}.host",
                    "what it asks bingo.host is answered",
                    "fail",
                    P.NOTICE_FLOOD.said(count=noticed, burst=NOTICE_BURST, per_second=NOTICES_PER_SECOND),
                    P.NOTICE_FLOOD.fix,
                )
            )
        else:
            checks.append(
                line(
                    group,
                    f"call.{name}.host",
                    "what it asks bingo.host is answered",
                    "pass",
                    f"{noticed} notice(s)" if noticed else "not used",
                )
            )
        return checks

    async def _cancelled(self, spec: ToolSpec, value: Json, watch: Watch) -> tuple[Any, float]:
        """Call the tool and send `tool/cancel` at once; the answer (or what it raised) and
        the seconds it took after the cancel."""
        self._calls += 1
        call_id = f"check-{self._calls}"
        params = _ToolCallExtra(
            call_id=call_id,
            name=spec.name,
            input=value,
            cwd=self._cwd,
            session="bingo-check",
            turn=0,
            bingo_check_extra="x",
        )
        plain = ToolCallParams(
            call_id=call_id, name=spec.name, input=value, cwd=self._cwd, session="bingo-check", turn=0
        )
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
        if (
            isinstance(answer, msgspec.Raw | PluginError)
            and not isinstance(answer, DeadlinePassed)
            and after <= CANCEL_WAIT
        ):
            return line("call", f"call.{name}.cancel", title, "pass", f"answered {after:.2f} s after it")
        if isinstance(answer, TimeoutError | DeadlinePassed):
            how = f"did not answer within {after:.0f} s"
        else:
            how = f"answered {after:.1f} s"
        return line(
            "call",
            f"call.{name}.cancel",
            title,
            "warn",
            P.CANCEL_IGNORED.said(name=name, how=how),
            P.CANCEL_IGNORED.fix,
        )


def _progress(name: str, watch: Watch) -> Check:
    title = "its tool/progress is well-formed"
    flood = watch.faults.get("progress-flood")
    if flood is not None:
        return line(
            "call",
            f"call.{name}.progress",
            title,
            "fail",
            P.PROGRESS_FLOOD.said(per_second=PROGRESS_PER_SECOND),
            P.PROGRESS_FLOOD.fix,
        )
    if watch.progress_bad:
        return line(
            "call",
            f"call.{name}.progress",
            title,
            "fail",
            P.BAD_PROGRESS.said(why=watch.progress_bad[0]),
            P.BAD_PROGRESS.fix,
        )
    return line(
        "call",
        f"call.{name}.progress",
        title,
        "pass",
        f"{watch.progress_ok} live line(s)" if watch.progress_ok else "none sent",
    )


def _outcome_of(raw: msgspec.Raw) -> str | None:
    try:
        value = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return None
    if is_object(value):
        outcome: Json = value.get("outcome")
        if outcome is not None:
            return f"outcome {cut(repr(outcome), PREVIEW)}"
    return None


def _said(answer: Any) -> str:
    if isinstance(answer, PluginError):
        return answer.line()
    if isinstance(answer, BaseException):
        return type(answer).__name__
    return "an answer of the wrong shape"


def _short(value: Json) -> str:
    return cut(msgspec.json.encode(value).decode(), 60)
