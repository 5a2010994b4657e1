"""The MCP client: a Model Context Protocol server behind the one Link every proxy holds.

Owns the translation between MCP (revisions 2026-07-28, 2025-11-25 and 2025-06-18, stdio
or Streamable HTTP) and bingo's own wire: `McpClient` holds the server's `Connection`, as
the MCP SDK's ClientSession runs on its own dispatcher, and is a `Peer` whose `call` and
`notify` take bingo's methods (`initialize`, `tool/call`, `command/run`,
`command/complete`, `tool/cancel`) and speak MCP's (`tools/call`, `prompts/get`,
`completion/complete`, `notifications/cancelled`), answering in the kernel's own types. So
the proxies (`BridgedTool`, `BridgedCommand`) and the kernel never learn that a plugin
speaks MCP: one representation of each contract (ADR-0022, ADR-0039).

Its answer to bingo's `initialize` is the session's (`_mcp_session.py`: the revision, MCP's
handshake or `server/discover`, and the lists read as bingo's `InitializeResult`).
`notifications/tools/list_changed`, `prompts/list_changed` and `resources/list_changed` list
again and hand the new declaration to the plugin's handle: one listing at a time, and of the
notices that arrive meanwhile one more after it, however many they are (ADR-0028).

From the server: `notifications/progress` is the call's live line (the progressToken sent is
the callId); `notifications/message` goes to the plugin's log; `elicitation/create` and
`sampling/createMessage` are answered by the callbacks it is given (`_mcp_asks.py`), and
sampling is refused in words when it is given none (the person did not set
`plugins.<name>.sampling`); `ping` is answered. In the stateless revision a call answered
`input_required` has its questions answered by the same callbacks and is asked again with
the server's `requestState`. An interrupted call sends `notifications/cancelled` and ends as
cancelled at once: an MCP server does not answer a request it was told to cancel
(INTERFACE.md §6), and its late answer, if any, is dropped.

It does not spawn, respawn or decide what a death costs (the plugin's handle does, as for
any plugin), nor reach the network (`_mcp_http.py` does, for Streamable HTTP).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import msgspec

from ..endpoint import Connection, decode_answer
from ..kernel.errors import Cancelled, ConnectionClosed, DeadlinePassed, MethodNotFound, PluginError, Refused
from ..kernel.log import cut
from ..wire import (
    CommandCompleteParams,
    CommandCompleteResult,
    CommandRunParams,
    CommandRunResult,
    Completion,
    ErrorOutcome,
    InitializeParams,
    InitializeResult,
    Json,
    PromptOutcome,
    TextPart,
    ToolCallParams,
    ToolCallResult,
    ToolCancelParams,
    ToolOutput,
    Wire,
    is_array,
    is_object,
)
from ..wire.rpc import RequestId
from ._mcp_asks import Elicit, Sample
from ._mcp_session import PAGES_MAX, RESOURCES_TOOL, McpSession
from ._mcp_wire import (
    ANY_JSON,
    PARTS_MAX,
    McpArgument,
    McpCallResult,
    McpCallTool,
    McpCancel,
    McpComplete,
    McpCompleteResult,
    McpCursor,
    McpElicit,
    McpEmpty,
    McpGetPrompt,
    McpLogMessage,
    McpProgress,
    McpPromptResult,
    McpReadResource,
    McpRef,
    McpSample,
    McpSampled,
    McpServerInfo,
    json_object,
    mcp_part,
    prompt_arguments,
    prompt_text,
    tool_output,
)

__all__ = ["Changed", "McpClient"]

_log = logging.getLogger(__name__)

R = TypeVar("R")

_ROUNDS_MAX: Final = 10
"""Times one call may answer `input_required` (the stateless revision's questions) before
bingo gives up on it."""

_encoder = msgspec.json.Encoder()

Changed = Callable[[InitializeResult], Awaitable[None]]
"""Told what the server declares after it said its tools or prompts changed."""


class McpClient:
    """An MCP server as a Peer, over the connection it holds. Use as `async with`: entering
    opens the connection, leaving closes it and ends any listing under way.

    `log` takes the server's log messages; `progress` is told each live line (a callId and
    its tail); `elicit` answers the server's questions and `sample` its requests for the
    model (None: refused in words, and not offered); `on_changed` is told the declaration a
    list_changed notification led to."""

    __slots__ = (
        "_call_ids",
        "_elicit",
        "_group",
        "_log_line",
        "_on_changed",
        "_progress_line",
        "_relist_again",
        "_relisting",
        "_sample",
        "_tasks",
        "conn",
        "plugin",
        "session",
    )

    def __init__(
        self,
        conn: Connection,
        *,
        plugin: str,
        log: Callable[[str], None],
        progress: Callable[[str, str], None],
        elicit: Elicit,
        sample: Sample | None = None,
        on_changed: Changed | None = None,
    ) -> None:
        self.conn = conn
        self.plugin = plugin
        self.session = McpSession(conn, plugin=plugin, samples=sample is not None)
        self._log_line = log
        self._progress_line = progress
        self._elicit = elicit
        self._sample = sample
        self._on_changed = on_changed
        self._call_ids: dict[str, RequestId] = {}
        """The request id of each running `tools/call`, by callId (for the cancel)."""
        self._relisting = False
        """A listing after list_changed is under way."""
        self._relist_again = False
        """A list_changed came while it was: one more listing follows it."""
        self._group = asyncio.TaskGroup()
        self._tasks: set[asyncio.Task[None]] = set()
        conn.on_notification("notifications/progress", McpProgress, self._progress)
        conn.on_notification("notifications/message", McpLogMessage, self._message)
        conn.on_notification("notifications/tools/list_changed", object, self._changed)
        conn.on_notification("notifications/prompts/list_changed", object, self._changed)
        conn.on_notification("notifications/resources/list_changed", object, self._changed)
        conn.on_request("ping", object, self._ping)
        conn.on_request("elicitation/create", McpElicit, elicit)
        conn.on_request("sampling/createMessage", McpSample, self._sampling)

    async def __aenter__(self) -> McpClient:
        await self.conn.__aenter__()
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            for task in self._tasks:
                task.cancel()
            await self._group.__aexit__(None, None, None)
        finally:
            await self.conn.__aexit__(*exc_info)

    # --- the Peer ------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.conn.name

    @property
    def ended(self) -> ConnectionClosed | None:
        return self.conn.ended

    @property
    def revision(self) -> str | None:
        """The MCP revision spoken, once the handshake (or discovery) settled it."""
        return self.session.revision

    @property
    def server(self) -> McpServerInfo:
        return self.session.server

    @property
    def capabilities(self) -> dict[str, Json]:
        """What the server said it offers."""
        return self.session.capabilities

    def deadline(self, method: str) -> float:
        return self.conn.deadline(method)

    async def discover(self, host_version: str) -> InitializeResult:
        """The stateless revision's `server/discover` and the lists (`McpSession.discover`)."""
        return await self.session.discover(host_version)

    async def request(
        self,
        method: str,
        params: Wire,
        result: type[R],
        *,
        deadline: float | None | msgspec.UnsetType = msgspec.UNSET,
    ) -> R:
        """An MCP request as MCP has it (`McpSession.request`)."""
        return await self.session.request(method, params, result, deadline=deadline)

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
                answer: Wire = await self.session.initialize(params.env.host_version)
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

    def notify(self, method: str, params: Wire) -> None:
        if isinstance(params, ToolCancelParams) and method == "tool/cancel":
            self._cancel(params.call_id)
            return
        self.conn.notify(method, params)

    # --- bingo's methods, in MCP ---------------------------------------------------

    async def _tool(self, params: ToolCallParams, deadline: float | None) -> ToolOutput:
        if params.name == RESOURCES_TOOL and RESOURCES_TOOL not in self.session.tools:
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

        def sent(request_id: RequestId) -> None:
            self._call_ids[call_id] = request_id

        try:
            return await self.session.request("tools/call", request, McpCallResult, deadline=deadline, sent=sent)
        except DeadlinePassed:
            # The host stops waiting, so the server is told to stop working (as MCP asks).
            self._tell_cancelled(self._call_ids.get(call_id), "the call passed its deadline")
            raise
        finally:
            self._call_ids.pop(call_id, None)

    def _tell_cancelled(self, request_id: RequestId | None, reason: str) -> bool:
        """Send `notifications/cancelled` for `request_id`; False when it cannot be sent."""
        if request_id is None:
            return False
        try:
            self.conn.notify("notifications/cancelled", McpCancel(request_id=request_id, reason=reason))
        except PluginError:
            return False  # the stream has ended: the pending call is failing with that error already
        return True

    def _cancel(self, call_id: str) -> None:
        request_id = self._call_ids.pop(call_id, None)
        if request_id is None or not self._tell_cancelled(request_id, "the person interrupted the turn"):
            return
        # A server does not answer a cancelled request: the call ends now, and a late answer
        # is dropped as any abandoned call's is.
        self.conn.give_up(request_id, Cancelled(f"{self.name} was told to cancel the call: the turn was interrupted"))

    async def _resources(self, params: ToolCallParams, deadline: float | None) -> ToolOutput:
        uri = json_object(params.input).get("uri")
        if isinstance(uri, str) and uri:
            raw = await self.session.request("resources/read", McpReadResource(uri=uri), msgspec.Raw, deadline=deadline)
            contents = json_object(ANY_JSON.decode(raw)).get("contents")
            items: list[Json] = contents if is_array(contents) else []
            parts = [mcp_part({"type": "resource", "resource": item}) for item in items[:PARTS_MAX] if is_object(item)]
            return ToolOutput(parts=parts or [TextPart(text=f"{uri} has no contents")])
        lines: list[str] = []
        cursor: str | None = None
        for _ in range(PAGES_MAX):
            raw = await self.session.request("resources/list", McpCursor(cursor=cursor), msgspec.Raw, deadline=deadline)
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
        prompt = self.session.prompts.get(own)
        if prompt is None:
            return ErrorOutcome(message=f"{self.name} has no prompt {own!r} now")
        arguments = prompt_arguments(prompt, params.args)
        if isinstance(arguments, str):
            return ErrorOutcome(message=arguments.replace("{name}", params.name))
        answer = await self.session.request(
            "prompts/get", McpGetPrompt(name=own, arguments=arguments), McpPromptResult, deadline=deadline
        )
        text = prompt_text(answer)
        if not text.strip():
            return ErrorOutcome(message=f"prompt {own} of {self.name} gave no text to submit")
        return PromptOutcome(text=text)

    async def _complete(self, params: CommandCompleteParams, deadline: float | None) -> list[Completion]:
        if "completions" not in self.session.capabilities:
            raise MethodNotFound(f"{self.name} offers no completion")
        own = params.name.partition(":")[2]
        prompt = self.session.prompts.get(own)
        if prompt is None or not prompt.arguments:
            return []
        words = params.partial.split(" ")
        done, current = words[:-1], words[-1]
        index = min(len(done), len(prompt.arguments) - 1)
        argument = prompt.arguments[index].name
        request = McpComplete(
            ref=McpRef(type="ref/prompt", name=own), argument=McpArgument(name=argument, value=current)
        )
        answer = await self.session.request("completion/complete", request, McpCompleteResult, deadline=deadline)
        before = " ".join(done)
        return [Completion(value=f"{before} {value}" if before else value) for value in answer.completion.values[:100]]

    def _progress(self, params: McpProgress) -> None:
        token = params.progress_token
        if params.message:
            tail = params.message
        elif params.total:
            tail = f"{params.progress:g}/{params.total:g}"
        else:
            tail = f"{params.progress:g}"
        self._progress_line(str(token), tail)

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
        task = self._group.create_task(self._relist())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _relist(self) -> None:
        try:
            again = True
            while again:
                self._relist_again = False
                try:
                    info = await self.session.declaration()
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

    async def _sampling(self, params: McpSample) -> McpSampled:
        """The run's model's answer, for a server the person lets have one
        (`plugins.<name>.sampling: true`); refused in words otherwise."""
        if self._sample is None:
            raise Refused(
                f"bingo does not let MCP server {self.plugin} use the model (sampling/createMessage) "
                f"unless the person sets plugins.{self.plugin}.sampling to true"
            )
        return await self._sample(params)
