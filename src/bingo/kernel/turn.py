"""The turn loop: one prompt in, model and tools until the model ends.

Owns the order of a turn: the `prompt.submit` hooks (the one place they run: a redirect
replaces the prompt, an `ask` is put to the person), contributors asked concurrently under
their deadline, compaction when the history passes its budget, the streamed model response,
and every tool call through `tool.before` hooks and the gate — the one place a tool call
goes through; no tool runs before what the turn must have done first (`before_tools`: the
run's checkpoint of the project, taken while the model is asked). It writes each frame to the
session the moment it happens. It does not draw
(the surface's `TurnEvents` does), does not know whether anything it calls is remote, and
does not take what a person submits (kernel.dispatch does, and runs a turn here). The context
half — the budget, the contributors' pieces, the request and compaction — is `_context.py`'s.
It runs past ~480 lines because a tool call's whole way (hooks, the gate and its questions,
the wait for `before_tools`, the call, the bound on its result, interrupts) is kept in one
file, read in the order it happens.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Literal

import msgspec

from ..wire import (
    Delta,
    ImageBlock,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    TextBlock,
    TextDelta,
    TextPart,
    ToolOutput,
    ToolResultBlock,
    ToolUseBlock,
    is_object,
)
from ._context import Compacted, ContextWindow, SessionLog, plus
from ._cut import cut_output
from ._refusal import OUTSIDE_NOBODY, hook_name, nobody_to_ask, outside_question
from .compaction import (
    CHARS_PER_TOKEN,
)
from .errors import BingoError, GateError, ProviderError
from .frames import (
    AssistantFrame,
    PromptFrame,
    ToolCallFrame,
    ToolResultFrame,
    prompt_message,
)
from .gate import Gate, Verdict
from .hooks import Hooks, HookVerdict, asked_because, confirm
from .interfaces import (
    REQUEST_SENT,
    Asker,
    Declined,
    Provider,
    ShowsWhoAsks,
    Tool,
    ToolCall,
    TurnEvents,
)
from .notices import Notices
from .registry import Registry
from .settings import Settings

__all__ = ["Compacted", "Conversation", "SessionLog", "TurnResult"]

_log = logging.getLogger(__name__)

_MAX_STEPS = 64
"""Model responses in one turn before the turn is ended: a loop guard, not a budget."""


class TurnResult(msgspec.Struct, frozen=True):
    """How a turn ended. `reason` says why when it did not end well."""

    status: Literal["done", "blocked", "failed", "interrupted"]
    reason: str = ""
    unsent: bool = False
    """Blocked before the prompt was sent: a `prompt.submit` hook refused it (or asked, and
    the person said no), so a surface can give the person their text back to edit."""


class _TurnBlocked(Exception):
    def __init__(self, reason: str, *, unsent: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unsent = unsent
        """The prompt itself was refused (`prompt.submit`): nothing reached the model."""


class _Running(msgspec.Struct):
    call: ToolCall
    tool: Tool
    task: asyncio.Task[ToolOutput] | None = None


class Conversation(ContextWindow):
    """One session's history and the machinery to run turns on it."""

    __slots__ = (
        "_interrupted",
        "_running",
        "_settling",
        "_spoke",
        "after_sent",
        "asker",
        "before_tools",
        "child",
        "cwd",
        "events",
        "gate",
        "hooks",
        "log",
        "model",
        "notices",
        "offered",
        "on_always",
        "provider",
        "registry",
        "session",
        "settings",
        "system",
        "turn",
        "windows",
    )

    def __init__(
        self,
        *,
        registry: Registry,
        settings: Settings,
        gate: Gate,
        hooks: Hooks,
        notices: Notices,
        log: SessionLog,
        events: TurnEvents,
        asker: Asker,
        session: str,
        cwd: str,
        provider: Provider | None = None,
        model: str = "default",
        system: str | None = None,
        messages: list[Message] | None = None,
        turn: int = 0,
        on_always: Callable[[str], None] | None = None,
        windows: Callable[[str, str], int | None] | None = None,
        offered: frozenset[str] | None = None,
        child: bool = False,
    ) -> None:
        super().__init__([] if messages is None else messages)
        self.registry, self.settings, self.gate, self.hooks = registry, settings, gate, hooks
        self.notices, self.log, self.events, self.asker = notices, log, events, asker
        self.session, self.cwd, self.provider, self.model = session, cwd, provider, model
        self.system, self.turn, self.on_always = system, turn, on_always
        self.windows = windows
        """The context window of a provider's model (the providers' table, injected by the
        app: the kernel knows no provider), None when it is not known."""
        self.offered = offered
        """The names of the tools this conversation may call (None: every tool of the
        registry): a child conversation's subset (issue 33). A call of another tool is
        refused as no such tool, after the hooks have seen it."""
        self.child = child
        """A child conversation (a subagent's, issue 33): its prompt is the parent model's,
        not the person's, so the `prompt.submit`, `turn.start` and `turn.end` hooks are not
        run for its turn; every tool call it makes passes `tool.before`, the gate and
        `tool.after` as every call does."""
        self._running: dict[str, _Running] = {}
        self._interrupted = False
        self._spoke = False
        self.before_tools: asyncio.Future[None] | None = None
        """What must be done before any tool of the turn runs (the run's checkpoint of the
        project, taken while the model is asked: ADR-0044); no tool runs before it is."""
        self.after_sent: Callable[[], None] | None = None
        """What the turn begins once its first request is out (what `before_tools` waits
        for: the run's checkpoint, ADR-0043): called once, when the provider says the request
        is written (`REQUEST_SENT`), else at the answer's first delta or its end, and at the
        latest when the turn ends; so it never competes with the first request for the CPU."""
        self._settling: set[asyncio.Task[None]] = set()
        """Tool calls' waits for `before_tools`: an interrupt ends them."""

    # --- the turn -----------------------------------------------------------------

    async def run_turn(self, prompt: str, images: Sequence[ImageBlock] = ()) -> TurnResult:
        """Run one turn for `prompt` and the `images` it came with (checked already:
        `images.check_images`); never raises a BingoError (it becomes the result). The
        `prompt.submit` hooks see the text; a redirect replaces it and the images stay."""
        self.turn += 1
        self._interrupted = False
        self._spoke = False
        if not self.child:
            self.hooks.observe("turn", "start", {"turn": self.turn})
        try:
            return await self._turn(prompt, list(images))
        except _TurnBlocked as blocked:
            return TurnResult("blocked", blocked.reason, unsent=blocked.unsent)
        except BingoError as exc:
            return TurnResult("failed", exc.line())
        finally:
            self._sent()  # a turn that never asked the model (refused, failed) begins it too
            if not self.child:
                self.hooks.observe("turn", "end", {"turn": self.turn})

    async def _turn(self, prompt: str, images: list[ImageBlock]) -> TurnResult:
        verdict = (
            await self.hooks.decide("prompt", "submit", {"text": prompt})
            if not self.child
            else HookVerdict("continue", {"text": prompt})
        )
        if verdict.action in ("deny", "block"):
            raise _TurnBlocked(verdict.reason or "a hook refused the prompt", unsent=True)
        if is_object(verdict.payload):
            # A redirect replaces the prompt, whether or not a hook also asks.
            redirected = verdict.payload.get("text")
            if isinstance(redirected, str):
                prompt = redirected
        if verdict.action == "ask":
            why = await confirm(self.asker, verdict, "send this prompt to the model?")
            if why is not None:
                raise _TurnBlocked(f"the prompt was not sent: {why}", unsent=True)
        if self.provider is None:
            raise ProviderError(
                "no model provider is configured",
                "set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or pass --provider",
            )
        self.pieces = await self._contributions(prompt)
        # The pieces go with this turn's requests, and are not kept: the history (and the
        # session) holds the prompt alone, so they do not repeat every turn (ADR-0021).
        self._append(PromptFrame(text=prompt, turn=self.turn, pieces=list(self.pieces), images=images))
        self._prompt = prompt_message(prompt, images)
        self.messages.append(self._prompt)
        self._fitted = self._warned = False
        for _ in range(_MAX_STEPS):
            if self._interrupted:
                return TurnResult("interrupted", "the turn was interrupted")
            request = await self._fit()
            if self._interrupted:
                return TurnResult("interrupted", "the turn was interrupted")
            response = await self._respond(request)
            if response is None:
                return TurnResult("interrupted", "the turn was interrupted")
            uses = [b for b in response.content if isinstance(b, ToolUseBlock)]
            if not uses:
                return TurnResult("done")
            results = await self._run_tools(uses)
            self.messages.append(Message(role="user", content=list(results)))
            if self._interrupted:
                return TurnResult("interrupted", "the turn was interrupted")
        return TurnResult("failed", f"the model went on for {_MAX_STEPS} steps; the turn was ended")

    async def _respond(self, request: ModelRequest) -> Message | None:
        assert self.provider is not None

        first = True
        arrived: list[str] = []

        def on_delta(delta: Delta) -> None:
            nonlocal first
            self._sent()
            if isinstance(delta, TextDelta) and delta.text:
                if first and self._spoke:
                    self.events.text("\n")  # a new response starts on a new line
                first = False
                self._spoke = True
                arrived.append(delta.text)
                self.events.text(delta.text)

        said = REQUEST_SENT.set(self._sent if self.after_sent is not None else None)
        task: asyncio.Task[ModelResponse] = asyncio.ensure_future(self.provider.stream(request, on_delta))
        REQUEST_SENT.reset(said)  # the task took its own copy of the context
        self._stream = task
        try:
            response = await task
        except asyncio.CancelledError:
            if self._interrupted:
                return None
            raise
        except ProviderError:
            # A stream that broke mid-answer fails the turn, but the person saw its text:
            # it is kept, in the session and the history, as far as it got.
            if arrived:
                partial = Message(role="assistant", content=[TextBlock(text="".join(arrived))])
                self._append(AssistantFrame(message=partial, turn=self.turn))
                self.messages.append(partial)
            raise
        finally:
            self._stream = None
            self._sent()
        message = response.message
        if response.usage is not None:
            self.used = plus(self.used, response.usage)
        self._append(AssistantFrame(message=message, turn=self.turn, usage=response.usage))
        self.messages.append(message)
        if response.stop_reason == "maxTokens":
            self.notices.say("bingo", "the model stopped at its token limit (maxTokens)", "warning")
        return message

    def _sent(self) -> None:
        """The turn's first request is out (or will not be): begin `after_sent`, once."""
        begin, self.after_sent = self.after_sent, None
        if begin is not None:
            begin()

    # --- tools --------------------------------------------------------------------

    async def _run_tools(self, uses: list[ToolUseBlock]) -> list[ToolResultBlock]:
        results: dict[str, ToolResultBlock] = {}
        batch: list[ToolUseBlock] = []

        async def flush() -> None:
            outs = await asyncio.gather(*(self._call_tool(u) for u in batch))
            for use, out in zip(batch, outs):
                results[use.id] = out
            batch.clear()

        for use in uses:
            tool = self._tool(use.name)
            if tool is not None and tool.traits.concurrency_safe and not self._interrupted:
                batch.append(use)
                continue
            await flush()
            results[use.id] = await self._call_tool(use)
        await flush()
        return [results[u.id] for u in uses]

    def _result(self, use_id: str, output: ToolOutput) -> ToolResultBlock:
        self._append(ToolResultFrame(call_id=use_id, output=output, turn=self.turn))
        return ToolResultBlock(tool_use_id=use_id, parts=output.parts, is_error=output.is_error)

    async def _call_tool(self, use: ToolUseBlock) -> ToolResultBlock:
        """The one place every tool call goes through: hooks, then the gate, then the tool."""
        if self._interrupted:
            return self._refused(use.id, use.name, f"{use.name} was not run: the turn was interrupted")
        name, input = use.name, use.input
        verdict = await self.hooks.decide("tool", "before", {"tool": name, "input": input, "callId": use.id})
        if verdict.action == "block":
            # One line for the person: the turn's end names the hook (not a refusal line too).
            why = f"{name} was blocked by {hook_name(verdict.decided_by)}, which ended the turn: {verdict.reason or 'no reason given'}"
            self._result(use.id, _error(why))
            raise _TurnBlocked(why)
        if verdict.action == "deny":
            return self._refused(
                use.id,
                name,
                f"{name} was refused by {hook_name(verdict.decided_by)}: {verdict.reason or 'no reason given'}",
            )
        payload = verdict.payload
        if is_object(payload):
            # A redirect replaces the call: it goes through the gate as what it has become.
            name = str(payload.get("tool", name))
            input = payload.get("input", input)
        tool = self._tool(name)
        if tool is None:
            return self._refused(use.id, name, f"there is no tool named {name}")
        decision = self.gate.decide(name, tool.traits, input=input, cwd=self.cwd, hook_asks=verdict.action == "ask")
        if decision.verdict is Verdict.DENY:
            self._redirected_into_refusal(verdict, use.name, name)
            return self._refused(use.id, name, f"{name} is denied by the rule {decision.rule!r} in permissions.deny")
        if decision.verdict is Verdict.ASK and decision.outside:
            # No "always": no rule allows a call outside the sandbox.
            try:
                answer = await self.asker.ask(outside_question(input), ["yes", "no"])
            except GateError:
                self._redirected_into_refusal(verdict, use.name, name)
                return self._refused(use.id, name, OUTSIDE_NOBODY)
            if answer.strip().lower() not in ("yes", "y"):
                return self._result(use.id, _error(f"the person declined to run {name} outside the sandbox"))
        elif decision.verdict is Verdict.ASK:
            try:
                always = self.gate.always_rule(name, input, self.cwd)
                if verdict.asked_by is not None and isinstance(self.asker, ShowsWhoAsks):
                    by = f"{hook_name(verdict.asked_by)} asks to confirm it{asked_because(verdict)}"
                    answer = await self.asker.permission_asked(name, input, always, by)
                else:
                    answer = await self.asker.permission(name, input, always)
            except GateError:
                self._redirected_into_refusal(verdict, use.name, name)
                return self._refused(use.id, name, nobody_to_ask(name, decision.rule, verdict, decision.near))
            if isinstance(answer, Declined):
                # The person's own words, for the model (bounded by the surface that took them).
                return self._result(use.id, _error(f"the person declined to run {name}, and said: {answer.reason}"))
            if answer == "no":
                return self._result(use.id, _error(f"the person declined to run {name}"))
            if answer == "always":
                self.gate.allow(always)
                if self.on_always is not None:
                    self.on_always(always)
        allowed_by = decision.rule if decision.verdict is Verdict.ALLOW else None
        if allowed_by is None and decision.verdict is Verdict.ALLOW and name == "bash" and self.gate.sandboxed:
            allowed_by = "the sandbox"  # nobody saw this command either: its bound is the sandbox
        return self._result(use.id, await self._execute(tool, use.id, name, input, allowed_by))

    def _tool(self, name: str) -> Tool | None:
        """The tool `name` when this conversation offers it."""
        if self.offered is not None and name not in self.offered:
            return None
        return self.registry.tools.get(name)

    def _refused(self, use_id: str, name: str, why: str) -> ToolResultBlock:
        """A call that does not run, and that nobody saw decided: the model is told `why`,
        and so is the person, in the same words."""
        self.events.refused(use_id, name, why)
        return self._result(use_id, _error(why))

    def _redirected_into_refusal(self, verdict: HookVerdict, asked: str, became: str) -> None:
        hook = verdict.redirected_by
        if hook is not None:
            self.notices.say(
                hook.source,
                f"hook {hook.spec.name} redirected a call of {asked} into {became}, which the gate refused",
                "warning",
            )

    async def _ready(self) -> bool:
        """Wait for `before_tools` (the turn's checkpoint); False when the turn was
        interrupted first (then the tool does not run)."""
        self._sent()  # begun already (the answer came): never a wait on what was not begun
        pending = self.before_tools
        if pending is not None and not pending.done() and not self._interrupted:
            waiter = asyncio.ensure_future(_until(pending))
            self._settling.add(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if not self._interrupted:
                    raise
            finally:
                self._settling.discard(waiter)
        return not self._interrupted

    async def _execute(
        self, tool: Tool, call_id: str, name: str, input: Json, allowed_by: str | None = None
    ) -> ToolOutput:
        if not await self._ready():
            return _error(f"{name} was not run: the turn was interrupted")
        self._append(ToolCallFrame(call_id=call_id, name=name, input=input, turn=self.turn))
        call = ToolCall(
            call_id=call_id,
            input=input,
            cwd=self.cwd,
            session=self.session,
            turn=self.turn,
            allowed_by=allowed_by,
            progress=lambda tail: self.events.tool_progress(call_id, tail),
            ask=self.asker.ask,
        )
        running = _Running(call=call, tool=tool)
        self._running[call_id] = running
        self.events.tool_started(call_id, name, input)
        started = time.monotonic()
        try:
            running.task = asyncio.ensure_future(tool.call(call))
            output = await running.task
        except asyncio.CancelledError:
            if not self._interrupted:
                raise
            output = _error(f"{name} was cancelled: the turn was interrupted")
        except BingoError as exc:
            output = _error(exc.line())
        except Exception as exc:  # boundary: a failing tool fails its call, not the turn
            _log.exception("tool %s failed", name)
            output = _error(f"{name} failed: {type(exc).__name__}: {exc}")
        finally:
            del self._running[call_id]
        # The one place every tool's result is bounded, built-in or bridged: what the model
        # is told (and the session keeps) is cut to its share of the window, with a note.
        output = cut_output(
            output, name=name, source=tool.source, input=input, chars=self.result_budget() * CHARS_PER_TOKEN
        )
        self.events.tool_finished(call_id, name, output, time.monotonic() - started)
        self.hooks.observe("tool", "after", {"tool": name, "input": input, "output": _jsonable(output)})
        return output

    # --- interrupts ---------------------------------------------------------------

    def interrupt(self) -> list[str]:
        """Interrupt the running turn. The stream and `cancel` tools stop now; `block` tools
        are told (a bridged tool sends `tool/cancel`) and still waited for. Returns the names
        of the calls still being waited for. Called again while some are: the person will
        not wait, so those calls are abandoned (`abandon`)."""
        if self._interrupted and self._running:
            return self.abandon()
        self._interrupted = True
        if self._stream is not None:
            self._stream.cancel()
        for waiter in self._settling:
            waiter.cancel()
        waiting: list[str] = []
        for running in self._running.values():
            running.call.interrupted.set()
            if running.tool.traits.interrupt == "cancel":
                if running.task is not None:
                    running.task.cancel()
            else:
                waiting.append(running.tool.spec.name)
        for name in waiting:
            self.events.waiting(f"waiting for {name} to answer its cancel")
        return waiting

    def abandon(self) -> list[str]:
        """Stop waiting for the interrupted calls: each is told it is abandoned (a bridged
        tool stops its plugin, with one notice) and its task cancelled, so it ends as
        cancelled. Returns their names; the turn goes on to its end."""
        abandoned: list[str] = []
        for running in list(self._running.values()):
            running.call.abandoned.set()
            if running.task is not None and not running.task.done():
                running.task.cancel()
                abandoned.append(running.tool.spec.name)
        return abandoned


async def _until(pending: asyncio.Future[None]) -> None:
    """Until `pending` is done, whatever it ends with (cancelling this leaves it running)."""
    await asyncio.wait({pending})


def _error(text: str) -> ToolOutput:
    return ToolOutput(parts=[TextPart(text=text)], is_error=True)


def _jsonable(output: ToolOutput) -> Json:
    return msgspec.to_builtins(output)
