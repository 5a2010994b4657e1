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
to the plugin's handle: one listing at a time, and of the notices that arrive meanwhile one
more after it, however many they are (ADR-0028).

From the server: `notifications/progress` is the call's live line (the progressToken sent is
the callId); `notifications/message` goes to the plugin's log; `elicitation/create` is put
to the person through the call running (no call, or nobody to ask: declined);
`sampling/createMessage` is refused in words unless the person set
`plugins.<name>.sampling` (then the run's model answers it); `ping` is answered. An interrupted call sends
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
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import msgspec

from ..endpoint import Connection, decode_answer
from ..kernel.dispatch import ChooseModel
from ..kernel.errors import (
    BadParams,
    BingoError,
    Cancelled,
    DeadlinePassed,
    GateError,
    MethodNotFound,
    PluginError,
    Refused,
)
from ..kernel.log import cut
from ..wire import (
    PROTOCOL_VERSION,
    CommandCompleteParams,
    CommandCompleteResult,
    CommandRunParams,
    CommandRunResult,
    Completion,
    ErrorOutcome,
    InitializeParams,
    InitializeResult,
    Json,
    Message,
    ModelRequest,
    PromptOutcome,
    TextBlock,
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
from ._mcp_wire import (
    ANY_JSON,
    PARTS_MAX,
    McpArgument,
    McpCallResult,
    McpCallTool,
    McpCancel,
    McpClientInfo,
    McpComplete,
    McpCompleteResult,
    McpCursor,
    McpDiscover,
    McpDiscovered,
    McpElicit,
    McpElicited,
    McpEmpty,
    McpGetPrompt,
    McpInitialize,
    McpInitialized,
    McpLogMessage,
    McpProgress,
    McpPrompt,
    McpPromptResult,
    McpPromptsPage,
    McpReadResource,
    McpRef,
    McpRequest,
    McpSample,
    McpSampled,
    McpServerInfo,
    McpToolsPage,
    json_object,
    mcp_part,
    prompt_arguments,
    prompt_command,
    prompt_text,
    tool_output,
)
from ._names import asked_by

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

_RESOURCES_SCHEMA: Final[dict[str, Json]] = {
    "type": "object",
    "properties": {
        "uri": {
            "type": "string",
            "description": "The resource to read; leave it out to list the resources there are.",
        }
    },
}


_encoder = msgspec.json.Encoder()


def _said(content: Json) -> str:
    """The text of a sampling message's content (one item, or a list of them)."""
    items = content if is_array(content) else [content]
    return "\n".join(str(item.get("text", "")) for item in items if is_object(item) and item.get("type") == "text")


# --- the connection --------------------------------------------------------------------


Changed = Callable[[InitializeResult], Awaitable[None]]
"""Told what the server declares after it said its tools or prompts changed."""


class McpConnection(Connection):
    """A Connection to an MCP server that proxies call with bingo's own methods.

    `calls` is the plugin's book of running calls (progress and elicitation find their call
    there); `log` takes the server's log messages; `on_changed` is told the declaration a
    list_changed notification led to; `sample` chooses the run's model for a server the
    person lets sample it (`sampling/createMessage`), and is None otherwise."""

    def __init__(
        self,
        *args: Any,
        plugin: str,
        calls: Calls,
        log: Callable[[str], None],
        on_changed: Changed | None = None,
        sample: ChooseModel | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.plugin = plugin
        self.revision: str | None = None
        self.server = McpServerInfo()
        self.capabilities: dict[str, Json] = {}
        self._calls = calls
        self._log_line = log
        self._on_changed = on_changed
        self._sample = sample
        """The run's model, when the person lets this server sample it."""
        self._prompts: dict[str, McpPrompt] = {}
        self._tools: set[str] = set()
        self._naming: str | None = None
        self._modern: dict[str, Json] = {}
        """The `_meta` every request carries in the stateless revision."""
        self._call_ids: dict[str, RequestId] = {}
        """The request id of each running `tools/call`, by callId (for the cancel)."""
        self._relisting = False
        """A listing after list_changed is under way."""
        self._relist_again = False
        """A list_changed came while it was: one more listing follows it."""
        self.on_notification("notifications/progress", McpProgress, self._progress)
        self.on_notification("notifications/message", McpLogMessage, self._message)
        self.on_notification("notifications/tools/list_changed", object, self._changed)
        self.on_notification("notifications/prompts/list_changed", object, self._changed)
        self.on_notification("notifications/resources/list_changed", object, self._changed)
        self.on_request("ping", object, self._ping)
        self.on_request("elicitation/create", McpElicit, self._elicit)
        self.on_request("sampling/createMessage", McpSample, self._sampling)

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
        except DeadlinePassed:
            # Said in bingo's method, the name its deadline has in settings.
            raise DeadlinePassed(
                f"{self.name} did not answer {method} within {deadline:g} s",
                f"deadlines.{method} in settings sets how long to wait",
            ) from None
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
        if self.revision == MODERN and isinstance(params, McpRequest):
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
            request = McpCallTool(
                name=params.name,
                arguments=arguments,
                meta={"progressToken": params.call_id},
                input_responses=responses,
                request_state=state,
            )
            answer = await self._call_tool(request, params.call_id, deadline)
            if answer.result_type != "input_required":
                return tool_output(answer)
            # The stateless revision's questions come back as a result: answer, ask again.
            found = await self._inputs(answer.input_requests or {})
            if isinstance(found, str):
                return ToolOutput(parts=[TextPart(text=found)], is_error=True)
            responses, state = found, answer.request_state
        return ToolOutput(
            parts=[
                TextPart(
                    text=f"{self.name} asked for input more than {_ROUNDS_MAX} times in one call; bingo gave up on it"
                )
            ],
            is_error=True,
        )

    async def _inputs(self, requests: dict[str, dict[str, Json]]) -> dict[str, Json] | str:
        """The answers to a stateless server's `inputRequests`, or why there are none."""
        answers: dict[str, Json] = {}
        for key, asked in requests.items():
            method = asked.get("method")
            if method == "elicitation/create":
                try:
                    question = msgspec.convert(asked.get("params") or {}, McpElicit)
                except msgspec.ValidationError:
                    question = McpElicit()
                answers[key] = msgspec.to_builtins(await self._elicit(question))
            elif method == "roots/list":
                answers[key] = {"roots": []}
            elif method == "sampling/createMessage":
                try:
                    sampled = await self._sampling(msgspec.convert(asked.get("params") or {}, McpSample))
                except (Refused, msgspec.ValidationError) as exc:
                    return f"{self.name} asked for sampling/createMessage: {exc}"
                answers[key] = msgspec.to_builtins(sampled)
            else:
                return f"{self.name} asked for {cut(str(method), 60)}, which bingo does not give an MCP server"
        return answers

    async def _call_tool(self, request: McpCallTool, call_id: str, deadline: float | None) -> McpCallResult:
        """One `tools/call`, its request id filed for a cancel."""
        params = request
        # `_next_id` files the id the request is sent under: `call` takes it before it first
        # waits, so no other request can come between.
        self._naming = call_id
        try:
            return await self.request("tools/call", params, McpCallResult, deadline=deadline)
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
            super().notify("notifications/cancelled", McpCancel(request_id=request_id, reason=reason))
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
        uri = json_object(params.input).get("uri")
        if isinstance(uri, str) and uri:
            raw = await self.request("resources/read", McpReadResource(uri=uri), msgspec.Raw, deadline=deadline)
            contents = json_object(ANY_JSON.decode(raw)).get("contents")
            items: list[Json] = contents if is_array(contents) else []
            parts = [mcp_part({"type": "resource", "resource": item}) for item in items[:PARTS_MAX] if is_object(item)]
            return ToolOutput(parts=parts or [TextPart(text=f"{uri} has no contents")])
        lines: list[str] = []
        cursor: str | None = None
        for _ in range(_PAGES_MAX):
            raw = await self.request("resources/list", McpCursor(cursor=cursor), msgspec.Raw, deadline=deadline)
            page = json_object(ANY_JSON.decode(raw))
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
        arguments = prompt_arguments(prompt, params.args)
        if isinstance(arguments, str):
            return ErrorOutcome(message=arguments.replace("{name}", params.name))
        answer = await self.request(
            "prompts/get", McpGetPrompt(name=own, arguments=arguments), McpPromptResult, deadline=deadline
        )
        text = prompt_text(answer)
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
        request = McpComplete(
            ref=McpRef(type="ref/prompt", name=own), argument=McpArgument(name=argument, value=current)
        )
        answer = await self.request("completion/complete", request, McpCompleteResult, deadline=deadline)
        before = " ".join(done)
        return [Completion(value=f"{before} {value}" if before else value) for value in answer.completion.values[:100]]

    async def _initialize(self, host_version: str) -> InitializeResult:
        """MCP's `initialize`, then `notifications/initialized` and the lists: the server's
        declaration as bingo's handshake answer (so `handshake.py` reads it as any other).

        Raises:
            Refused: it speaks no MCP revision bingo speaks.
            PluginError: a call failed (DeadlinePassed, ConnectionClosed, an error answered).
        """
        request = McpInitialize(
            protocol_version=HANDSHAKE_REVISIONS[0],
            capabilities=self._capabilities(),
            client_info=McpClientInfo(name="bingo", version=host_version),
        )
        try:
            answer = await self.request("initialize", request, McpInitialized)
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
        self.notify("notifications/initialized", McpEmpty())
        return await self.declaration()

    def _capabilities(self) -> dict[str, Json]:
        """What bingo offers a server: elicitation (form mode: the empty object, as every
        revision reads it), and sampling only where the person allowed it; never roots."""
        offered: dict[str, Json] = {"elicitation": {}}
        if self._sample is not None:
            offered["sampling"] = {}
        return offered

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
            "io.modelcontextprotocol/clientCapabilities": self._capabilities(),
            "io.modelcontextprotocol/clientInfo": {"name": "bingo", "version": host_version},
        }
        found = await self.request("server/discover", McpDiscover(), McpDiscovered)
        if MODERN not in found.supported_versions:
            self.revision = None
            spoken = ", ".join(cut(version, 40) for version in found.supported_versions[:5]) or "none"
            raise Refused(f"it speaks MCP revisions {spoken}, but bingo speaks only {', '.join(MCP_REVISIONS)}")
        self.capabilities = found.capabilities
        about = json_object(json_object(found.meta).get("io.modelcontextprotocol/serverInfo"))
        self.server = McpServerInfo(name=str(about.get("name", "")), version=str(about.get("version", "")))
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
            self._pages("tools/list", McpToolsPage, "tools") if "tools" in caps else none(),
            self._pages("prompts/list", McpPromptsPage, "prompts") if "prompts" in caps else none(),
            self._has_resources() if "resources" in caps else no(),
        )
        specs = [
            ToolSpec(name=tool.name, description=tool.description or "", input_schema=tool.input_schema)
            for tool in tools
        ]
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
            commands=[prompt_command(self.plugin, prompt) for prompt in prompts],
        )

    async def _has_resources(self) -> bool:
        """Whether the server lists any resource (a capability alone is often just a
        library's default)."""
        try:
            raw = await self.request("resources/list", McpCursor(), msgspec.Raw, deadline=self.deadline("initialize"))
        except (MethodNotFound, BadParams):
            return False  # it declares resources and has none to list: no tool for them
        listed = json_object(ANY_JSON.decode(raw)).get("resources")
        return is_array(listed) and bool(listed)

    async def _pages(self, method: str, page: type[McpToolsPage | McpPromptsPage], field: str) -> list[Any]:
        found: list[Any] = []
        cursor: str | None = None
        for _ in range(_PAGES_MAX):
            answer = await self.request(method, McpCursor(cursor=cursor), page, deadline=self.deadline("initialize"))
            found.extend(getattr(answer, field))
            cursor = answer.next_cursor
            if not cursor:
                break
        return found

    # --- what the server sends -----------------------------------------------------

    def _progress(self, params: McpProgress) -> None:
        token = params.progress_token
        if params.message:
            tail = params.message
        elif params.total:
            tail = f"{params.progress:g}/{params.total:g}"
        else:
            tail = f"{params.progress:g}"
        self._calls.progress(str(token), tail)

    def _message(self, params: McpLogMessage) -> None:
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, ensure_ascii=False)
        source = f" {params.logger}" if params.logger else ""
        self._log_line(f"server log [{params.level}]{source}: {cut(data)}")

    def _changed(self, _params: object) -> None:
        if self._on_changed is None:
            return
        if self._relisting:
            # Coalesced: what a listing started now would find, the one after the listing
            # under way finds too. A server's 200,000 notices are two listings, not 200,000.
            self._relist_again = True
            return
        self._relisting = True
        self._spawn(self._relist())

    async def _relist(self) -> None:
        try:
            again = True
            while again:
                self._relist_again = False
                try:
                    info = await self.declaration()
                except PluginError as exc:
                    _log.info("%s: listing again after list_changed failed: %s", self.name, exc.message)
                else:
                    if self._on_changed is not None:
                        await self._on_changed(info)
                again = self._relist_again
        finally:
            self._relisting = False

    async def _ping(self, _params: object) -> McpEmpty:
        return McpEmpty()

    async def _elicit(self, params: McpElicit) -> McpElicited:
        """Put the server's question to the person, one field at a time, through the call
        running now; declined when none is, or when nobody can be asked."""
        running = list(self._calls.tools.values())
        if not running:
            return McpElicited(action="decline")
        call = running[-1]
        properties = json_object(params.requested_schema.get("properties"))
        content: dict[str, Json] = {}
        try:
            for name, schema in properties.items():
                field = json_object(schema)
                title = str(field.get("title") or field.get("description") or name)
                kind = field.get("type")
                choices: list[str] | None = None
                options = field.get("enum")
                if is_array(options):
                    choices = [str(option) for option in options]
                elif kind == "boolean":
                    choices = ["yes", "no"]
                question = asked_by(
                    "MCP server", self.plugin, f"{params.message}\n{title}" if params.message else title
                )
                answer = await call.ask(question, choices)
                if kind == "boolean":
                    content[name] = answer.strip().lower() in ("yes", "y", "true")
                elif kind in ("number", "integer"):
                    try:
                        content[name] = int(answer) if kind == "integer" else float(answer)
                    except ValueError:
                        return McpElicited(action="decline")
                else:
                    content[name] = answer
        except GateError:
            return McpElicited(action="decline")
        if not properties:
            return McpElicited(action="decline")
        return McpElicited(action="accept", content=content)

    async def _sampling(self, params: McpSample) -> McpSampled:
        """A completion for the server from the run's model, when the person lets this
        server have one (`plugins.<name>.sampling: true`); refused in words otherwise."""
        choose = self._sample
        if choose is None:
            raise Refused(
                f"bingo does not let MCP server {self.plugin} use the model (sampling/createMessage) "
                f"unless the person sets plugins.{self.plugin}.sampling to true"
            )
        try:
            provider, model = choose()
            messages = [Message(role=m.role, content=[TextBlock(text=_said(m.content))]) for m in params.messages]
            request = ModelRequest(
                model=model, messages=messages, system=params.system_prompt, max_tokens=params.max_tokens
            )
            self._log_line(f"sampling: {len(messages)} messages to {provider.spec.name} {model}")
            response = await provider.stream(request, lambda _delta: None)
        except BingoError as exc:
            raise Refused(f"the model could not answer MCP server {self.plugin}: {exc.line()}") from exc
        text = "".join(block.text for block in response.message.content if isinstance(block, TextBlock))
        stop = {"end": "endTurn", "maxTokens": "maxTokens"}.get(response.stop_reason, response.stop_reason)
        return McpSampled(role="assistant", content={"type": "text", "text": text}, model=model, stop_reason=stop)
