"""The context half of a conversation: what each request sends, and fitting it to the window.

Owns the budget a conversation is measured against (the window of the run's model, the share
of it past which the history is compacted, the share one tool result may hold), the context
contributors' pieces for a turn (asked concurrently under their deadline, each cut to its
share), the request built from the history and this turn's pieces, and compaction: once a turn
when a request passes the budget, or when asked (`/compact`), by the first strategy that
succeeds, recorded as a CompactionFrame. `Conversation` (kernel.turn) is built on it. It does
not run turns, call tools or draw; the strategies and the estimates are kernel.compaction's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Literal, Protocol

import msgspec

from ..wire import (
    CompactionContext,
    ContextPiece,
    ContextQuery,
    ImageBlock,
    Message,
    ModelRequest,
    ModelResponse,
    TextBlock,
    ToolSpec,
    Usage,
)
from .compaction import (
    CHARS_PER_TOKEN,
    COMPACT_AT,
    DEFAULT_WINDOW,
    RESULT_SHARE,
    RequestSizes,
    SummaryCompactor,
    TrimCompactor,
    estimate_request,
)
from .errors import BingoError
from .frames import CompactionFrame, Frame, plus, prompt_message
from .interfaces import Compactor, ContextContributor, Provider
from .notices import Notices
from .registry import BUILTIN, Registry
from .settings import Settings

__all__ = ["Compacted", "ContextWindow", "SessionLog", "plus"]

_log = logging.getLogger(__name__)

_MIN_SHARE = 500
"""The fewest tokens a context contributor is given, however many there are."""


class SessionLog(Protocol):
    """Where a turn's frames go, the moment they happen."""

    def append(self, frame: Frame) -> None: ...


class Compacted(msgspec.Struct, frozen=True):
    """What a compaction did: `status` "compacted" (by the compactor named `by`, from about
    `before` to `after` estimated tokens), "nothing" (no history, or only the latest
    exchange: nothing older to fold), "failed" (every strategy failed: notices say why; the
    history is as it was) or "interrupted"."""

    status: Literal["compacted", "nothing", "failed", "interrupted"]
    by: str = ""
    before: int = 0
    after: int = 0


class ContextWindow:
    """A conversation's history and what it sends the model, kept within its budget.

    The attributes declared below and not in `__slots__` are the conversation's (it sets
    them); this half reads them, and owns the history, the pieces and the fitting state."""

    __slots__ = ("_fitted", "_prompt", "_sizes", "_stream", "_warned", "messages", "pieces", "used")

    registry: Registry
    settings: Settings
    notices: Notices
    log: SessionLog
    session: str
    cwd: str
    provider: Provider | None
    model: str
    system: str | None
    turn: int
    windows: Callable[[str, str], int | None] | None
    offered: frozenset[str] | None
    _interrupted: bool

    messages: list[Message]
    used: Usage
    """Tokens this conversation's model responses spent in this run, summed."""
    _stream: asyncio.Task[ModelResponse] | None
    """The model's answer being streamed now (a turn's, or a compaction's summary): what an
    interrupt cancels."""
    pieces: list[ContextPiece]
    """The context pieces of the latest turn: sent with its prompt, never stored in the history."""
    _prompt: Message | None
    """The latest turn's prompt in `messages`, which the requests of its turn send with `pieces`."""
    _warned: bool
    """Whether this turn has said that its request is past the budget all the same."""
    _fitted: bool
    """Whether this turn has compacted (or tried to) on its own already: once is all it can
    gain, since within a turn only the latest exchange grows, and compaction keeps that."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.pieces: list[ContextPiece] = []
        self._prompt = None
        self._warned = self._fitted = False
        self.used = Usage()
        self._stream = None
        self._sizes = RequestSizes()  # each message measured once, not once a step

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

    def tool_specs(self) -> list[ToolSpec]:
        """The specs of the tools this conversation offers the model: all of the registry's,
        or those `offered` names (a child conversation's, issue 33)."""
        offered = self.offered
        tools = self.registry.tools
        return [tool.spec for name, tool in tools.items() if offered is None or name in offered]

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
            tools=self.tool_specs(),
            system=self.system,
            max_tokens=self.settings.max_tokens,
        )

    async def _fit(self) -> ModelRequest:
        """The request to send now, the history compacted first when it passes the budget, at
        most once a turn: what comes before the latest exchange is folded then, and only the
        exchange (kept verbatim) grows after that. A request still past the budget is said
        once a turn and sent as it is (each of its tool results is bounded already)."""
        request = self._request()
        estimate, budget = self._sizes.estimate(request), self.budget()
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
            tools = self.tool_specs()
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
            self.used = plus(self.used, response.usage)
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

    def _append(self, frame: Frame) -> None:
        self.log.append(frame)


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
