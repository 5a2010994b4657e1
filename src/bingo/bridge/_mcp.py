"""The MCP adapter: a Model Context Protocol server behind the one Link every proxy holds.

Owns the translation between MCP (revisions 2026-07-28, 2025-11-25 and 2025-06-18, stdio
or Streamable HTTP) and bingo's own wire, at the connection: `McpConnection` is a `Connection` whose
`call` and `notify` take bingo's methods (`tool/call`, `command/run`, `command/complete`,
`tool/cancel`) and speak MCP's (`tools/call`, `prompts/get`, `completion/complete`,
`notifications/cancelled`), answering in the kernel's own types. So the proxies
(`BridgedTool`, `BridgedCommand`) and the kernel never learn that a plugin speaks MCP: one
representation of each contract (ADR-0022).

Its answer to bingo's `initialize` is MCP's `initialize` + `notifications/initialized` +
`tools/list` (+ `prompts/list`), read as bingo's `InitializeResult`: tools keep their names
(the proxy makes them `plugin__<name>__<tool>` and gives them the default traits whatever
the server's annotations say), a prompt is the command `<name>:<prompt>`, and a server that
lists resources gets one tool more, `resources` (ADR-0022). `notifications/tools/list_changed`,
`prompts/list_changed` and `resources/list_changed` list again and hand the new declaration
to the plugin's handle.

From the server: `notifications/progress` is the call's live line (the progressToken sent is
the callId); `notifications/message` goes to the plugin's log; `elicitation/create` is put
to the person through the call running (no call, or nobody to ask: declined);
`sampling/createMessage` is refused in words; `ping` is answered. An interrupted call sends
`notifications/cancelled` and ends as cancelled at once: an MCP server does not answer a
request it was told to cancel (INTERFACE.md §6), and its late answer, if any, is dropped.

Revisions: `initialize` offers 2025-11-25 and takes 2025-06-18; a server that refuses the
handshake as one of the stateless revision does (-32022, or no `initialize` at all) is asked
`server/discover`, and from then on every request carries the revision and the client's
capabilities in `_meta`, and a call answered `input_required` has its questions answered
(an elicitation as above) and is asked again with the server's `requestState`. A server that
speaks both is spoken to with the handshake (no probe costs every other server a round trip).

It does not spawn, respawn or decide what a death costs (the plugin's handle does, as for
any plugin), nor reach the network (`_mcp_http.py` does, for Streamable HTTP).
"""

from __future__ import annotations

import asyncio
import json
import logging
import shlex
from collections.abc import Awaitable, Callable
from typing import Any, Final, Literal, TypeVar

import msgspec

from ..kernel.errors import BadParams, Cancelled, DeadlinePassed, GateError, MethodNotFound, PluginError, Refused
from ..kernel.log import cut
from ..wire import (
    PROTOCOL_VERSION,
    CommandArgs,
    CommandCompleteParams,
    CommandCompleteResult,
    CommandRunParams,
    CommandRunResult,
    CommandSpec,
    Completion,
    ErrorOutcome,
    ImagePart,
    InitializeParams,
    InitializeResult,
    Json,
    Part,
    PromptOutcome,
    TextPart,
    ToolCallParams,
    ToolCallResult,
    ToolCancelParams,
    ToolOutput,
    ToolSpec,
    Wire,
    is_array,
    is_object,
)
from ..wire.rpc import RequestId
from ._link import Calls
from .connection import Connection, decode_answer

__all__ = [
    "HANDSHAKE_REVISIONS",
    "MCP_REVISIONS",
    "MODERN",
    "RESOURCES_TOOL",
    "McpConnection",
]

_log = logging.getLogger(__name__)

R = TypeVar("R")

MODERN: Final = "2026-07-28"
"""The stateless revision: no handshake, `server/discover`, the revision and the client's
capabilities in every request's `_meta`, server requests folded into `input_required`
results."""
HANDSHAKE_REVISIONS: Final = ("2025-11-25", "2025-06-18")
"""The revisions with an `initialize` handshake bingo speaks: it offers the first, and takes
a server's counter-offer of either."""
MCP_REVISIONS: Final = (MODERN, *HANDSHAKE_REVISIONS)
"""Every MCP revision bingo speaks, newest first."""
_ROUNDS_MAX: Final = 10
"""Times one call may answer `input_required` (the stateless revision's questions) before
bingo gives up on it."""
_UNSUPPORTED: Final = -32022
"""MCP's error code for a revision the server does not speak."""
RESOURCES_TOOL: Final = "resources"
"""The one tool a server with resources gets: list them, or read one by its uri."""
_PAGES_MAX: Final = 50
"""Pages of a paginated list read at most: a server whose cursor never ends is cut there."""
_PARTS_MAX: Final = 1000
"""Content items of one result kept; the rest are said as a count."""

_RESOURCES_SCHEMA: Final[dict[str, Json]] = {
    "type": "object",
    "properties": {
        "uri": {
            "type": "string",
            "description": "The resource to read; leave it out to list the resources there are.",
        }
    },
}


# --- MCP's own messages (what bingo reads of them; unknown fields are ignored) ---------


class _Tool(Wire, frozen=True):
    name: str
    description: str | None = None
    input_schema: dict[str, Json] = msgspec.field(default_factory=lambda: {"type": "object"})


class _ToolsPage(Wire, frozen=True):
    tools: list[_Tool] = []
    next_cursor: str | None = None


class _PromptArgument(Wire, frozen=True):
    name: str
    description: str | None = None
    required: bool = False


class _Prompt(Wire, frozen=True):
    name: str
    description: str | None = None
    arguments: list[_PromptArgument] = []


class _PromptsPage(Wire, frozen=True):
    prompts: list[_Prompt] = []
    next_cursor: str | None = None


class _ServerInfo(Wire, frozen=True):
    name: str = ""
    version: str = ""


class _Initialized(Wire, frozen=True):
    protocol_version: str
    capabilities: dict[str, Json] = {}
    server_info: _ServerInfo = msgspec.field(default_factory=_ServerInfo)


class _ClientInfo(Wire, frozen=True):
    name: str
    version: str


class _Initialize(Wire, frozen=True):
    protocol_version: str
    capabilities: dict[str, Json]
    client_info: _ClientInfo


class _Request(Wire, frozen=True):
    """A request's params. Each has `meta` (`_meta`), last: the progressToken and, in the
    stateless revision, the revision and the client's capabilities on every request."""


class _Discover(_Request, frozen=True):
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _Cursor(_Request, frozen=True):
    cursor: str | None = None
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _CallTool(_Request, frozen=True):
    name: str
    arguments: Json
    input_responses: dict[str, Json] | None = None
    request_state: str | None = None
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _CallResult(Wire, frozen=True):
    content: list[dict[str, Json]] = []
    structured_content: Json = None
    is_error: bool = False
    result_type: str = "complete"
    input_requests: dict[str, dict[str, Json]] | None = None
    request_state: str | None = None


class _Discovered(Wire, frozen=True):
    supported_versions: list[str] = []
    capabilities: dict[str, Json] = {}
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _GetPrompt(_Request, frozen=True):
    name: str
    arguments: dict[str, str] = {}
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _PromptMessage(Wire, frozen=True):
    role: str = "user"
    content: dict[str, Json] = {}


class _PromptResult(Wire, frozen=True):
    messages: list[_PromptMessage] = []


class _Ref(Wire, frozen=True):
    type: str
    name: str


class _Argument(Wire, frozen=True):
    name: str
    value: str


class _Complete(_Request, frozen=True):
    ref: _Ref
    argument: _Argument
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _Values(Wire, frozen=True):
    values: list[str] = []


class _CompleteResult(Wire, frozen=True):
    completion: _Values = msgspec.field(default_factory=_Values)


class _Cancel(Wire, frozen=True):
    request_id: RequestId
    reason: str


class _Progress(Wire, frozen=True):
    progress_token: str | int
    progress: float = 0
    total: float | None = None
    message: str | None = None


class _LogMessage(Wire, frozen=True):
    level: str = "info"
    logger: str | None = None
    data: Json = None


class _Elicit(Wire, frozen=True):
    message: str = ""
    requested_schema: dict[str, Json] = {}


class _Elicited(Wire, frozen=True):
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Json] | None = None


class _ReadResource(_Request, frozen=True):
    uri: str
    meta: dict[str, Json] | None = msgspec.field(default=None, name="_meta")


class _Empty(Wire, frozen=True):
    pass




_ANY: msgspec.json.Decoder[Any] = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def _object(value: Json) -> dict[str, Json]:
    return value if is_object(value) else {}


# --- results in the kernel's own types --------------------------------------------------


def _part(item: dict[str, Json]) -> Part:
    """One MCP content item as a Part: text and images cross as they are; audio, a
    resource link and an embedded resource as the text that says what they are."""
    kind = item.get("type")
    if kind == "text":
        return TextPart(text=str(item.get("text", "")))
    if kind == "image":
        return ImagePart(media_type=str(item.get("mimeType", "image/png")), data=str(item.get("data", "")))
    if kind == "resource":
        resource = _object(item.get("resource"))
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


def tool_output(result: _CallResult) -> ToolOutput:
    """An MCP tool result as the kernel's ToolOutput: its content as parts (structured
    content as JSON text when there is no other), `isError` as it is."""
    parts = [_part(item) for item in result.content[:_PARTS_MAX]]
    if len(result.content) > _PARTS_MAX:
        parts.append(TextPart(text=f"[{len(result.content) - _PARTS_MAX} more content items, not shown]"))
    if not parts and result.structured_content is not None:
        parts.append(TextPart(text=json.dumps(result.structured_content, ensure_ascii=False)))
    return ToolOutput(parts=parts, is_error=result.is_error)


def _prompt_text(result: _PromptResult) -> str:
    """A prompt's messages as the one text the person's turn submits."""
    texts: list[str] = []
    for message in result.messages:
        part = _part(message.content)
        if isinstance(part, TextPart):
            texts.append(part.text)
    return "\n\n".join(texts)


def _arguments(prompt: _Prompt, args: str) -> dict[str, str] | str:
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


def _command(plugin: str, prompt: _Prompt) -> CommandSpec:
    hint = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)
    return CommandSpec(
        name=f"{plugin}:{prompt.name}",
        hint=prompt.description or f"the {prompt.name} prompt of {plugin}",
        args=CommandArgs(kind="free", hint=hint or None) if prompt.arguments else CommandArgs(),
        family="plugin",
    )


# --- the connection --------------------------------------------------------------------


Changed = Callable[[InitializeResult], Awaitable[None]]
"""Told what the server declares after it said its tools or prompts changed."""


class McpConnection(Connection):
    """A Connection to an MCP server that proxies call with bingo's own methods.

    `calls` is the plugin's book of running calls (progress and elicitation find their call
    there); `log` takes the server's log messages; `on_changed` is told the declaration a
    list_changed notification led to."""

    def __init__(
        self,
        *args: Any,
        plugin: str,
        calls: Calls,
        log: Callable[[str], None],
        on_changed: Changed | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.plugin = plugin
        self.revision: str | None = None
        self.server = _ServerInfo()
        self.capabilities: dict[str, Json] = {}
        self._calls = calls
        self._log_line = log
        self._on_changed = on_changed
        self._prompts: dict[str, _Prompt] = {}
        self._tools: set[str] = set()
        self._naming: str | None = None
        self._modern: dict[str, Json] = {}
        """The `_meta` every request carries in the stateless revision."""
        self._call_ids: dict[str, RequestId] = {}
        """The request id of each running `tools/call`, by callId (for the cancel)."""
        self.on_notification("notifications/progress", _Progress, self._progress)
        self.on_notification("notifications/message", _LogMessage, self._message)
        self.on_notification("notifications/tools/list_changed", object, self._changed)
        self.on_notification("notifications/prompts/list_changed", object, self._changed)
        self.on_notification("notifications/resources/list_changed", object, self._changed)
        self.on_request("ping", object, self._ping)
        self.on_request("elicitation/create", _Elicit, self._elicit)
        self.on_request("sampling/createMessage", object, self._sampling)

    # --- bingo's methods, in MCP ---------------------------------------------------

    def _next_id(self) -> int:
        request_id = super()._next_id()
        if self._naming is not None:
            self._call_ids[self._naming] = request_id
            self._naming = None
        return request_id

    async def call(
        self,
        method: str,
        params: Wire,
        result: type[R],
        *,
        deadline: float | None | msgspec.UnsetType = msgspec.UNSET,
    ) -> R:
        if isinstance(deadline, msgspec.UnsetType):
            deadline = self.deadline(method)  # bingo's method names the deadline, as for any plugin
        try:
            if isinstance(params, InitializeParams) and method == "initialize":
                answer: Wire = await self._initialize(params.env.host_version)
            elif isinstance(params, ToolCallParams) and method == "tool/call":
                answer = ToolCallResult(output=await self._tool(params, deadline))
            elif isinstance(params, CommandRunParams) and method == "command/run":
                answer = CommandRunResult(outcome=await self._prompt(params, deadline))
            elif isinstance(params, CommandCompleteParams) and method == "command/complete":
                answer = CommandCompleteResult(completions=await self._complete(params, deadline))
            else:
                # Nothing declares another kind for an MCP server: no proxy can ask for one.
                raise MethodNotFound(f"{self.name} is an MCP server: it has no {method}")
        except DeadlinePassed as exc:
            # Said in bingo's method, the name its deadline has in settings.
            raise DeadlinePassed(f"{self.name} did not answer {method} within {deadline:g} s", exc.hint) from None
        return decode_answer(self.name, method, msgspec.Raw(_encoder.encode(answer)), result)

    async def request(
        self,
        method: str,
        params: Wire,
        result: type[R],
        *,
        deadline: float | None | msgspec.UnsetType = msgspec.UNSET,
    ) -> R:
        """An MCP request as MCP has it (`initialize`, `tools/list`, ...); in the stateless
        revision its `_meta` carries the revision and the client's capabilities."""
        if self.revision == MODERN and isinstance(params, _Request):
            before: dict[str, Json] | None = getattr(params, "meta", None)
            params = msgspec.structs.replace(params, meta={**(before or {}), **self._modern})
        return await super().call(method, params, result, deadline=deadline)

    def notify(self, method: str, params: Wire) -> None:
        if isinstance(params, ToolCancelParams) and method == "tool/cancel":
            self._cancel(params.call_id)
            return
        super().notify(method, params)

    async def _tool(self, params: ToolCallParams, deadline: float | None) -> ToolOutput:
        if params.name == RESOURCES_TOOL and RESOURCES_TOOL not in self._tools:
            return await self._resources(params, deadline)
        arguments = params.input if is_object(params.input) else {}
        responses: dict[str, Json] | None = None
        state: str | None = None
        for _ in range(_ROUNDS_MAX):
            request = _CallTool(name=params.name, arguments=arguments, meta={"progressToken": params.call_id}, input_responses=responses, request_state=state)
            answer = await self._call_tool(request, params.call_id, deadline)
            if answer.result_type != "input_required":
                return tool_output(answer)
            # The stateless revision's questions come back as a result: answer, ask again.
            found = await self._inputs(answer.input_requests or {})
            if isinstance(found, str):
                return ToolOutput(parts=[TextPart(text=found)], is_error=True)
            responses, state = found, answer.request_state
        return ToolOutput(parts=[TextPart(text=f"{self.name} asked for input more than {_ROUNDS_MAX} times in one call; bingo gave up on it")], is_error=True)

    async def _inputs(self, requests: dict[str, dict[str, Json]]) -> dict[str, Json] | str:
        """The answers to a stateless server's `inputRequests`, or why there are none."""
        answers: dict[str, Json] = {}
        for key, asked in requests.items():
            method = asked.get("method")
            if method == "elicitation/create":
                try:
                    question = msgspec.convert(asked.get("params") or {}, _Elicit)
                except msgspec.ValidationError:
                    question = _Elicit()
                answers[key] = msgspec.to_builtins(await self._elicit(question))
            elif method == "roots/list":
                answers[key] = {"roots": []}
            else:
                return f"{self.name} asked for {cut(str(method), 60)}, which bingo does not give an MCP server"
        return answers

    async def _call_tool(self, request: _CallTool, call_id: str, deadline: float | None) -> _CallResult:
        """One `tools/call`, its request id filed for a cancel."""
        params = request
        # `_next_id` files the id the request is sent under: `call` takes it before it first
        # waits, so no other request can come between.
        self._naming = call_id
        try:
            return await self.request("tools/call", params, _CallResult, deadline=deadline)
        except DeadlinePassed:
            # The host stops waiting, so the server is told to stop working (as MCP asks).
            self._tell_cancelled(self._call_ids.get(call_id), "the call passed its deadline")
            raise
        finally:
            self._naming = None
            self._call_ids.pop(call_id, None)

    def _tell_cancelled(self, request_id: RequestId | None, reason: str) -> bool:
        """Send `notifications/cancelled` for `request_id`; False when it cannot be sent."""
        if request_id is None:
            return False
        try:
            super().notify("notifications/cancelled", _Cancel(request_id=request_id, reason=reason))
        except PluginError:
            return False  # the stream has ended: the pending call is failing with that error already
        return True

    def _cancel(self, call_id: str) -> None:
        request_id = self._call_ids.pop(call_id, None)
        if request_id is None or not self._tell_cancelled(request_id, "the person interrupted the turn"):
            return
        future = self._pending.pop(request_id, None)
        if future is not None and not future.done():
            # A server does not answer a cancelled request: the call ends now, and a late
            # answer is dropped as any abandoned call's is.
            self._abandon(request_id)
            future.set_exception(Cancelled(f"{self.name} was told to cancel the call: the turn was interrupted"))

    async def _resources(self, params: ToolCallParams, deadline: float | None) -> ToolOutput:
        uri = _object(params.input).get("uri")
        if isinstance(uri, str) and uri:
            raw = await self.request("resources/read", _ReadResource(uri=uri), msgspec.Raw, deadline=deadline)
            contents = _object(_ANY.decode(raw)).get("contents")
            items: list[Json] = contents if is_array(contents) else []
            parts = [_part({"type": "resource", "resource": item}) for item in items[:_PARTS_MAX] if is_object(item)]
            return ToolOutput(parts=parts or [TextPart(text=f"{uri} has no contents")])
        lines: list[str] = []
        cursor: str | None = None
        for _ in range(_PAGES_MAX):
            raw = await self.request("resources/list", _Cursor(cursor=cursor), msgspec.Raw, deadline=deadline)
            page = _object(_ANY.decode(raw))
            listed = page.get("resources")
            for item in listed if is_array(listed) else []:
                if is_object(item):
                    about = item.get("description") or item.get("name") or ""
                    lines.append(f"{item.get('uri', '')}  {item.get('mimeType', '')}  {about}".rstrip())
            after = page.get("nextCursor")
            if not isinstance(after, str) or not after:
                break
            cursor = after
        return ToolOutput(parts=[TextPart(text="\n".join(lines) if lines else "no resources")])

    async def _prompt(self, params: CommandRunParams, deadline: float | None) -> ErrorOutcome | PromptOutcome:
        own = params.name.partition(":")[2]
        prompt = self._prompts.get(own)
        if prompt is None:
            return ErrorOutcome(message=f"{self.name} has no prompt {own!r} now")
        arguments = _arguments(prompt, params.args)
        if isinstance(arguments, str):
            return ErrorOutcome(message=arguments.replace("{name}", params.name))
        answer = await self.request("prompts/get", _GetPrompt(name=own, arguments=arguments), _PromptResult, deadline=deadline)
        text = _prompt_text(answer)
        if not text.strip():
            return ErrorOutcome(message=f"prompt {own} of {self.name} gave no text to submit")
        return PromptOutcome(text=text)

    async def _complete(self, params: CommandCompleteParams, deadline: float | None) -> list[Completion]:
        if "completions" not in self.capabilities:
            raise MethodNotFound(f"{self.name} offers no completion")
        own = params.name.partition(":")[2]
        prompt = self._prompts.get(own)
        if prompt is None or not prompt.arguments:
            return []
        words = params.partial.split(" ")
        done, current = words[:-1], words[-1]
        index = min(len(done), len(prompt.arguments) - 1)
        argument = prompt.arguments[index].name
        request = _Complete(ref=_Ref(type="ref/prompt", name=own), argument=_Argument(name=argument, value=current))
        answer = await self.request("completion/complete", request, _CompleteResult, deadline=deadline)
        before = " ".join(done)
        return [Completion(value=f"{before} {value}" if before else value) for value in answer.completion.values[:100]]

    async def _initialize(self, host_version: str) -> InitializeResult:
        """MCP's `initialize`, then `notifications/initialized` and the lists: the server's
        declaration as bingo's handshake answer (so `handshake.py` reads it as any other).

        Raises:
            Refused: it speaks no MCP revision bingo speaks.
            PluginError: a call failed (DeadlinePassed, ConnectionClosed, an error answered).
        """
        request = _Initialize(
            protocol_version=HANDSHAKE_REVISIONS[0],
            # Elicitation in form mode (the empty object, as both revisions read it); no
            # sampling and no roots: a server is given neither the model nor the file system.
            capabilities={"elicitation": {}},
            client_info=_ClientInfo(name="bingo", version=host_version),
        )
        try:
            answer = await self.request("initialize", request, _Initialized)
        except PluginError as exc:
            if exc.code in (_UNSUPPORTED, MethodNotFound.code):
                return await self.discover(host_version)  # a server of the stateless revision
            raise
        if answer.protocol_version not in HANDSHAKE_REVISIONS:
            raise Refused(
                f"it speaks MCP revision {cut(answer.protocol_version, 40)}, but bingo speaks only "
                f"{', '.join(MCP_REVISIONS)}"
            )
        self.revision = answer.protocol_version
        self.server = answer.server_info
        self.capabilities = answer.capabilities
        self.notify("notifications/initialized", _Empty())
        return await self.declaration()

    async def discover(self, host_version: str) -> InitializeResult:
        """The stateless revision's `server/discover`, then the lists, as bingo's handshake
        answer.

        Raises:
            Refused: it speaks no MCP revision bingo speaks.
            PluginError: a call failed.
        """
        self.revision = MODERN
        self._modern = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "bingo", "version": host_version},
        }
        found = await self.request("server/discover", _Discover(), _Discovered)
        if MODERN not in found.supported_versions:
            self.revision = None
            spoken = ", ".join(cut(version, 40) for version in found.supported_versions[:5]) or "none"
            raise Refused(f"it speaks MCP revisions {spoken}, but bingo speaks only {', '.join(MCP_REVISIONS)}")
        self.capabilities = found.capabilities
        about = _object(_object(found.meta).get("io.modelcontextprotocol/serverInfo"))
        self.server = _ServerInfo(name=str(about.get("name", "")), version=str(about.get("version", "")))
        return await self.declaration()

    async def declaration(self) -> InitializeResult:
        """What the server declares now, as bingo's InitializeResult (it lists again)."""
        caps = self.capabilities

        async def none() -> list[Any]:
            return []

        async def no() -> bool:
            return False

        # The three lists at once: one round trip's wait, not three.
        tools, prompts, resources = await asyncio.gather(
            self._pages("tools/list", _ToolsPage, "tools") if "tools" in caps else none(),
            self._pages("prompts/list", _PromptsPage, "prompts") if "prompts" in caps else none(),
            self._has_resources() if "resources" in caps else no(),
        )
        specs = [ToolSpec(name=tool.name, description=tool.description or "", input_schema=tool.input_schema) for tool in tools]
        self._tools = {tool.name for tool in tools}
        if resources and RESOURCES_TOOL not in self._tools:
            specs.append(
                ToolSpec(
                    name=RESOURCES_TOOL,
                    description=f"Lists the resources MCP server {self.plugin} offers, or reads one by its uri.",
                    input_schema=_RESOURCES_SCHEMA,
                )
            )
        self._prompts = {prompt.name: prompt for prompt in prompts}
        return InitializeResult(
            protocol=PROTOCOL_VERSION,
            name=self.plugin,
            version=self.server.version,
            tools=specs,
            commands=[_command(self.plugin, prompt) for prompt in prompts],
        )

    async def _has_resources(self) -> bool:
        """Whether the server lists any resource (a capability alone is often just a
        library's default)."""
        try:
            raw = await self.request("resources/list", _Cursor(), msgspec.Raw, deadline=self.deadline("initialize"))
        except (MethodNotFound, BadParams):
            return False  # it declares resources and has none to list: no tool for them
        listed = _object(_ANY.decode(raw)).get("resources")
        return is_array(listed) and bool(listed)

    async def _pages(self, method: str, page: type[_ToolsPage | _PromptsPage], field: str) -> list[Any]:
        found: list[Any] = []
        cursor: str | None = None
        for _ in range(_PAGES_MAX):
            answer = await self.request(method, _Cursor(cursor=cursor), page, deadline=self.deadline("initialize"))
            found.extend(getattr(answer, field))
            cursor = answer.next_cursor
            if not cursor:
                break
        return found

    # --- what the server sends -----------------------------------------------------

    def _progress(self, params: _Progress) -> None:
        token = params.progress_token
        if params.message:
            tail = params.message
        elif params.total:
            tail = f"{params.progress:g}/{params.total:g}"
        else:
            tail = f"{params.progress:g}"
        self._calls.progress(str(token), tail)

    def _message(self, params: _LogMessage) -> None:
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, ensure_ascii=False)
        source = f" {params.logger}" if params.logger else ""
        self._log_line(f"server log [{params.level}]{source}: {cut(data)}")

    def _changed(self, _params: object) -> None:
        if self._on_changed is not None:
            self._spawn(self._relist())

    async def _relist(self) -> None:
        try:
            info = await self.declaration()
        except PluginError as exc:
            _log.info("%s: listing again after list_changed failed: %s", self.name, exc.message)
            return
        if self._on_changed is not None:
            await self._on_changed(info)

    async def _ping(self, _params: object) -> _Empty:
        return _Empty()

    async def _elicit(self, params: _Elicit) -> _Elicited:
        """Put the server's question to the person, one field at a time, through the call
        running now; declined when none is, or when nobody can be asked."""
        running = list(self._calls.tools.values())
        if not running:
            return _Elicited(action="decline")
        call = running[-1]
        properties = _object(params.requested_schema.get("properties"))
        content: dict[str, Json] = {}
        try:
            for name, schema in properties.items():
                field = _object(schema)
                title = str(field.get("title") or field.get("description") or name)
                kind = field.get("type")
                choices: list[str] | None = None
                options = field.get("enum")
                if is_array(options):
                    choices = [str(option) for option in options]
                elif kind == "boolean":
                    choices = ["yes", "no"]
                question = f"{params.message}\n{title}" if params.message else title
                answer = await call.ask(question, choices)
                if kind == "boolean":
                    content[name] = answer.strip().lower() in ("yes", "y", "true")
                elif kind in ("number", "integer"):
                    try:
                        content[name] = int(answer) if kind == "integer" else float(answer)
                    except ValueError:
                        return _Elicited(action="decline")
                else:
                    content[name] = answer
        except GateError:
            return _Elicited(action="decline")
        if not properties:
            return _Elicited(action="decline")
        return _Elicited(action="accept", content=content)

    async def _sampling(self, _params: object) -> _Empty:
        raise Refused(
            f"bingo does not let MCP server {self.plugin} use the model (sampling/createMessage): "
            "a server's request for a completion is refused"
        )
