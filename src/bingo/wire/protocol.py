"""The methods and notifications of the plugin wire: each one's params and result.

Owns the envelope-free payloads and the table (`METHODS`, `NOTIFICATIONS`) that names them
with each request's default deadline, which the bridge, the kernel's settings and the schema
generator read (`DEFAULT_DEADLINES`, `deadline_for`: the one lookup of a method's deadline).
The payloads wrap the kernel's own contract types and never reshape them. It enforces no
deadline: the connection does, and the kernel for what it bounds itself (hooks, contributors,
compactors), whichever side of the wire those run on.
"""

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Final, Literal

import msgspec

from ._base import Json, Wire
from .contract import (
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
    ModelRequest,
    ModelResponse,
    NoticeLevel,
    ProviderSpec,
    ServiceSpec,
    ToolOutput,
    ToolSpec,
)

__all__ = [
    "DEFAULT_DEADLINES",
    "FALLBACK_DEADLINE",
    "HOST_SERVICE_KEY",
    "METHODS",
    "NOTIFICATIONS",
    "PROTOCOL_VERSION",
    "AskParams",
    "AskResult",
    "CommandCompleteParams",
    "CommandCompleteResult",
    "CommandRunParams",
    "CommandRunResult",
    "CompactParams",
    "CompactResult",
    "ContributeParams",
    "ContributeResult",
    "Direction",
    "EmptyResult",
    "HookDecideParams",
    "HookObserveParams",
    "HostEnv",
    "HostNoticeParams",
    "InitializeParams",
    "InitializeResult",
    "MethodInfo",
    "ProviderCancelParams",
    "ProviderDeltaParams",
    "ProviderStreamParams",
    "ProviderStreamResult",
    "ServiceCallParams",
    "ServiceCallResult",
    "ToolCallParams",
    "ToolCallResult",
    "ToolCancelParams",
    "ToolProgressParams",
    "deadline_for",
]

PROTOCOL_VERSION: Final = 5
"""The one protocol this host speaks. Another is refused, never guessed at."""

HOST_SERVICE_KEY: Final = "bingo.host"
"""The reserved service key of the host's own two doors, `ask` and `notice`."""

# --- handshake ---------------------------------------------------------------------


class HostEnv(Wire, frozen=True):
    """What the host tells a plugin about where it runs."""

    host: str
    host_version: str
    platform: str
    cwd: str
    data_dir: Annotated[str, msgspec.Meta(description="A directory the plugin may keep files in.")]


class InitializeParams(Wire, frozen=True):
    """`initialize`, host → plugin: the handshake."""

    protocol: int
    plugin_root: str
    config: dict[str, Json]
    env: HostEnv


class InitializeResult(Wire, frozen=True):
    """The plugin's answer to `initialize`: what it is and everything it contributes.
    Every kind is optional."""

    protocol: int
    name: str
    version: str = ""
    tools: list[ToolSpec] = []
    commands: list[CommandSpec] = []
    contributors: list[ContributorSpec] = []
    compactors: list[CompactorSpec] = []
    providers: list[ProviderSpec] = []
    hooks: list[HookSpec] = []
    services: list[ServiceSpec] = []


# --- tools -------------------------------------------------------------------------


class ToolCallParams(Wire, frozen=True):
    """`tool/call`, host → plugin. `name` is the plugin's own tool name."""

    call_id: str
    name: str
    input: Json
    cwd: str
    session: str
    turn: int


class ToolCallResult(Wire, frozen=True):
    """The answer to `tool/call`."""

    output: ToolOutput


class ToolProgressParams(Wire, frozen=True):
    """`tool/progress`, plugin → host: the call's live output line."""

    call_id: str
    tail: str


class ToolCancelParams(Wire, frozen=True):
    """`tool/cancel`, host → plugin: the turn was interrupted. The host still waits for
    the call's answer."""

    call_id: str


# --- commands ----------------------------------------------------------------------


class CommandRunParams(Wire, frozen=True):
    """`command/run`, host → plugin. `args` is the raw text after the name and its space."""

    name: str
    args: str
    cwd: str
    session: str


class CommandRunResult(Wire, frozen=True):
    """The answer to `command/run`."""

    outcome: CommandOutcome


class CommandCompleteParams(Wire, frozen=True):
    """`command/complete`, host → plugin. Answer -32601 to offer no completions."""

    name: str
    partial: str
    cwd: str


class CommandCompleteResult(Wire, frozen=True):
    """The answer to `command/complete`."""

    completions: list[Completion]


# --- context and compaction --------------------------------------------------------


class ContributeParams(Wire, frozen=True):
    """`context/contribute`, host → plugin. `id` is the contributor's declared name."""

    id: str
    query: ContextQuery


class ContributeResult(Wire, frozen=True):
    """The answer to `context/contribute`."""

    pieces: list[ContextPiece]


class CompactParams(Wire, frozen=True):
    """`compactor/compact`, host → plugin. `id` is the compactor's declared name."""

    id: str
    context: CompactionContext
    reason: Literal["overflow", "manual"]


class CompactResult(Wire, frozen=True):
    """The answer to `compactor/compact`."""

    compaction: Compaction


# --- providers ---------------------------------------------------------------------


class ProviderStreamParams(Wire, frozen=True):
    """`provider/stream`, host → plugin: one model response, streamed back as
    `provider/delta` notifications, answered with the whole response."""

    id: str
    stream_id: str
    request: ModelRequest


class ProviderStreamResult(Wire, frozen=True):
    """The answer to `provider/stream`."""

    response: ModelResponse


class ProviderDeltaParams(Wire, frozen=True):
    """`provider/delta`, plugin → host: one chunk of a streamed response."""

    stream_id: str
    delta: Delta


class ProviderCancelParams(Wire, frozen=True):
    """`provider/cancel`, host → plugin: stop streaming."""

    stream_id: str


# --- hooks -------------------------------------------------------------------------


class HookDecideParams(Wire, frozen=True):
    """`hook/decide`, host → plugin; answered with a HookOutcome."""

    id: str
    site: str
    point: str
    payload: Json


class HookObserveParams(Wire, frozen=True):
    """`hook/observe`, host → plugin: an observation point; nothing waits on it."""

    id: str
    site: str
    point: str
    payload: Json


# --- services ----------------------------------------------------------------------


class ServiceCallParams(Wire, frozen=True):
    """`service/call`, both ways: a method of the service registered under `key`."""

    key: str
    method: str
    params: Json = None


class ServiceCallResult(Wire, frozen=True, omit_defaults=False):
    """The answer to `service/call`."""

    result: Json


class AskParams(Wire, frozen=True):
    """`bingo.host` `ask`: a question to the person, on a call the plugin is running."""

    call: str
    question: str
    choices: list[str] | None = None


class AskResult(Wire, frozen=True):
    """The person's answer."""

    answer: str


class HostNoticeParams(Wire, frozen=True):
    """`bingo.host` `notice`: one line under the plugin's own name."""

    message: str
    level: NoticeLevel = "info"


class EmptyResult(Wire, frozen=True):
    """An empty answer, `{}`."""


# --- the table ---------------------------------------------------------------------

Direction = Literal["host→plugin", "plugin→host", "both"]


class MethodInfo(msgspec.Struct, frozen=True):
    """One method or notification of the wire. `deadline` is a request's default: the
    seconds its answer may take (INTERFACE.md §5), overridden by `deadlines` in settings;
    None for a notification, which nothing waits on."""

    direction: Direction
    params: type[Wire]
    result: type[Wire] | None
    summary: str
    deadline: float | None = None


METHODS: Final[dict[str, MethodInfo]] = {
    "initialize": MethodInfo("host→plugin", InitializeParams, InitializeResult, "the handshake", 10.0),
    "tool/call": MethodInfo("host→plugin", ToolCallParams, ToolCallResult, "run a tool", 600.0),
    "command/run": MethodInfo("host→plugin", CommandRunParams, CommandRunResult, "run a command", 60.0),
    "command/complete": MethodInfo(
        "host→plugin", CommandCompleteParams, CommandCompleteResult, "complete a command's args", 1.0
    ),
    "context/contribute": MethodInfo("host→plugin", ContributeParams, ContributeResult, "context for a turn", 2.0),
    "compactor/compact": MethodInfo("host→plugin", CompactParams, CompactResult, "compact the history", 60.0),
    # provider/stream's deadline is the longest silence between two messages of the stream.
    "provider/stream": MethodInfo(
        "host→plugin", ProviderStreamParams, ProviderStreamResult, "one streamed model response", 60.0
    ),
    "hook/decide": MethodInfo("host→plugin", HookDecideParams, HookOutcome, "a hook decides", 5.0),
    "service/call": MethodInfo("both", ServiceCallParams, ServiceCallResult, "call a service", 30.0),
}
"""Every request of the wire, by method name."""

NOTIFICATIONS: Final[dict[str, MethodInfo]] = {
    "tool/progress": MethodInfo("plugin→host", ToolProgressParams, None, "a call's live line"),
    "tool/cancel": MethodInfo("host→plugin", ToolCancelParams, None, "the turn was interrupted"),
    "provider/delta": MethodInfo("plugin→host", ProviderDeltaParams, None, "a streamed chunk"),
    "provider/cancel": MethodInfo("host→plugin", ProviderCancelParams, None, "stop streaming"),
    "hook/observe": MethodInfo("host→plugin", HookObserveParams, None, "an observation point"),
}
"""Every notification of the wire, by method name."""

DEFAULT_DEADLINES: Final[Mapping[str, float]] = MappingProxyType(
    {name: info.deadline for name, info in METHODS.items() if info.deadline is not None}
)
"""Seconds each request of the wire may take, by method name, as METHODS declares them."""

FALLBACK_DEADLINE: Final = 30.0
"""Seconds for a method neither the table nor settings name: every wait on another process
is bounded."""


def deadline_for(method: str, deadlines: Mapping[str, float] | None = None) -> float:
    """Seconds a call of `method` may take: `deadlines` (the settings') first, then the
    table's default, then FALLBACK_DEADLINE."""
    if deadlines is not None:
        seconds = deadlines.get(method)
        if seconds is not None:
            return seconds
    return DEFAULT_DEADLINES.get(method, FALLBACK_DEADLINE)
