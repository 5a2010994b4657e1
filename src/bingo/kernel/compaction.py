"""The built-in compaction strategies and the estimates that say when one is needed.

Owns the token estimate of a history and of a whole request (system prompt and tool specs
included), the numbers compaction is measured against (`DEFAULT_WINDOW` for a model nobody
wrote down, `COMPACT_AT` of the window as the default budget, `RESULT_SHARE` of it for one
tool result), and the two built-in strategies: `SummaryCompactor`, which asks the run's model
to summarise everything before the latest exchange and keeps that exchange verbatim, and
`TrimCompactor`, which needs no model: it keeps the last few exchanges whole and folds the
rest into one line per message. It does not decide *when* to compact nor which strategy
runs (the turn loop does, ADR-0021), and knows no provider: the summary's model call is
handed in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

import msgspec

from ..wire import (
    Compaction,
    CompactionContext,
    CompactorSpec,
    ImageBlock,
    Message,
    ModelRequest,
    ModelResponse,
    TextBlock,
    TextPart,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from .errors import CompactionError
from .registry import BUILTIN

__all__ = [
    "CHARS_PER_TOKEN",
    "COMPACT_AT",
    "DEFAULT_WINDOW",
    "RESULT_SHARE",
    "AskModel",
    "RequestSizes",
    "SummaryCompactor",
    "TrimCompactor",
    "estimate_request",
    "estimate_tokens",
    "last_exchange",
]

CHARS_PER_TOKEN = 4
"""A coarse, provider-independent estimate: good enough to decide when to compact."""

DEFAULT_WINDOW = 32_000
"""Tokens of input assumed for a model the providers' table does not know: small enough for
most models a local server runs, so an unknown model is compacted early rather than late."""

COMPACT_AT = 0.8
"""The share of the window a request may fill before the history is compacted: the rest is
room for the answer and for what the estimate misses."""

RESULT_SHARE = 10
"""One tool result may hold at most a window's 1/RESULT_SHARE (`toolResultBudget` overrides)."""

_IMAGE_TOKENS = 1_600
"""What an image (a tool result's part, or a prompt's block) is counted as: about what the
providers charge for a large one, and never the length of its base64 text."""

_KEEP_RECENT = 4
"""How many of the latest prompts (with everything after them) the trim compactor keeps whole."""

_SUMMARY_LINE = 160
"""Each message the trim compactor folds keeps at most this many characters of its text."""

_ASK = (
    "The conversation so far is about to be compacted: everything above will be replaced by "
    "your summary of it, and the latest exchange will follow the summary verbatim. Write that "
    "summary now, for yourself to go on from. Keep what the work needs: the person's goals and "
    "requests, decisions made and why, files and commands that mattered (with paths), what was "
    "found, what changed, errors met and how they were solved, and what is still to do. Leave "
    "out pleasantries and anything superseded. Answer with the summary only, and call no tool."
)

_HEAD = "This conversation was compacted. A summary of what came before:\n\n"
_ACK = "Understood: I will go on from that summary."


def _text_of(message: Message) -> str:
    out: list[str] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                out.append(text)
            case ImageBlock():
                out.append("[an image]")
            case ToolUseBlock(name=name):
                out.append(f"[called {name}]")
            case ToolResultBlock(parts=parts):
                out.append("[result] " + " ".join(p.text for p in parts if isinstance(p, TextPart)))
    return " ".join(out)


_encode = msgspec.json.Encoder().encode


def _chars(message: Message) -> tuple[int, int]:
    """The characters `message` is sent as, and its images."""
    chars = images = 0
    for block in message.content:
        match block:
            case TextBlock(text=text):
                chars += len(text)
            case ImageBlock():
                images += 1
            case ToolUseBlock(name=name, input=input):
                chars += len(name) + len(_encode(input))
            case ToolResultBlock(parts=parts):
                for part in parts:
                    if isinstance(part, TextPart):
                        chars += len(part.text)
                    else:
                        images += 1
    return chars, images


def estimate_tokens(messages: list[Message]) -> int:
    """Roughly how many tokens `messages` cost: their text, tool inputs and images."""
    chars = images = 0
    for message in messages:
        c, i = _chars(message)
        chars += c
        images += i
    return chars // CHARS_PER_TOKEN + images * _IMAGE_TOKENS + len(messages)


def _tools_chars(tools: list[ToolSpec]) -> int:
    return sum(len(_encode(tool)) for tool in tools)


def estimate_request(request: ModelRequest) -> int:
    """Roughly how many input tokens `request` costs: the system prompt, every tool's spec
    (as the JSON it is sent as) and the messages."""
    fixed = len(request.system or "") + _tools_chars(request.tools)
    return fixed // CHARS_PER_TOKEN + estimate_tokens(request.messages)


class RequestSizes:
    """`estimate_request` for a conversation that asks again and again, each message and
    tool spec measured once: messages and specs are immutable values, so each is known by
    its identity, and a step of a turn measures only what it added (ADR-0043). The memo
    keeps what the latest request held and nothing older."""

    __slots__ = ("_messages", "_tools")

    def __init__(self) -> None:
        self._messages: dict[int, tuple[Message, int, int]] = {}
        self._tools: dict[int, tuple[ToolSpec, int]] = {}

    def estimate(self, request: ModelRequest) -> int:
        """What `estimate_request(request)` says."""
        known, seen = self._messages, dict[int, tuple[Message, int, int]]()
        chars = images = 0
        for message in request.messages:
            kept = known.get(id(message))
            if kept is None or kept[0] is not message:  # an id freed and reused is another message
                kept = (message, *_chars(message))
            seen[id(message)] = kept
            chars += kept[1]
            images += kept[2]
        tools, specs = self._tools, dict[int, tuple[ToolSpec, int]]()
        fixed = len(request.system or "")
        for tool in request.tools:
            spec = tools.get(id(tool))
            if spec is None or spec[0] is not tool:
                spec = (tool, len(_encode(tool)))
            specs[id(tool)] = spec
            fixed += spec[1]
        self._messages, self._tools = seen, specs
        return fixed // CHARS_PER_TOKEN + chars // CHARS_PER_TOKEN + images * _IMAGE_TOKENS + len(request.messages)


def _is_prompt(message: Message) -> bool:
    return message.role == "user" and all(isinstance(b, (TextBlock, ImageBlock)) for b in message.content)


def last_exchange(messages: list[Message]) -> int:
    """Where the latest exchange starts: the index of the last prompt (a user message of
    text and images only), so that no tool use is separated from its result; 0 when there
    is none."""
    starts = [i for i, m in enumerate(messages) if _is_prompt(m)]
    return starts[-1] if starts else 0


class TrimCompactor:
    """Keeps the last few exchanges whole and summarises the rest in one line each."""

    spec = CompactorSpec(name="trim", description="keep recent exchanges, fold the rest")
    source = BUILTIN

    async def compact(self, context: CompactionContext, reason: Literal["overflow", "manual"]) -> Compaction:
        messages = context.messages
        # Cut only at a person's prompt, so no tool use is separated from its result.
        starts = [i for i, m in enumerate(messages) if _is_prompt(m)]
        cut = starts[-_KEEP_RECENT] if len(starts) >= _KEEP_RECENT else (starts[0] if starts else 0)
        if cut == 0 and len(starts) > 1:
            cut = starts[1]
        older, recent = messages[:cut], messages[cut:]
        if not older:
            return Compaction(messages=list(messages))
        lines = [f"{m.role}: {_text_of(m)[:_SUMMARY_LINE]}" for m in older]
        summary = "Earlier in this conversation (compacted):\n" + "\n".join(lines)
        head = Message(role="user", content=[TextBlock(text=summary)])
        ack = Message(role="assistant", content=[TextBlock(text="Understood.")])
        return Compaction(messages=[head, ack, *recent])


AskModel = Callable[[ModelRequest], Awaitable[ModelResponse]]
"""One model request, answered whole (the turn loop's stream, so an interrupt stops it)."""


class SummaryCompactor:
    """Asks the run's model for a summary of everything before the latest exchange, which
    it keeps verbatim. The request is the history as it is (same system prompt and tools, so
    a provider's prompt cache still matches its start) with the instruction added as the
    person's last words."""

    spec = CompactorSpec(name="summary", description="the model summarises; the latest exchange is kept")
    source = BUILTIN

    def __init__(
        self, ask: AskModel, *, model: str, system: str | None, tools: list[ToolSpec], max_tokens: int | None
    ) -> None:
        self._ask = ask
        self._model = model
        self._system = system
        self._tools = tools
        self._max_tokens = max_tokens

    async def compact(self, context: CompactionContext, reason: Literal["overflow", "manual"]) -> Compaction:
        messages = context.messages
        cut = last_exchange(messages)
        older, recent = messages[:cut], messages[cut:]
        if not older:
            return Compaction(messages=list(messages))
        request = ModelRequest(
            model=self._model,
            messages=_asking(older),
            tools=self._tools,
            system=self._system,
            max_tokens=self._max_tokens,
        )
        response = await self._ask(request)
        summary = "\n".join(b.text for b in response.message.content if isinstance(b, TextBlock)).strip()
        if not summary:
            raise CompactionError("the model answered no summary", "compact again, or set compactor to trim")
        head = Message(role="user", content=[TextBlock(text=_HEAD + summary)])
        ack = Message(role="assistant", content=[TextBlock(text=_ACK)])
        return Compaction(messages=[head, ack, *recent])


def _asking(older: list[Message]) -> list[Message]:
    """`older` with the instruction as the person's last words: added to the last message
    when that is the person's already (the APIs want the roles to alternate)."""
    ask = TextBlock(text=_ASK)
    last = older[-1]
    if last.role == "user":
        return [*older[:-1], Message(role="user", content=[*last.content, ask])]
    return [*older, Message(role="user", content=[ask])]
