"""The built-in `openai` provider: the Chat Completions API, streamed, as OpenAI and the
servers that copy it (Ollama, vLLM, llama.cpp's server) speak it.

Owns the mapping between our contract and Chat Completions: the system prompt as a system
message, toolUse blocks as an assistant's `tool_calls`, toolResult blocks as `tool`
messages, tools as `{type: function, function: {...}}`; and the reading of `data:` chunks up
to `[DONE]`, with tool calls assembled by index from argument pieces. Chunks are decoded
into private msgspec Structs, so a chunk that does not match is a ProviderError. It does not
choose itself (`selection.py`) and owns no HTTP details beyond URL and headers: the
request, the stream and every error's wording are `_http.py`'s.
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
    ProviderSpec,
    StopReason,
    TextBlock,
    TextDelta,
    TextPart,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseDelta,
    Usage,
)
from ._errors import Endpoint, broke_off, failed_mid_answer, malformed
from ._http import Api, HttpProvider, answer, decode, tool_input
from ._names import ToolNames, request_names
from ._sse import ServerEvent

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_MODEL", "OpenAIProvider", "request_body"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
_DONE = "[DONE]"

_STOP_REASONS: dict[str, StopReason] = {
    "stop": "end",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "length": "maxTokens",
}

_TRANSIENT_ERRORS = {
    "server_error": "server error",
    "rate_limit_exceeded": "rate limited",
    "rate_limit_error": "rate limited",
}
"""An error chunk's type or code that names a momentary failure, in the notice's words."""

_ERROR_PREFIX = "Error: "
"""Chat Completions has no error flag on a tool message; a failed call's text says so."""


# --- request -----------------------------------------------------------------------


def _text(parts: list[TextPart | ImagePart]) -> str:
    return "\n".join(p.text for p in parts if isinstance(p, TextPart))


def _image_url(media_type: str, data: str) -> dict[str, Json]:
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{data}"}}


def _image_message(results: list[ToolResultBlock]) -> dict[str, Json] | None:
    # A tool message carries text only, so a result's images follow in a user message.
    content: list[Json] = []
    for result in results:
        for part in result.parts:
            if isinstance(part, ImagePart):
                content.append(_image_url(part.media_type, part.data))
    if not content:
        return None
    intro: Json = {"type": "text", "text": "Images from the tool calls:"}
    return {"role": "user", "content": [intro, *content]}


def _message(message: Message, names: ToolNames) -> list[dict[str, Json]]:
    texts = [b.text for b in message.content if isinstance(b, TextBlock) and b.text]
    uses = [b for b in message.content if isinstance(b, ToolUseBlock)]
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    pictures: list[Json] = [_image_url(b.media_type, b.data) for b in message.content if isinstance(b, ImageBlock)]
    out: list[dict[str, Json]] = []
    if message.role == "assistant":
        shaped: dict[str, Json] = {"role": "assistant", "content": "".join(texts) or None}
        if uses:
            shaped["tool_calls"] = [
                {
                    "id": u.id,
                    "type": "function",
                    "function": {
                        "name": names.api(u.name),
                        "arguments": msgspec.json.encode(u.input).decode(),
                    },
                }
                for u in uses
            ]
        return [shaped]
    # Tool messages must directly follow the assistant message that asked for them.
    for result in results:
        text = _text(result.parts)
        out.append(
            {
                "role": "tool",
                "tool_call_id": result.tool_use_id,
                "content": _ERROR_PREFIX + text if result.is_error else text,
            }
        )
    images = _image_message(results)
    if images is not None:
        out.append(images)
    if pictures:
        # The person's images, then their text, as one message of parts.
        words: list[Json] = [{"type": "text", "text": "\n".join(texts)}] if texts else []
        out.append({"role": "user", "content": [*pictures, *words]})
    elif texts:
        out.append({"role": "user", "content": "\n".join(texts)})
    return out


def request_body(request: ModelRequest, names: ToolNames | None = None) -> dict[str, Json]:
    """The Chat Completions body for `request`, streamed with usage. Tool names are sent as
    `names` fits them (by default, the table of `request` itself)."""
    names = request_names(request) if names is None else names
    messages: list[dict[str, Json]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        messages.extend(_message(message, names))
    body: dict[str, Json] = {
        "model": request.model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.max_tokens is not None:
        # `max_tokens` rather than `max_completion_tokens`: the compatible servers know it.
        body["max_tokens"] = request.max_tokens
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": names.api(t.name),
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
    return body


# --- chunks ------------------------------------------------------------------------


class _FunctionDelta(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class _ToolCallDelta(msgspec.Struct):
    index: int = 0
    id: str | None = None
    function: _FunctionDelta | None = None


class _ChoiceDelta(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_ToolCallDelta] | None = None


class _Choice(msgspec.Struct):
    delta: _ChoiceDelta | None = None
    finish_reason: str | None = None


class _PromptDetails(msgspec.Struct):
    cached_tokens: int | None = None


class _Usage(msgspec.Struct):
    # prompt_tokens counts the cached tokens too (prompt_tokens_details.cached_tokens of
    # them); the API does not report cache writes: it caches prefixes on its own.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_details: _PromptDetails | None = None


class _ErrorDetail(msgspec.Struct):
    message: str = ""
    type: str | None = None
    code: str | int | None = None


class _Chunk(msgspec.Struct):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    error: _ErrorDetail | None = None


_CHUNK = msgspec.json.Decoder(_Chunk)


class _Call(msgspec.Struct):
    """A tool call being streamed: its arguments arrive in pieces."""

    id: str = ""
    name: str = ""
    pieces: list[str] = msgspec.field(default_factory=list[str])


class _Assembly:
    """The response as its chunks arrive (a `Reader`): `done` is set by `[DONE]`."""

    __slots__ = ("calls", "done", "endpoint", "finish", "names", "notes", "on_delta", "text", "usage")

    def __init__(self, endpoint: Endpoint, on_delta: Callable[[Delta], None], names: ToolNames) -> None:
        self.endpoint = endpoint
        self.on_delta = on_delta
        self.names = names
        self.text: list[str] = []
        self.calls: dict[int, _Call] = {}
        self.usage: Usage | None = None
        self.finish: str | None = None
        self.done = False
        self.notes: list[str] = []

    def feed(self, event: ServerEvent) -> bool:
        """Take one event's `data:` payload into the response (its name is not used);
        whether it carried content (a chunk with an empty delta does not: ADR-0028)."""
        if event.data.strip() == _DONE:
            self.done = True
            return True
        chunk = decode(self.endpoint, _CHUNK, event.data, "a chunk is not valid")
        if chunk.error is not None:
            error = chunk.error
            kind = str(error.code or error.type or "")
            transient = _TRANSIENT_ERRORS.get(kind, "") or _TRANSIENT_ERRORS.get(error.type or "", "")
            raise failed_mid_answer(self.endpoint, error.message or "an unnamed error", kind, transient)
        carried = False
        if chunk.usage is not None:
            carried = True
            details = chunk.usage.prompt_tokens_details
            self.usage = Usage(
                input_tokens=chunk.usage.prompt_tokens,
                output_tokens=chunk.usage.completion_tokens,
                cache_read_tokens=(details.cached_tokens or 0) if details is not None else 0,
            )
        for choice in (chunk.choices or [])[:1]:
            delta = choice.delta
            if delta is not None and delta.content:
                carried = True
                self.text.append(delta.content)
                self.on_delta(TextDelta(text=delta.content))
            for piece in (delta.tool_calls if delta is not None else None) or []:
                carried = True
                call = self.calls.setdefault(piece.index, _Call())
                call.id = piece.id or call.id
                if piece.function is not None:
                    call.name = piece.function.name or call.name
                    if piece.function.arguments:
                        call.pieces.append(piece.function.arguments)
            if choice.finish_reason:
                carried = True
            self.finish = choice.finish_reason or self.finish
        return carried

    def _tool_uses(self) -> list[ToolUseBlock]:
        uses: list[ToolUseBlock] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.name:
                raise malformed(self.endpoint, f"tool call {index} has no name")
            broken = f"the arguments of tool call {call.name!r} are not JSON"
            given = tool_input(self.endpoint, call.pieces, broken)
            # Some compatible servers send no id; the result must still name its call.
            call_id = call.id or f"call_{index}"
            # A tool call is known by its canonical name from here on (ADR-0011).
            name = self.names.canonical(call.name)
            uses.append(ToolUseBlock(id=call_id, name=name, input=given))
        return uses

    def response(self) -> ModelResponse:
        """The whole response, once the stream has finished."""
        # Some compatible servers end without `[DONE]`; a finish reason is enough.
        if not self.done and self.finish is None:
            raise broke_off(self.endpoint, "the stream ended before a finish reason")
        uses = self._tool_uses()
        for use in uses:
            self.on_delta(ToolUseDelta(id=use.id, name=use.name, input=use.input))
        content: list[Block] = []
        text = "".join(self.text)
        if text:
            content.append(TextBlock(text=text))
        content.extend(uses)
        if self.finish == "content_filter":
            self.notes.append("the answer was stopped by the content filter (finish_reason content_filter)")
        return answer(content, _STOP_REASONS.get(self.finish or "", "end"), self.usage)


# --- provider ----------------------------------------------------------------------


def _headers(api_key: str | None) -> dict[str, str]:
    # Local servers (Ollama and the like) need no key, and get no Authorization header.
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


class OpenAIProvider(HttpProvider):
    """Chat Completions (OpenAI or a compatible server) as a kernel Provider: `on_delta`
    sees text as it arrives, and each tool call once the stream has finished (only then
    are its arguments known to be whole)."""

    api = Api(
        spec=ProviderSpec(
            name="openai",
            description="OpenAI Chat Completions, or a compatible server",
            models=[DEFAULT_MODEL],
        ),
        base_url=DEFAULT_BASE_URL,
        path="/chat/completions",
        key_env="OPENAI_API_KEY",
        base_env="OPENAI_BASE_URL",
        headers=_headers,
        body=request_body,
        reader=_Assembly,
    )
