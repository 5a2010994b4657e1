"""The turn loop: one prompt in, model and tools until the model ends.

Owns the order of a turn: the `prompt.submit` hooks (the one place they run: a redirect
replaces the prompt, an `ask` is put to the person), contributors asked concurrently under
their deadline, compaction when the history passes its budget, the streamed model response,
and every tool call through `tool.before` hooks and the gate — the one place a tool call
goes through. It writes each frame to the session the moment it happens. It does not draw
(the surface's `TurnEvents` does), does not know whether anything it calls is remote, and
does not take what a person submits (kernel.dispatch does, and runs a turn here).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

import msgspec

from ..wire import (
    CompactionContext,
    ContextPiece,
    ContextQuery,
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
    Usage,
    is_object,
)
from ._cut import cut_output
from .compaction import (
    CHARS_PER_TOKEN,
    COMPACT_AT,
    DEFAULT_WINDOW,
    RESULT_SHARE,
    SummaryCompactor,
    TrimCompactor,
    estimate_request,
)
from .errors import BingoError, GateError, ProviderError
from .frames import (
    AssistantFrame,
    CompactionFrame,
    Frame,
    PromptFrame,
    ToolCallFrame,
    ToolResultFrame,
    prompt_message,
)
from .gate import Gate, Verdict, refusal
from .hooks import Hooks, HookVerdict, asked_because, confirm
from .interfaces import (
    Asker,
    Compactor,
    ContextContributor,
    Declined,
    Hook,
    Provider,
    ShowsWhoAsks,
    Tool,
    ToolCall,
    TurnEvents,
)
from .log import cut
from .notices import Notices
from .registry import BUILTIN, Registry
from .settings import Settings

__all__ = ["Compacted", "Conversation", "SessionLog", "TurnResult"]

_log = logging.getLogger(__name__)

_MAX_STEPS = 64
"""Model responses in one turn before the turn is ended: a loop guard, not a budget."""

_MIN_SHARE = 500
"""The fewest tokens a context contributor is given, however many there are."""


class SessionLog(Protocol):
    """Where a turn's frames go, the moment they happen."""

    def append(self, frame: Frame) -> None: ...


class TurnResult(msgspec.Struct, frozen=True):
    """How a turn ended. `reason` says why when it did not end well."""

    status: Literal["done", "blocked", "failed", "interrupted"]
    reason: str = ""
    unsent: bool = False
    """Blocked before the prompt was sent: a `prompt.submit` hook refused it (or asked, and
    the person said no), so a surface can give the person their text back to edit."""


class Compacted(msgspec.Struct, frozen=True):
    """What a compaction did: `status` "compacted" (by the compactor named `by`, from about
    `before` to `after` estimated tokens), "nothing" (no history, or only the latest
    exchange: nothing older to fold), "failed" (every strategy failed: notices say why; the
    history is as it was) or "interrupted"."""

    status: Literal["compacted", "nothing", "failed", "interrupted"]
    by: str = ""
    before: int = 0
    after: int = 0


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


class Conversation(msgspec.Struct):
    """One session's history and the machinery to run turns on it."""

    registry: Registry
    settings: Settings
    gate: Gate
    hooks: Hooks
    notices: Notices
    log: SessionLog
    events: TurnEvents
    asker: Asker
    session: str
    cwd: str
    provider: Provider | None = None
    model: str = "default"
    system: str | None = None
    messages: list[Message] = msgspec.field(default_factory=lambda: [])
    turn: int = 0
    on_always: Callable[[str], None] | None = None
    windows: Callable[[str, str], int | None] | None = None
    """The context window of a provider's model (the providers' table, injected by the app:
    the kernel knows no provider), None when it is not known."""
    pieces: list[ContextPiece] = msgspec.field(default_factory=lambda: [])
    """The context pieces of the latest turn: sent with its prompt, never stored in the history."""
    used: Usage = msgspec.field(default_factory=Usage)
    """Tokens this conversation's model responses spent in this run, summed."""
    _running: dict[str, _Running] = msgspec.field(default_factory=lambda: {})
    _stream: asyncio.Task[ModelResponse] | None = None
    _interrupted: bool = False
    _spoke: bool = False
    _prompt: Message | None = None
    """The latest turn's prompt in `messages`, which the requests of its turn send with `pieces`."""
    _warned: bool = False
    """Whether this turn has said that its request is past the budget all the same."""
    _fitted: bool = False
    """Whether this turn has compacted (or tried to) on its own already: once is all it can
    gain, since within a turn only the latest exchange grows, and compaction keeps that."""

    # --- the turn -----------------------------------------------------------------

    async def run_turn(self, prompt: str, images: Sequence[ImageBlock] = ()) -> TurnResult:
        """Run one turn for `prompt` and the `images` it came with (checked already:
        `images.check_images`); never raises a BingoError (it becomes the result). The
        `prompt.submit` hooks see the text; a redirect replaces it and the images stay."""
        self.turn += 1
        self._interrupted = False
        self._spoke = False
        self.hooks.observe("turn", "start", {"turn": self.turn})
        try:
            return await self._turn(prompt, list(images))
        except _TurnBlocked as blocked:
            return TurnResult("blocked", blocked.reason, unsent=blocked.unsent)
        except BingoError as exc:
            return TurnResult("failed", exc.line())
        finally:
            self.hooks.observe("turn", "end", {"turn": self.turn})

    async def _turn(self, prompt: str, images: list[ImageBlock]) -> TurnResult:
        verdict = await self.hooks.decide("prompt", "submit", {"text": prompt})
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
            if isinstance(delta, TextDelta) and delta.text:
                if first and self._spoke:
                    self.events.text("\n")  # a new response starts on a new line
                first = False
                self._spoke = True
                arrived.append(delta.text)
                self.events.text(delta.text)

        task: asyncio.Task[ModelResponse] = asyncio.ensure_future(self.provider.stream(request, on_delta))
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
        message = response.message
        if response.usage is not None:
            self.used = _plus(self.used, response.usage)
        self._append(AssistantFrame(message=message, turn=self.turn, usage=response.usage))
        self.messages.append(message)
        if response.stop_reason == "maxTokens":
            self.notices.say("bingo", "the model stopped at its token limit (maxTokens)", "warning")
        return message

    # --- context and compaction ---------------------------------------------------

    async def _contributions(self, prompt: str) -> list[ContextPiece]:
        contributors = list(self.registry.contributors)
        if not contributors:
            return []
        # Each contributor's share of the context: a tenth of the budget, split evenly.
        budget = max(_MIN_SHARE, self.budget() // 10 // len(contributors))
        query = ContextQuery(session=self.session, turn=self.turn, cwd=self.cwd, prompt=prompt, budget=budget)
        deadline = self.settings.deadline("context/contribute")

        async def one(contributor: ContextContributor) -> list[ContextPiece]:
            name = contributor.spec.name
            try:
                async with asyncio.timeout(deadline):
                    return self._within(contributor, await contributor.contribute(query), budget)
            except TimeoutError:
                self.notices.say(
                    contributor.source,
                    f"contributor {name} gave no answer within {deadline:g} s (deadlines.context/contribute in settings) and was dropped from this turn",
                    "warning",
                )
            except BingoError as exc:
                self.notices.say(
                    contributor.source, f"contributor {name} was dropped from this turn: {exc.line()}", "warning"
                )
            except Exception:  # boundary: a contributor must never fail the turn
                _log.exception("contributor %s failed", name)
                self.notices.say(
                    contributor.source, f"contributor {name} failed and was dropped from this turn", "warning"
                )
            return []

        answers = await asyncio.gather(*(one(c) for c in contributors))
        pieces = [piece for answer in answers for piece in answer]
        return sorted(pieces, key=lambda p: -p.priority)

    def _within(self, contributor: ContextContributor, pieces: list[ContextPiece], budget: int) -> list[ContextPiece]:
        """`pieces`, cut to `budget` tokens in all (estimated as characters / 4), with one
        notice per contributor per run when they were cut."""
        room = budget * CHARS_PER_TOKEN
        kept: list[ContextPiece] = []
        for piece in pieces:
            if len(piece.text) > room:
                name = contributor.spec.name
                self.notices.say_once(
                    contributor.source,
                    f"budget:{name}",
                    f"contributor {name} gave more than its budget of {budget} tokens ({budget * CHARS_PER_TOKEN} characters); the rest was cut",
                )
                if room > 0:
                    kept.append(msgspec.structs.replace(piece, text=piece.text[:room]))
                break
            room -= len(piece.text)
            kept.append(piece)
        return kept

    def window(self) -> int:
        """Tokens of input the run's model takes: `contextWindow`, else the providers' table,
        else DEFAULT_WINDOW (a model nobody wrote down is assumed small)."""
        if self.settings.context_window is not None:
            return self.settings.context_window
        if self.windows is not None and self.provider is not None:
            known = self.windows(self.provider.spec.name, self.model)
            if known is not None:
                return known
        return DEFAULT_WINDOW

    def budget(self) -> int:
        """Estimated tokens of a request past which the history is compacted before it is
        sent: `contextBudget`, else COMPACT_AT of the window."""
        if self.settings.context_budget is not None:
            return self.settings.context_budget
        return int(self.window() * COMPACT_AT)

    def result_budget(self) -> int:
        """Estimated tokens one tool result may hold: `toolResultBudget`, else a tenth of the window."""
        if self.settings.tool_result_budget is not None:
            return self.settings.tool_result_budget
        return self.window() // RESULT_SHARE

    def _why_budget(self) -> str:
        if self.settings.context_budget is not None:
            return "contextBudget"
        return f"{COMPACT_AT:.0%} of the model's {self.window()}-token window"

    def _request(self) -> ModelRequest:
        """The request the model is sent now: the history, this turn's prompt with its pieces."""
        prompt, pieces = self._prompt, self.pieces
        messages = list(self.messages)
        if prompt is not None and pieces:
            messages = [
                prompt_message(_with_context(_plain(m), pieces), [b for b in m.content if isinstance(b, ImageBlock)])
                if m is prompt
                else m
                for m in messages
            ]
        return ModelRequest(
            model=self.model,
            messages=messages,
            tools=[tool.spec for tool in self.registry.tools.values()],
            system=self.system,
            max_tokens=self.settings.max_tokens,
        )

    async def _fit(self) -> ModelRequest:
        """The request to send now, the history compacted first when it passes the budget, at
        most once a turn: what comes before the latest exchange is folded then, and only the
        exchange (kept verbatim) grows after that. A request still past the budget is said
        once a turn and sent as it is (each of its tool results is bounded already)."""
        request = self._request()
        estimate, budget = estimate_request(request), self.budget()
        if estimate <= budget:
            return request
        if not self._fitted:
            self._fitted = True
            done = await self.compact("overflow")
            if done.status == "interrupted":
                return request
            if done.status == "compacted":
                self.notices.say(
                    "bingo",
                    f"the conversation (about {done.before} tokens) passed its budget of {budget} tokens ({self._why_budget()}): compacted by {done.by} to about {done.after} tokens",
                )
                request, estimate = self._request(), done.after
            if estimate <= budget:
                return request
        if not self._warned:
            self._warned = True
            self.notices.say(
                "bingo",
                f"this request is about {estimate} tokens, past the budget of {budget} ({self._why_budget()}), and compaction can fold nothing more this turn: it is sent as it is",
                "warning",
            )
        return request

    def _compactors(self) -> list[Compactor]:
        """The strategies to try, in order: the one the settings name (a plugin's, or a
        built-in's name), then the model's summary (once a model is chosen), then trim."""
        wanted = self.settings.compactor
        chain: list[Compactor] = []
        if wanted and wanted in self.registry.compactors:
            chain.append(self.registry.compactors[wanted])
        elif wanted and wanted not in (SummaryCompactor.spec.name, TrimCompactor.spec.name):
            self.notices.say_once(
                "bingo", "compactor:" + wanted, f"compactor {wanted!r} is not available; using the built-in one"
            )
        if wanted != TrimCompactor.spec.name and self.provider is not None:
            tools = [tool.spec for tool in self.registry.tools.values()]
            chain.append(
                SummaryCompactor(
                    self._ask_model,
                    model=self.model,
                    system=self.system,
                    tools=tools,
                    max_tokens=self.settings.max_tokens,
                )
            )
        chain.append(TrimCompactor())
        return chain

    async def _ask_model(self, request: ModelRequest) -> ModelResponse:
        """One request whose answer is not shown: the summary a compaction asks for. It is the
        turn's stream while it runs, so an interrupt stops it."""
        assert self.provider is not None
        task: asyncio.Task[ModelResponse] = asyncio.ensure_future(self.provider.stream(request, lambda _delta: None))
        self._stream = task
        try:
            response = await task
        finally:
            self._stream = None
        if response.usage is not None:
            self.used = _plus(self.used, response.usage)
        return response

    async def compact(self, reason: Literal["overflow", "manual"]) -> Compacted:
        """Replace the history with a compaction: by the first strategy of `_compactors` that
        succeeds (each that fails says so in a notice, and the next is tried), recorded as a
        CompactionFrame. Never raises a BingoError."""
        if not self.messages:
            return Compacted("nothing")
        before = estimate_request(self._request())
        chain = self._compactors()
        for at, compactor in enumerate(chain):
            name = compactor.spec.name
            try:
                if compactor.source == BUILTIN:
                    compaction = await compactor.compact(CompactionContext(messages=list(self.messages)), reason)
                else:
                    async with asyncio.timeout(self.settings.deadline("compactor/compact")):
                        compaction = await compactor.compact(CompactionContext(messages=list(self.messages)), reason)
            except asyncio.CancelledError:
                if self._interrupted:
                    return Compacted("interrupted", by=name)
                raise
            except (TimeoutError, BingoError) as exc:
                seconds = self.settings.deadline("compactor/compact")
                why = (
                    f"it gave no answer within {seconds:g} s (deadlines.compactor/compact in settings)"
                    if isinstance(exc, TimeoutError)
                    else exc.line()
                )
                then = f"trying {chain[at + 1].spec.name}" if at + 1 < len(chain) else "history kept as it was"
                self.notices.say(compactor.source, f"compaction by {name} failed: {why}; {then}", "warning")
                continue
            if compaction.messages == self.messages:
                return Compacted("nothing", by=name)
            self._append(CompactionFrame(compaction=compaction, turn=self.turn, reason=reason, by=name))
            prompt = self._prompt
            self.messages = list(compaction.messages)
            if prompt is not None and not any(m is prompt for m in self.messages):
                # A plugin's compaction comes back decoded: the prompt is found again by value.
                self._prompt = next((m for m in reversed(self.messages) if m == prompt), None)
            return Compacted("compacted", by=name, before=before, after=estimate_request(self._request()))
        return Compacted("failed")

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
            tool = self.registry.tools.get(use.name)
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
            why = f"{name} was blocked by {_hook(verdict.decided_by)}, which ended the turn: {verdict.reason or 'no reason given'}"
            self._result(use.id, _error(why))
            raise _TurnBlocked(why)
        if verdict.action == "deny":
            return self._refused(
                use.id,
                name,
                f"{name} was refused by {_hook(verdict.decided_by)}: {verdict.reason or 'no reason given'}",
            )
        payload = verdict.payload
        if is_object(payload):
            # A redirect replaces the call: it goes through the gate as what it has become.
            name = str(payload.get("tool", name))
            input = payload.get("input", input)
        tool = self.registry.tools.get(name)
        if tool is None:
            return self._refused(use.id, name, f"there is no tool named {name}")
        decision = self.gate.decide(name, tool.traits, input=input, cwd=self.cwd, hook_asks=verdict.action == "ask")
        if decision.verdict is Verdict.DENY:
            self._redirected_into_refusal(verdict, use.name, name)
            return self._refused(use.id, name, f"{name} is denied by the rule {decision.rule!r} in permissions.deny")
        if decision.verdict is Verdict.ASK and decision.outside:
            # No "always": no rule allows a call outside the sandbox.
            try:
                answer = await self.asker.ask(_outside_question(input), ["yes", "no"])
            except GateError:
                self._redirected_into_refusal(verdict, use.name, name)
                return self._refused(use.id, name, _OUTSIDE_NOBODY)
            if answer.strip().lower() not in ("yes", "y"):
                return self._result(use.id, _error(f"the person declined to run {name} outside the sandbox"))
        elif decision.verdict is Verdict.ASK:
            try:
                always = self.gate.always_rule(name, input, self.cwd)
                if verdict.asked_by is not None and isinstance(self.asker, ShowsWhoAsks):
                    by = f"{_hook(verdict.asked_by)} asks to confirm it{asked_because(verdict)}"
                    answer = await self.asker.permission_asked(name, input, always, by)
                else:
                    answer = await self.asker.permission(name, input, always)
            except GateError:
                self._redirected_into_refusal(verdict, use.name, name)
                return self._refused(use.id, name, _nobody_to_ask(name, decision.rule, verdict, decision.near))
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

    async def _execute(
        self, tool: Tool, call_id: str, name: str, input: Json, allowed_by: str | None = None
    ) -> ToolOutput:
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

    def _append(self, frame: Frame) -> None:
        self.log.append(frame)


def _plus(a: Usage, b: Usage) -> Usage:
    return Usage(**{name: getattr(a, name) + getattr(b, name) for name in Usage.__struct_fields__})


def _hook(hook: Hook | None) -> str:
    return f"hook {hook.spec.name} ({hook.source})" if hook is not None else "a hook"


def _nobody_to_ask(name: str, rule: str | None, verdict: HookVerdict, near: tuple[str, ...] = ()) -> str:
    """Why a call the gate would ask about did not run, with nobody to ask: the rule in
    permissions.ask, the hook that asked, or no rule allowing it."""
    if rule is not None:
        return f"{name} is asked about by the rule {rule!r} in permissions.ask, and there is no person to ask"
    if verdict.asked_by is not None:
        return f"{_hook(verdict.asked_by)} asked to confirm {name}, and there is no person to ask"
    return refusal(name, near)


_OUTSIDE_NOBODY = (
    "bash was not run: it asked to run outside the sandbox, which only the person can allow (no rule does), "
    "and there is no person to ask; run it without outsideSandbox, inside the sandbox"
)


def _outside_question(input: Json) -> str:
    """The question for a `bash` call that asks to run outside the sandbox: it says so, with
    the model's reason and the command."""
    fields = input if is_object(input) else {}
    command, reason = fields.get("command"), fields.get("reason")
    why = reason if isinstance(reason, str) and reason.strip() else "no reason given"
    return (
        "bash wants to run OUTSIDE the sandbox, with everything you can reach (your files, keys and network)\n"
        f"  reason: {_one_line(cut(why, 300))}\n"
        f"  command: {_one_line(cut(command if isinstance(command, str) else '', 2000))}"
    )


def _one_line(text: str) -> str:
    """`text` on one line: its line breaks shown, so none of it passes for a line of bingo's."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _error(text: str) -> ToolOutput:
    return ToolOutput(parts=[TextPart(text=text)], is_error=True)


def _jsonable(output: ToolOutput) -> Json:
    return msgspec.to_builtins(output)


def _plain(message: Message) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def _with_context(prompt: str, pieces: list[ContextPiece]) -> str:
    if not pieces:
        return prompt
    blocks = [
        f"<context title={p.title!r}>\n{p.text}\n</context>" if p.title else f"<context>\n{p.text}\n</context>"
        for p in pieces
    ]
    return "\n".join(blocks) + "\n\n" + prompt
