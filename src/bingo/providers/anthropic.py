"""The built-in `anthropic` provider: Anthropic's Messages API, streamed.

Owns the mapping between our contract (Message, Block, ToolSpec, ModelResponse) and the
Messages API's request body and server-sent events (`message_start`, `content_block_start`
/ `_delta` / `_stop`, `message_delta`, `message_stop`, `ping`, `error`), and where the body
puts its prompt-cache breakpoints (ADR-0020: the last tool, the system prompt, and the last
block of the last two user messages, four in all, the most the API takes), so a long
session pays for its history once and reads it from the cache after. The events are
decoded into private msgspec Structs, so a stream that does not match them is a
ProviderError rather than a KeyError. It does not choose itself (`selection.py`) and owns
no HTTP details beyond the URL and headers: the request, the stream and every error's
wording are `_http.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from ..wire import (
    Block,
    Delta,
    ImageBlock,
    ImagePart,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    Part,
    ProviderSpec,
    StopReason,
    TextBlock,
    TextDelta,
    TextPart,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseDelta,
    Usage,
    is_array,
    is_object,
)
from ._errors import Endpoint, broke_off, failed_mid_answer, malformed
from ._http import Api, HttpProvider, answer, decode, tool_input
from ._names import ToolNames, request_names
from ._sse import ServerEvent

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MODEL", "AnthropicProvider", "request_body"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MODEL = "claude-sonnet-4-5"
API_VERSION = "2023-06-01"

DEFAULT_MAX_TOKENS = 4096
"""The Messages API requires max_tokens; this is sent when the request leaves it open."""

_CACHE: dict[str, Json] = {"type": "ephemeral"}
"""A prompt-cache breakpoint: the prefix up to and including the block that carries it is
cached (for five minutes, renewed by each read)."""

_CACHED_TURNS = 2
"""User messages whose last block is a breakpoint: this request's tail, and the previous
request's, where its cache was written, so a turn adding many blocks still reads it (the
API looks back only 20 blocks from a breakpoint). With the tools and the system prompt, four."""

_TRANSIENT_ERRORS = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate limited",
    "api_error": "server error",
}
"""The error events the API's error page calls momentary (529, 429, 500), in the notice's words."""

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "tool_use": "toolUse",
    "max_tokens": "maxTokens",
}


# --- request -----------------------------------------------------------------------


def _image(media_type: str, data: str) -> dict[str, Json]:
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _part(part: Part) -> dict[str, Json]:
    match part:
        case TextPart(text=text):
            return {"type": "text", "text": text}
        case ImagePart(media_type=media_type, data=data):
            return _image(media_type, data)


def _block(block: Block, names: ToolNames) -> tuple[str | None, dict[str, Json] | None]:
    """The role a block must travel in (None: the message's own) and its API shape."""
    match block:
        case TextBlock(text=text):
            # The API refuses empty text blocks.
            return None, ({"type": "text", "text": text} if text else None)
        case ImageBlock(media_type=media_type, data=data):
            # The person's image: the shape of a tool result's image part.
            return "user", _image(media_type, data)
        case ToolUseBlock(id=id, name=name, input=input):
            api_name = names.api(name)
            return "assistant", {"type": "tool_use", "id": id, "name": api_name, "input": input}
        case ToolResultBlock(tool_use_id=tool_use_id, parts=parts, is_error=is_error):
            result: dict[str, Json] = {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": [_part(p) for p in parts],
            }
            if is_error:
                result["is_error"] = True
            return "user", result


def _messages(messages: list[Message], names: ToolNames) -> list[dict[str, Json]]:
    # Each block goes in the role the API requires (a tool_result only in a user message);
    # neighbouring blocks of one role share a message, so roles alternate as the API wants.
    out: list[dict[str, Json]] = []
    for message in messages:
        for block in message.content:
            role, shaped = _block(block, names)
            if shaped is None:
                continue
            role = role or message.role
            if out and out[-1]["role"] == role:
                out[-1]["content"].append(shaped)
            else:
                out.append({"role": role, "content": [shaped]})
    return out


def _mark_tail(messages: list[dict[str, Json]]) -> None:
    """Put a breakpoint on the last block of the last `_CACHED_TURNS` user messages."""
    marked = 0
    for message in reversed(messages):
        if marked == _CACHED_TURNS:
            return
        content = message["content"]
        if message["role"] == "user" and is_array(content) and content:
            last = content[-1]
            if is_object(last):
                content[-1] = {**last, "cache_control": dict(_CACHE)}
                marked += 1


def request_body(request: ModelRequest, names: ToolNames | None = None) -> dict[str, Json]:
    """The Messages API body for `request`, streamed, with its prompt-cache breakpoints.
    Tool names are sent as `names` fits them (by default, the table of `request` itself)."""
    names = request_names(request) if names is None else names
    messages = _messages(request.messages, names)
    _mark_tail(messages)
    body: dict[str, Json] = {
        "model": request.model,
        "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": messages,
        "stream": True,
    }
    if request.system:
        # The system prompt as one text block: only a block can carry a breakpoint.
        body["system"] = [{"type": "text", "text": request.system, "cache_control": dict(_CACHE)}]
    if request.tools:
        tools: list[Json] = [
            {
                "name": names.api(t.name),
                "description": t.description,
                "input_schema": t.input_schema,
            }
            for t in request.tools
        ]
        # The prefix is cached in the order tools, system, messages: a breakpoint on the
        # last tool caches them all, even when the system prompt changes.
        tools[-1] = {**tools[-1], "cache_control": dict(_CACHE)}
        body["tools"] = tools
    return body


# --- events ------------------------------------------------------------------------


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class _StartedMessage(msgspec.Struct):
    usage: _Usage = msgspec.field(default_factory=_Usage)


class _MessageStart(msgspec.Struct):
    message: _StartedMessage


class _ContentBlock(msgspec.Struct):
    type: str
    text: str = ""
    id: str = ""
    name: str = ""


class _BlockStart(msgspec.Struct):
    index: int
    content_block: _ContentBlock


class _BlockDeltaBody(msgspec.Struct):
    type: str
    text: str = ""
    partial_json: str = ""


class _BlockDelta(msgspec.Struct):
    index: int
    delta: _BlockDeltaBody


class _BlockStop(msgspec.Struct):
    index: int


class _MessageDeltaBody(msgspec.Struct):
    stop_reason: str | None = None


class _MessageDelta(msgspec.Struct):
    delta: _MessageDeltaBody = msgspec.field(default_factory=_MessageDeltaBody)
    usage: _Usage = msgspec.field(default_factory=_Usage)


class _ErrorDetail(msgspec.Struct):
    type: str = ""
    message: str = ""


class _ErrorEvent(msgspec.Struct):
    error: _ErrorDetail = msgspec.field(default_factory=_ErrorDetail)


_EVENT_TYPES: dict[str, type[msgspec.Struct]] = {
    "message_start": _MessageStart,
    "content_block_start": _BlockStart,
    "content_block_delta": _BlockDelta,
    "content_block_stop": _BlockStop,
    "message_delta": _MessageDelta,
    "error": _ErrorEvent,
}
_DECODERS = {name: msgspec.json.Decoder(kind) for name, kind in _EVENT_TYPES.items()}


class _Pending(msgspec.Struct):
    """A content block being streamed."""

    kind: str
    id: str = ""
    name: str = ""
    pieces: list[str] = msgspec.field(default_factory=list[str])
    done: Block | None = None


class _Assembly:
    """The response as its events arrive (a `Reader`): `done` is set by `message_stop`."""

    __slots__ = (
        "blocks",
        "cache_read",
        "cache_write",
        "done",
        "endpoint",
        "input_tokens",
        "names",
        "notes",
        "on_delta",
        "output_tokens",
        "started",
        "stop",
    )

    def __init__(self, endpoint: Endpoint, on_delta: Callable[[Delta], None], names: ToolNames) -> None:
        self.endpoint = endpoint
        self.on_delta = on_delta
        self.names = names
        self.blocks: dict[int, _Pending] = {}
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self.stop: str | None = None
        self.started = False
        self.done = False
        self.notes: list[str] = []

    def _pending(self, index: int) -> _Pending:
        if index not in self.blocks:
            raise malformed(self.endpoint, f"content block {index} was never started")
        return self.blocks[index]

    def _count(self, usage: _Usage) -> None:
        # message_start carries the input side, message_delta the cumulative counts (the
        # output side, and the input side again on some models): the last said wins.
        # The API's input_tokens leaves the cached tokens out; ours counts every input token.
        if usage.cache_creation_input_tokens is not None:
            self.cache_write = usage.cache_creation_input_tokens
        if usage.cache_read_input_tokens is not None:
            self.cache_read = usage.cache_read_input_tokens
        if usage.input_tokens is not None:
            self.input_tokens = usage.input_tokens + self.cache_write + self.cache_read
        if usage.output_tokens is not None:
            self.output_tokens = usage.output_tokens

    def _finish_block(self, pending: _Pending) -> None:
        if pending.kind == "text":
            pending.done = TextBlock(text="".join(pending.pieces))
        elif pending.kind == "tool_use":
            broken = f"the input of tool call {pending.name!r} is not JSON"
            given = tool_input(self.endpoint, pending.pieces, broken)
            pending.done = ToolUseBlock(id=pending.id, name=pending.name, input=given)
            self.on_delta(ToolUseDelta(id=pending.id, name=pending.name, input=given))

    def feed(self, event: ServerEvent) -> bool:
        """Take one event into the response; whether it carried content (a `ping`, an event
        type newer than this code and an empty text delta do not: ADR-0028)."""
        decoder = _DECODERS.get(event.event)
        if decoder is None:
            # ping, message_stop and event types newer than this code carry nothing we keep.
            self.done = self.done or event.event == "message_stop"
            return self.done
        match decode(self.endpoint, decoder, event.data, f"{event.event} event"):
            case _MessageStart(message=message):
                self.started = True
                self._count(message.usage)
            case _BlockStart(index=index, content_block=block):
                pieces = [block.text] if block.text else []
                # A tool call is known by its canonical name from here on (ADR-0011).
                name = self.names.canonical(block.name)
                self.blocks[index] = _Pending(block.type, block.id, name, pieces)
            case _BlockDelta(index=index, delta=delta):
                pending = self._pending(index)
                if delta.type == "text_delta" and delta.text:
                    pending.pieces.append(delta.text)
                    self.on_delta(TextDelta(text=delta.text))
                elif delta.type == "input_json_delta" and delta.partial_json:
                    pending.pieces.append(delta.partial_json)
                else:
                    return False
            case _BlockStop(index=index):
                self._finish_block(self._pending(index))
            case _MessageDelta(delta=delta, usage=usage):
                self.stop = delta.stop_reason or self.stop
                self._count(usage)
            case _ErrorEvent(error=error):
                what = error.message or error.type or "an unnamed error"
                transient = _TRANSIENT_ERRORS.get(error.type, "")
                raise failed_mid_answer(self.endpoint, what, error.type, transient)
            case _:
                return False
        return True

    def response(self) -> ModelResponse:
        """The whole response, once `message_stop` has arrived."""
        if not self.started:
            raise malformed(self.endpoint, "the stream ended before message_start")
        if not self.done:
            raise broke_off(self.endpoint, "the stream ended before message_stop")
        content: list[Block] = []
        for index in sorted(self.blocks):
            done = self.blocks[index].done
            # Empty text blocks are dropped: the API would refuse them when sent back.
            if done is not None and not (isinstance(done, TextBlock) and not done.text):
                content.append(done)
        stop = _STOP_REASONS.get(self.stop or "", "end")
        if self.stop == "refusal":
            self.notes.append("the model declined to go on (stop_reason refusal)")
        usage = Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
        )
        return answer(content, stop, usage)


# --- provider ----------------------------------------------------------------------


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"anthropic-version": API_VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    return headers


class AnthropicProvider(HttpProvider):
    """Anthropic's Messages API as a kernel Provider: `on_delta` sees text as it arrives
    and each tool call as its block ends."""

    api = Api(
        spec=ProviderSpec(name="anthropic", description="Anthropic Messages API", models=[DEFAULT_MODEL]),
        base_url=DEFAULT_BASE_URL,
        path="/v1/messages",
        key_env="ANTHROPIC_API_KEY",
        base_env="ANTHROPIC_BASE_URL",
        headers=_headers,
        body=request_body,
        reader=_Assembly,
    )
