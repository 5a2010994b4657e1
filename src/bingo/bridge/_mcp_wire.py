"""MCP's own messages, as far as bingo reads them, and their translation into the kernel's
types: the msgspec Structs of the requests bingo sends and the answers it reads (unknown
fields ignored, so newer servers work), a tool result as a ToolOutput, a prompt's messages
as the person's text, a command's words as a prompt's arguments, and a prompt as a
CommandSpec. It holds no connection and sends nothing (`_mcp.py` does).
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Final, Literal

import msgspec

from ..kernel.log import cut
from ..wire import CommandArgs, CommandSpec, ImagePart, Json, Part, TextPart, ToolOutput, Wire, is_object
from ..wire.rpc import RequestId

__all__ = [
    "ANY_JSON",
    "McpArgument",
    "McpCallResult",
    "McpCallTool",
    "McpCancel",
    "McpClientInfo",
    "McpComplete",
    "McpCompleteResult",
    "McpCursor",
    "McpDiscover",
    "McpDiscovered",
    "McpElicit",
    "McpElicited",
    "McpEmpty",
    "McpGetPrompt",
    "McpInitialize",
    "McpInitialized",
    "McpLogMessage",
    "McpProgress",
    "McpPrompt",
    "McpPromptArgument",
    "McpPromptMessage",
    "McpPromptResult",
    "McpPromptsPage",
    "McpReadResource",
    "McpSample",
    "McpSampleMessage",
    "McpSampled",
    "McpRef",
    "McpRequest",
    "McpServerInfo",
    "McpTool",
    "McpToolsPage",
    "McpValues",
    "PARTS_MAX",
    "json_object",
    "mcp_part",
    "prompt_arguments",
    "prompt_command",
    "prompt_text",
    "tool_output",
]

PARTS_MAX: Final = 1000
"""Content items of one result kept; the rest are said as a count."""


# --- MCP's own messages (what bingo reads of them; unknown fields are ignored) ---------


class McpTool(Wire, frozen=True):
    name: str
    description: str | None = None
    input_schema: dict[str, Json] = msgspec.field(default_factory=lambda: {"type": "object"})


class McpToolsPage(Wire, frozen=True):
    tools: list[McpTool] = []
    next_cursor: str | None = None


class McpPromptArgument(Wire, frozen=True):
    name: str
    description: str | None = None
    required: bool = False


class McpPrompt(Wire, frozen=True):
    name: str
    description: str | None = None
    arguments: list[McpPromptArgument] = []


class McpPromptsPage(Wire, frozen=True):
    prompts: list[McpPrompt] = []
    next_cursor: str | None = None


class McpServerInfo(Wire, frozen=True):
    name: str = ""
    version: str = ""


class McpInitialized(Wire, frozen=True):
    protocol_version: str
    capabilities: dict[str, Json] = {}
    server_info: McpServerInfo = msgspec.field(default_factory=McpServerInfo)


class McpClientInfo(Wire, frozen=True):
    name: str
    version: str


class McpInitialize(Wire, frozen=True):
    protocol_version: str
    capabilities: dict[str, Json]
    client_info: McpClientInfo


class McpRequest(Wire, frozen=True):
    """A request's params. Each has `meta` (`_meta`), last: the progressToken and, in the
    stateless revision, the revision and the client's capabilities on every request."""


class McpDiscover(McpRequest, frozen=True):
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpCursor(McpRequest, frozen=True):
    cursor: str | None = None
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpCallTool(McpRequest, frozen=True):
    name: str
    arguments: Json
    input_responses: dict[str, Json] | None = None
    request_state: str | None = None
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpCallResult(Wire, frozen=True):
    content: list[dict[str, Json]] = []
    structured_content: Json = None
    is_error: bool = False
    result_type: str = "complete"
    input_requests: dict[str, dict[str, Json]] | None = None
    request_state: str | None = None


class McpDiscovered(Wire, frozen=True):
    supported_versions: list[str] = []
    capabilities: dict[str, Json] = {}
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpGetPrompt(McpRequest, frozen=True):
    name: str
    arguments: dict[str, str] = {}
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpPromptMessage(Wire, frozen=True):
    role: str = "user"
    content: dict[str, Json] = {}


class McpPromptResult(Wire, frozen=True):
    messages: list[McpPromptMessage] = []


class McpRef(Wire, frozen=True):
    type: str
    name: str


class McpArgument(Wire, frozen=True):
    name: str
    value: str


class McpComplete(McpRequest, frozen=True):
    ref: McpRef
    argument: McpArgument
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpValues(Wire, frozen=True):
    values: list[str] = []


class McpCompleteResult(Wire, frozen=True):
    completion: McpValues = msgspec.field(default_factory=McpValues)


class McpCancel(Wire, frozen=True):
    request_id: RequestId
    reason: str


class McpProgress(Wire, frozen=True):
    progress_token: str | int
    progress: float = 0
    total: float | None = None
    message: str | None = None


class McpLogMessage(Wire, frozen=True):
    level: str = "info"
    logger: str | None = None
    data: Json = None


class McpSampleMessage(Wire, frozen=True):
    role: Literal["user", "assistant"] = "user"
    content: Json = None


class McpSample(Wire, frozen=True):
    """`sampling/createMessage`'s params, as far as bingo reads them."""

    messages: list[McpSampleMessage] = []
    system_prompt: str | None = None
    max_tokens: int | None = None


class McpSampled(Wire, frozen=True):
    role: Literal["assistant"]
    content: dict[str, Json]
    model: str
    stop_reason: str


class McpElicit(Wire, frozen=True):
    message: str = ""
    requested_schema: dict[str, Json] = {}


class McpElicited(Wire, frozen=True):
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Json] | None = None


class McpReadResource(McpRequest, frozen=True):
    uri: str
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class McpEmpty(Wire, frozen=True):
    pass


ANY_JSON: msgspec.json.Decoder[Any] = msgspec.json.Decoder()


def json_object(value: Json) -> dict[str, Json]:
    return value if is_object(value) else {}


# --- results in the kernel's own types --------------------------------------------------


def mcp_part(item: dict[str, Json]) -> Part:
    """One MCP content item as a Part: text and images cross as they are; audio, a
    resource link and an embedded resource as the text that says what they are."""
    kind = item.get("type")
    if kind == "text":
        return TextPart(text=str(item.get("text", "")))
    if kind == "image":
        return ImagePart(media_type=str(item.get("mimeType", "image/png")), data=str(item.get("data", "")))
    if kind == "resource":
        resource = json_object(item.get("resource"))
        uri = str(resource.get("uri", ""))
        text = resource.get("text")
        if isinstance(text, str):
            return TextPart(text=f"[{uri}]\n{text}" if uri else text)
        return TextPart(text=f"[resource {uri}: {resource.get('mimeType', 'binary')}, not shown]")
    if kind == "resource_link":
        return TextPart(text=f"[resource {item.get('uri', '')}: {item.get('name', '')}]")
    if kind == "audio":
        return TextPart(text=f"[audio {item.get('mimeType', '')}, not shown]")
    return TextPart(text=f"[content of type {cut(str(kind), 40)}, not shown]")


def tool_output(result: McpCallResult) -> ToolOutput:
    """An MCP tool result as the kernel's ToolOutput: its content as parts (structured
    content as JSON text when there is no other), `isError` as it is."""
    parts = [mcp_part(item) for item in result.content[:PARTS_MAX]]
    if len(result.content) > PARTS_MAX:
        parts.append(TextPart(text=f"[{len(result.content) - PARTS_MAX} more content items, not shown]"))
    if not parts and result.structured_content is not None:
        parts.append(TextPart(text=json.dumps(result.structured_content, ensure_ascii=False)))
    return ToolOutput(parts=parts, is_error=result.is_error)


def prompt_text(result: McpPromptResult) -> str:
    """A prompt's messages as the one text the person's turn submits."""
    texts: list[str] = []
    for message in result.messages:
        part = mcp_part(message.content)
        if isinstance(part, TextPart):
            texts.append(part.text)
    return "\n\n".join(texts)


def prompt_arguments(prompt: McpPrompt, args: str) -> dict[str, str] | str:
    """A command's raw args as the prompt's arguments (`name=value` words, or words in the
    order the prompt lists its arguments, the last taking the rest), or the words saying
    what is missing."""
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    names = [argument.name for argument in prompt.arguments]
    found: dict[str, str] = {}
    loose: list[str] = []
    for word in words:
        key, sep, value = word.partition("=")
        if sep and key in names:
            found[key] = value
        else:
            loose.append(word)
    free = [name for name in names if name not in found]
    for index, name in enumerate(free):
        if not loose:
            break
        found[name] = " ".join(loose) if index == len(free) - 1 else loose.pop(0)
        if index == len(free) - 1:
            loose = []
    missing = [argument.name for argument in prompt.arguments if argument.required and argument.name not in found]
    if missing:
        usage = " ".join(f"<{name}>" for name in names)
        return f"missing {', '.join(missing)}: /{{name}} {usage}"
    return found


def prompt_command(plugin: str, prompt: McpPrompt) -> CommandSpec:
    hint = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
    return CommandSpec(
        name=f"{plugin}:{prompt.name}",
        hint=prompt.description or f"the {prompt.name} prompt of {plugin}",
        args=CommandArgs(kind="free", hint=hint or None) if prompt.arguments else CommandArgs(),
        family="plugin",
    )
