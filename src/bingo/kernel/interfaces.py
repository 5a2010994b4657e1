"""The kernel's seams: one interface per capability, and the records passed through them.

A tool, command, contributor, compactor, provider, hook or service is anything that has these
methods. The kernel never learns whether an implementation is in-process or a proxy whose
method bodies are wire calls: that is the point of the module. The two seams a surface
implements are here too: `TurnEvents` (what a running turn shows) and `Asker` (the person,
if there is one), so the bridge and the surfaces reach them without the turn loop. It holds
no logic.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Literal, Protocol, TypeAlias, runtime_checkable

import msgspec

from ..wire import (
    CommandOutcome,
    CommandSpec,
    Compaction,
    CompactionContext,
    CompactorSpec,
    Completion,
    ContextPiece,
    ContextQuery,
    ContributorSpec,
    Delta,
    HookOutcome,
    HookSpec,
    Json,
    ModelRequest,
    ModelResponse,
    ProviderSpec,
    ServiceSpec,
    ToolOutput,
    ToolSpec,
    ToolTraits,
)

__all__ = [
    "REQUEST_SENT",
    "AskFn",
    "Asker",
    "Command",
    "CommandContext",
    "Compactor",
    "ContextContributor",
    "Declined",
    "Hook",
    "Interrupt",
    "PermissionAnswer",
    "Provider",
    "Service",
    "ShowsWhoAsks",
    "Tool",
    "ToolCall",
    "TurnEvents",
]

_log = logging.getLogger(__name__)

AskFn = Callable[[str, "list[str] | None"], Awaitable[str]]
"""Put a question (with optional choices) to the person; the answer, or GateError when
nobody can be asked."""


class Declined(msgspec.Struct, frozen=True):
    """A "no" to the gate's question with the person's words for the model (ADR-0035)."""

    reason: str


PermissionAnswer: TypeAlias = Literal["once", "always", "no"]
"""The person's answer to the gate's question: run it this once, from now on, or not. A
surface that lets them say why not answers `Declined` instead of "no"."""


def _no_progress(_tail: str) -> None:
    return None


async def _nobody(_question: str, _choices: list[str] | None) -> str:
    from .errors import GateError

    raise GateError("no person to ask")


def _nothing() -> None:
    return None


class Interrupt:
    """A one-way flag, set when the turn is interrupted. `set()` raises it once and for all;
    then `is_set()` is true, `wait()` returns, and every callback registered with `on_set`
    has been called, in the setter's frame. A callback registered after the flag is up is
    called at once. `on_set` answers the function that unregisters its callback.

    Not an asyncio.Event because a tool that only needs to *react* (a bridged tool sends
    `tool/cancel`) should not need a task waiting on it for every call (a measured share of
    a call's cost, ADR-0003); the Event behind `wait()` is made only for whoever waits."""

    __slots__ = ("_callbacks", "_event", "_set")

    def __init__(self) -> None:
        self._set = False
        self._callbacks: list[Callable[[], None]] = []
        self._event: asyncio.Event | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        """Raise the flag (again is a no-op) and call every registered callback."""
        if self._set:
            return
        self._set = True
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # boundary: one tool's callback must not stop the interrupt
                _log.exception("an interrupt callback failed")
        if self._event is not None:
            self._event.set()

    async def wait(self) -> None:
        """Return once the flag is up."""
        if self._set:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` (a quick plain function) when the flag goes up, or now if it is
        up; the function that unregisters it (harmless to call after it ran)."""
        if self._set:
            callback()
            return _nothing
        self._callbacks.append(callback)

        def unregister() -> None:
            # By identity, not equality: the same function may be registered twice.
            for index, registered in enumerate(self._callbacks):
                if registered is callback:
                    del self._callbacks[index]
                    return

        return unregister


class ToolCall(msgspec.Struct):
    """One call of a tool, as the kernel makes it.

    `interrupted` is set when the turn is interrupted: a tool whose traits say `block` is
    still awaited (a bridged tool sends `tool/cancel` then, from an `on_set` callback); a
    `cancel` tool's task is cancelled instead. `abandoned` is set when the person
    interrupts again while such a call is still awaited: its task is cancelled then, and a
    bridged tool stops the plugin that did not answer its cancel.

    `allowed_by` is the allow rule that let the call run without a question (None when the
    person was asked, or no rule was needed): `bash` runs git with the repository's
    code-running configuration neutralised then (ADR-0018)."""

    call_id: str
    input: Json
    cwd: str
    session: str
    turn: int
    allowed_by: str | None = None
    progress: Callable[[str], None] = _no_progress
    ask: AskFn = _nobody
    interrupted: Interrupt = msgspec.field(default_factory=Interrupt)
    abandoned: Interrupt = msgspec.field(default_factory=Interrupt)


class CommandContext(msgspec.Struct, frozen=True):
    """Where a command runs."""

    cwd: str
    session: str


class Tool(Protocol):
    """A tool the model can call. `spec.name` is the name the kernel, the gate and the
    model know it by (for a bridged tool, `plugin__<plugin>__<tool>`)."""

    @property
    def spec(self) -> ToolSpec: ...

    @property
    def traits(self) -> ToolTraits: ...

    @property
    def source(self) -> str:
        """Who provides it: `builtin`, or `plugin <name>`."""
        ...

    async def call(self, call: ToolCall) -> ToolOutput:
        """Run the tool. Failures are answered as an output with `is_error`, or raised as a
        BingoError whose line the model is told."""
        ...


class Command(Protocol):
    """A slash command."""

    @property
    def spec(self) -> CommandSpec: ...

    @property
    def source(self) -> str: ...

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome: ...

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        """Ways to finish `partial`; none is always a correct answer."""
        ...


class ContextContributor(Protocol):
    """Adds context to each turn. Past its deadline it is dropped from that round."""

    @property
    def spec(self) -> ContributorSpec: ...

    @property
    def source(self) -> str: ...

    async def contribute(self, query: ContextQuery) -> list[ContextPiece]: ...


class Compactor(Protocol):
    """Replaces a history that is too long. Raises CompactionError when it cannot."""

    @property
    def spec(self) -> CompactorSpec: ...

    @property
    def source(self) -> str: ...

    async def compact(self, context: CompactionContext, reason: Literal["overflow", "manual"]) -> Compaction: ...


class Provider(Protocol):
    """A model. `stream` calls `on_delta` for each chunk as it arrives and returns the whole
    response; cancelling the task stops the stream. Raises ProviderError when it cannot."""

    @property
    def spec(self) -> ProviderSpec: ...

    @property
    def source(self) -> str: ...

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse: ...


REQUEST_SENT: ContextVar[Callable[[], None] | None] = ContextVar("bingo_request_sent", default=None)
"""Set by the turn for a provider's `stream`: a provider that knows when its request has been
written whole calls it then (the built-in ones do, by httpx's `trace` extension). Optional:
the turn calls it itself at the answer's first delta, or its end, whichever comes first. What
waits on it is work the request does not need (the turn's checkpoint: ADR-0043, ADR-0044)."""


class Hook(Protocol):
    """Decides at decision points and watches observation points of `spec.site`."""

    @property
    def spec(self) -> HookSpec: ...

    @property
    def source(self) -> str: ...

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        """A decision. Raising, or missing the deadline, decides nothing."""
        ...

    async def observe(self, point: str, payload: Json) -> None:
        """An observation; nothing waits on it."""
        ...


class Service(Protocol):
    """Methods other plugins (and the host) call by key."""

    @property
    def spec(self) -> ServiceSpec: ...

    @property
    def source(self) -> str: ...

    async def call(self, method: str, params: Json) -> Json:
        """Raises PluginError (with a JSON-RPC code) when the call fails."""
        ...


class TurnEvents(Protocol):
    """What a surface is told while a turn runs, to draw it live."""

    def text(self, text: str) -> None: ...

    def tool_started(self, call_id: str, name: str, input: Json) -> None: ...

    def tool_progress(self, call_id: str, tail: str) -> None: ...

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None: ...

    def waiting(self, what: str) -> None: ...

    def refused(self, call_id: str, name: str, why: str) -> None:
        """A call of `name` did not run, decided where the person did not see it (a rule, a
        hook, nobody to ask); `why` is the line the model is told too."""
        ...


class Asker(Protocol):
    """The person, if there is one. Both methods raise GateError when nobody can answer."""

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer | Declined:
        """May `name` run with `input`? `always` is the allow rule a "yes, always" adds (the
        surface shows it, so the person knows what they allow from now on)."""
        ...

    async def ask(self, question: str, choices: list[str] | None) -> str: ...


@runtime_checkable
class ShowsWhoAsks(Protocol):
    """An Asker that can show, with the gate's question, the hook that made the gate ask and
    its words (the terminal does; ADR-0035). Other askers are asked `permission` as ever."""

    async def permission_asked(self, name: str, input: Json, always: str, by: str) -> PermissionAnswer | Declined:
        """`Asker.permission`, with `by`: who asked and why, one line (foreign: escape it)."""
        ...
