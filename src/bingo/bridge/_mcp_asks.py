"""What bingo answers when an MCP server asks something of it: the client's callbacks.

`elicitation/create` is put to the person, one field at a time, through the call the plugin
is running (no call running, or nobody to ask: declined), the question opened by the
server's name (`_names.asked_by`); `sampling/createMessage` is answered by the run's model,
for a server the person lets use it (`plugins.<name>.sampling`). The client (`_mcp.py`)
takes both as callbacks, as the MCP SDK's ClientSession does, and refuses sampling in words
when it is given none. Neither speaks MCP's wire: they take and give its params and results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..kernel.dispatch import ChooseModel
from ..kernel.errors import BingoError, GateError, Refused
from ..wire import Json, Message, ModelRequest, TextBlock, is_array, is_object
from ._link import Calls
from ._mcp_wire import McpElicit, McpElicited, McpSample, McpSampled, json_object
from ._names import asked_by

__all__ = ["Elicit", "Sample", "elicit_through", "sample_with"]

Elicit = Callable[[McpElicit], Awaitable[McpElicited]]
"""Answers a server's `elicitation/create`."""
Sample = Callable[[McpSample], Awaitable[McpSampled]]
"""Answers a server's `sampling/createMessage`.

Raises:
    Refused: the model could not answer.
"""


def _said(content: Json) -> str:
    """The text of a sampling message's content (one item, or a list of them)."""
    items = content if is_array(content) else [content]
    return "\n".join(str(item.get("text", "")) for item in items if is_object(item) and item.get("type") == "text")


def elicit_through(calls: Calls, plugin: str) -> Elicit:
    """Put a server's question to the person through the call of `plugin` running now."""

    async def elicit(params: McpElicit) -> McpElicited:
        running = list(calls.tools.values())
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
                question = asked_by("MCP server", plugin, f"{params.message}\n{title}" if params.message else title)
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

    return elicit


def sample_with(choose: ChooseModel, plugin: str, log: Callable[[str], None]) -> Sample:
    """A completion for server `plugin` from the run's model (`choose`), each one noted in
    its log."""

    async def sample(params: McpSample) -> McpSampled:
        try:
            provider, model = choose()
            messages = [Message(role=m.role, content=[TextBlock(text=_said(m.content))]) for m in params.messages]
            request = ModelRequest(
                model=model, messages=messages, system=params.system_prompt, max_tokens=params.max_tokens
            )
            log(f"sampling: {len(messages)} messages to {provider.spec.name} {model}")
            response = await provider.stream(request, lambda _delta: None)
        except BingoError as exc:
            raise Refused(f"the model could not answer MCP server {plugin}: {exc.line()}") from exc
        text = "".join(block.text for block in response.message.content if isinstance(block, TextBlock))
        stop = {"end": "endTurn", "maxTokens": "maxTokens"}.get(response.stop_reason, response.stop_reason)
        return McpSampled(role="assistant", content={"type": "text", "text": text}, model=model, stop_reason=stop)

    return sample
