"""The Agent Client Protocol's messages, as far as bingo speaks them (protocol version 1).

Owns the shape of what crosses between an editor and `bingo --acp`: the params bingo takes
(`initialize`, `session/new`, `session/load`, `session/prompt`, `session/cancel`,
`session/close`), what it
answers, the `session/update` notifications it sends, and the client methods it calls
(`session/request_permission`, `fs/read_text_file`, `fs/write_text_file`). Field names are
camelCase through the wire base, unknown fields are ignored on decode (a newer client works
with bingo), and a prompt's content blocks stay raw JSON so a block bingo does not know is
skipped, not a refusal of the whole prompt. It holds no logic.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from ...wire import Json, Wire

__all__ = [
    "ACP_VERSION",
    "AgentCapabilities",
    "AgentInfo",
    "AgentMessageChunk",
    "AvailableCommand",
    "AvailableCommandInput",
    "AvailableCommandsUpdate",
    "CancelParams",
    "ClientCapabilities",
    "ClientSessionCapabilities",
    "Content",
    "DiffContent",
    "Empty",
    "FsCapabilities",
    "ImageBlock",
    "InitializeParams",
    "InitializeResult",
    "LoadSessionParams",
    "LoadSessionResult",
    "Location",
    "McpCapabilities",
    "NewSessionParams",
    "NewSessionResult",
    "NoticeUpdate",
    "PermissionOption",
    "PermissionOutcome",
    "PermissionParams",
    "PermissionResult",
    "PermissionToolCall",
    "PromptCapabilities",
    "PromptParams",
    "PromptResult",
    "ReadTextFileParams",
    "ReadTextFileResult",
    "SessionCapabilities",
    "SessionNotification",
    "StopReason",
    "TextBlock",
    "ToolCallContent",
    "ToolCallStart",
    "ToolCallStatus",
    "ToolCallUpdate",
    "ToolKind",
    "Update",
    "UserMessageChunk",
    "WriteTextFileParams",
]

ACP_VERSION = 1
"""The protocol version bingo speaks (the only major version there is)."""

StopReason: TypeAlias = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed"]
ToolKind: TypeAlias = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]


# --- initialize -----------------------------------------------------------------------


class FsCapabilities(Wire, frozen=True):
    """Which `fs/*` methods the client offers."""

    read_text_file: bool = False
    write_text_file: bool = False


class ClientSessionCapabilities(Wire, frozen=True):
    """The client's session extensions: `notices` (`{}`) when it takes `notice` updates."""

    notices: Json = None


class ClientCapabilities(Wire, frozen=True):
    """What the client offers the agent (an omitted capability is not offered)."""

    fs: FsCapabilities = msgspec.field(default_factory=FsCapabilities)
    terminal: bool = False
    session: ClientSessionCapabilities | None = None


class InitializeParams(Wire, frozen=True):
    protocol_version: int
    client_capabilities: ClientCapabilities = msgspec.field(default_factory=ClientCapabilities)


class PromptCapabilities(Wire, frozen=True):
    image: bool = False
    audio: bool = False
    embedded_context: bool = False


class McpCapabilities(Wire, frozen=True):
    http: bool = False
    sse: bool = False


class Empty(Wire, frozen=True):
    """`{}`: a capability offered with nothing more to say, or an empty answer."""


class SessionCapabilities(Wire, frozen=True):
    close: Empty | None = None


class AgentCapabilities(Wire, frozen=True):
    load_session: bool = False
    prompt_capabilities: PromptCapabilities = msgspec.field(default_factory=PromptCapabilities)
    mcp_capabilities: McpCapabilities = msgspec.field(default_factory=McpCapabilities)
    session_capabilities: SessionCapabilities = msgspec.field(default_factory=SessionCapabilities)


class AgentInfo(Wire, frozen=True):
    name: str
    title: str
    version: str


class InitializeResult(Wire, frozen=True, omit_defaults=False):
    protocol_version: int
    agent_capabilities: AgentCapabilities
    agent_info: AgentInfo
    auth_methods: list[Json]


# --- sessions -------------------------------------------------------------------------


class NewSessionParams(Wire, frozen=True):
    cwd: str
    mcp_servers: list[Json] = []


class NewSessionResult(Wire, frozen=True):
    session_id: str


class LoadSessionParams(Wire, frozen=True):
    session_id: str
    cwd: str
    mcp_servers: list[Json] = []


class LoadSessionResult(Wire, frozen=True):
    pass


class PromptParams(Wire, frozen=True):
    session_id: str
    prompt: list[Json]
    """Content blocks, read one by one (`_serve.prompt_content`): an unknown one is skipped."""


class PromptResult(Wire, frozen=True):
    stop_reason: StopReason


class CancelParams(Wire, frozen=True):
    """`session/cancel`'s params, and `session/close`'s."""

    session_id: str


# --- content ----------------------------------------------------------------------------


class _Block(Wire, frozen=True, tag_field="type"):
    pass


class TextBlock(_Block, frozen=True, tag="text"):
    text: str


class ImageBlock(_Block, frozen=True, tag="image"):
    mime_type: str
    data: str


class _ToolContent(Wire, frozen=True, tag_field="type"):
    pass


class Content(_ToolContent, frozen=True, tag="content"):
    """A content block shown in a tool call."""

    content: TextBlock | ImageBlock


class DiffContent(_ToolContent, frozen=True, tag="diff"):
    """A change to a file, as its old and new text (`old_text` None: a new file)."""

    path: str
    new_text: str
    old_text: str | None = None


ToolCallContent: TypeAlias = Content | DiffContent


class Location(Wire, frozen=True):
    path: str
    line: int | None = None


# --- session/update ---------------------------------------------------------------------


class _Update(Wire, frozen=True, tag_field="sessionUpdate"):
    pass


class UserMessageChunk(_Update, frozen=True, tag="user_message_chunk"):
    content: TextBlock | ImageBlock


class AgentMessageChunk(_Update, frozen=True, tag="agent_message_chunk"):
    content: TextBlock


class ToolCallStart(_Update, frozen=True, tag="tool_call"):
    tool_call_id: str
    title: str
    kind: ToolKind
    status: ToolCallStatus
    content: list[ToolCallContent] = []
    locations: list[Location] = []
    raw_input: Json = None
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")
    """`{"bingo": {"notice": {source, level}}}` on a notice shown as a call (ADR-0037)."""


class NoticeUpdate(_Update, frozen=True, tag="notice"):
    """A notice for the person, apart from the conversation (ACP v1, to a client that takes
    them: `clientCapabilities.session.notices`)."""

    severity: Literal["info", "warning", "error"]
    title: str
    description: str | None = None


class ToolCallUpdate(_Update, frozen=True, tag="tool_call_update"):
    """Only what changed: every field but the id is left out when None."""

    tool_call_id: str
    status: ToolCallStatus | None = None
    title: str | None = None
    content: list[ToolCallContent] | None = None


class AvailableCommandInput(Wire, frozen=True):
    hint: str


class AvailableCommand(Wire, frozen=True):
    name: str
    description: str
    input: AvailableCommandInput | None = None


class AvailableCommandsUpdate(_Update, frozen=True, tag="available_commands_update"):
    available_commands: list[AvailableCommand]


Update: TypeAlias = (
    UserMessageChunk | AgentMessageChunk | ToolCallStart | ToolCallUpdate | AvailableCommandsUpdate | NoticeUpdate
)


class SessionNotification(Wire, frozen=True):
    session_id: str
    update: Update


# --- what bingo asks of the client ------------------------------------------------------


class PermissionOption(Wire, frozen=True):
    option_id: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionToolCall(Wire, frozen=True):
    tool_call_id: str
    title: str | None = None
    content: list[ToolCallContent] | None = None


class PermissionParams(Wire, frozen=True):
    session_id: str
    tool_call: PermissionToolCall
    options: list[PermissionOption]


class PermissionOutcome(Wire, frozen=True):
    outcome: str
    """`selected` (then `option_id` says which) or `cancelled`."""
    option_id: str | None = None


class PermissionResult(Wire, frozen=True):
    outcome: PermissionOutcome


class ReadTextFileParams(Wire, frozen=True):
    session_id: str
    path: str


class ReadTextFileResult(Wire, frozen=True):
    content: str


class WriteTextFileParams(Wire, frozen=True, omit_defaults=False):
    session_id: str
    path: str
    content: str
