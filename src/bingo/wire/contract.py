"""The kernel's own contract types: what a tool, command, contributor, compactor, provider,
hook or service declares and answers.

These are the types the kernel works with *and* the types that cross the plugin wire: one
representation per contract. This module owns their shapes; it does not know which
methods carry them (that is `protocol.py`) nor how they are framed (`rpc.py`).
"""

from typing import Annotated, Literal, TypeAlias

import msgspec

from ._base import Json, Wire
from .view import View

__all__ = [
    "Block",
    "CommandArgs",
    "CommandOutcome",
    "CommandSpec",
    "Compaction",
    "CompactionContext",
    "CompactorSpec",
    "Completion",
    "ContextPiece",
    "ContextQuery",
    "ContributorSpec",
    "Delta",
    "ErrorOutcome",
    "HookOutcome",
    "HookSpec",
    "ImageBlock",
    "ImagePart",
    "Message",
    "ModelRequest",
    "ModelResponse",
    "NoneOutcome",
    "Notice",
    "NoticeLevel",
    "Part",
    "PromptOutcome",
    "ProviderSpec",
    "ServiceSpec",
    "StopReason",
    "TextBlock",
    "TextDelta",
    "TextOutcome",
    "TextPart",
    "ToolOutput",
    "ToolResultBlock",
    "ToolSpec",
    "ToolTraits",
    "ToolUseBlock",
    "ToolUseDelta",
    "Usage",
    "ViewOutcome",
]

# --- tools -------------------------------------------------------------------------


class ToolTraits(Wire, frozen=True):
    """What the kernel believes about a tool. The default is the most restrictive: untrusted,
    not read-only, not concurrency-safe, and an interrupt waits for the call (`block`).
    A plugin cannot set these: bridged tools always wear the default."""

    trusted: bool = False
    read_only: bool = False
    concurrency_safe: bool = False
    interrupt: Literal["block", "cancel"] = "block"


class ToolSpec(Wire, frozen=True):
    """A tool as the model sees it."""

    name: Annotated[str, msgspec.Meta(description="The tool's own name, e.g. `count`.")]
    description: str = ""
    input_schema: Annotated[dict[str, Json], msgspec.Meta(description="A JSON Schema for the tool's input.")] = (
        msgspec.field(default_factory=lambda: {"type": "object"})
    )


class _Part(Wire, frozen=True, tag_field="type"):
    pass


class TextPart(_Part, frozen=True, tag="text"):
    """Text for the model."""

    text: str


class ImagePart(_Part, frozen=True, tag="image"):
    """An image for the model, base64-encoded."""

    media_type: str
    data: str


Part: TypeAlias = TextPart | ImagePart


class ToolOutput(Wire, frozen=True):
    """What a tool answers: parts for the model, and optionally a View for the person."""

    parts: list[Part] = []
    display: View | None = None
    is_error: bool = False


# --- commands ----------------------------------------------------------------------


class CommandArgs(Wire, frozen=True):
    """What a command takes after its name: nothing, or free text (which may be completed)."""

    kind: Literal["none", "free"] = "none"
    hint: str | None = None


class CommandSpec(Wire, frozen=True):
    """A slash command."""

    name: str
    hint: str = ""
    args: CommandArgs = msgspec.field(default_factory=CommandArgs)
    instant: bool = False
    family: str = "plugin"


class _Outcome(Wire, frozen=True, tag_field="kind"):
    pass


class TextOutcome(_Outcome, frozen=True, tag="text"):
    """Text to show."""

    text: str


class ViewOutcome(_Outcome, frozen=True, tag="view"):
    """A View to draw."""

    view: View


class PromptOutcome(_Outcome, frozen=True, tag="prompt"):
    """Text submitted as the person's own message."""

    text: str


class ErrorOutcome(_Outcome, frozen=True, tag="error"):
    """The command failed; the message says why."""

    message: str


class NoneOutcome(_Outcome, frozen=True, tag="none"):
    """Nothing to show."""


CommandOutcome: TypeAlias = TextOutcome | ViewOutcome | PromptOutcome | ErrorOutcome | NoneOutcome


class Completion(Wire, frozen=True):
    """One way to finish what has been typed."""

    value: str
    hint: str | None = None


# --- context -----------------------------------------------------------------------


class ContributorSpec(Wire, frozen=True):
    """A context contributor."""

    name: str
    description: str = ""


class ContextQuery(Wire, frozen=True):
    """What a contributor is told about the turn: a projection, never the host itself."""

    session: str
    turn: int
    cwd: str
    prompt: str
    budget: int | None = None


class ContextPiece(Wire, frozen=True):
    """A piece of context added to the turn."""

    text: str
    title: str | None = None
    priority: int = 0


# --- messages ----------------------------------------------------------------------


class _Block(Wire, frozen=True, tag_field="type"):
    pass


class TextBlock(_Block, frozen=True, tag="text"):
    """Text in a message."""

    text: str


class ImageBlock(_Block, frozen=True, tag="image"):
    """An image in a person's message (a prompt's), base64-encoded, as an ImagePart is in a
    tool's result. bingo takes `image/png`, `image/jpeg`, `image/gif` and `image/webp`."""

    media_type: str
    data: str


class ToolUseBlock(_Block, frozen=True, tag="toolUse"):
    """The model asks for a tool call."""

    id: str
    name: str
    input: Json


class ToolResultBlock(_Block, frozen=True, tag="toolResult"):
    """A tool call's result, fed back to the model."""

    tool_use_id: str
    parts: list[Part]
    is_error: bool = False


Block: TypeAlias = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock


class Message(Wire, frozen=True):
    """One message of the conversation."""

    role: Literal["user", "assistant"]
    content: list[Block]


# --- models ------------------------------------------------------------------------


class ProviderSpec(Wire, frozen=True):
    """A model provider."""

    name: str
    description: str = ""
    models: list[str] = []


class ModelRequest(Wire, frozen=True):
    """One request for a model response."""

    model: str
    messages: list[Message]
    tools: list[ToolSpec] = []
    system: str | None = None
    max_tokens: int | None = None


class _Delta(Wire, frozen=True, tag_field="type"):
    pass


class TextDelta(_Delta, frozen=True, tag="text"):
    """A chunk of streamed text."""

    text: str


class ToolUseDelta(_Delta, frozen=True, tag="toolUse"):
    """A tool call the model has finished asking for."""

    id: str
    name: str
    input: Json


Delta: TypeAlias = TextDelta | ToolUseDelta

StopReason: TypeAlias = Literal["end", "toolUse", "maxTokens", "cancelled"]


class Usage(Wire, frozen=True):
    """Tokens spent on one response. `input_tokens` counts every input token, cached or not;
    the cache fields say how many of them the provider read from its prompt cache or wrote
    to it (both 0 where a provider reports no caching)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: Annotated[
        int, msgspec.Meta(description="Input tokens read from the provider's prompt cache.")
    ] = 0
    cache_write_tokens: Annotated[
        int, msgspec.Meta(description="Input tokens written to the provider's prompt cache.")
    ] = 0


class ModelResponse(Wire, frozen=True):
    """A whole model response: the final message is what counts."""

    message: Message
    stop_reason: StopReason
    usage: Usage | None = None


# --- compaction --------------------------------------------------------------------


class CompactorSpec(Wire, frozen=True):
    """A compaction strategy."""

    name: str
    description: str = ""


class CompactionContext(Wire, frozen=True):
    """The history to compact."""

    messages: list[Message]


class Compaction(Wire, frozen=True):
    """The history that replaces the compacted one."""

    messages: list[Message]


# --- hooks -------------------------------------------------------------------------


class HookSpec(Wire, frozen=True):
    """A hook and the points it wants. `site` is `prompt`, `tool`, `command`, `turn` or
    `session`; points are e.g. `before`, `after`, `submit`, `start`, `end`."""

    name: str
    site: str
    points: list[str]


class HookOutcome(Wire, frozen=True):
    """A hook's decision. There is no `allow`: a hook can only tighten what happens.
    `deny` refuses this one action (value: the reason), `ask` makes the gate ask the person,
    `block` ends the turn (value: the reason), `redirect` replaces the payload with `value`."""

    outcome: Literal["continue", "deny", "ask", "block", "redirect"]
    value: Json = None


# --- services and notices ----------------------------------------------------------


class ServiceSpec(Wire, frozen=True):
    """A service other plugins (and the host) can call by key."""

    key: str
    methods: list[str]
    description: str = ""


NoticeLevel: TypeAlias = Literal["info", "warning", "error"]


class Notice(Wire, frozen=True):
    """One line said under a source's name."""

    source: str
    message: str
    level: NoticeLevel = "info"
