"""Frames: the records a session is made of, in the order they happened.

The kernel owns their shape (the store only keeps them) and how a history of model messages
is rebuilt from them. A frame is appended the moment its event happens, so a session killed
mid-turn reads back as far as it got.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from ..wire import (
    Compaction,
    ContextPiece,
    ImageBlock,
    Json,
    Message,
    Notice,
    TextBlock,
    TextPart,
    ToolOutput,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    Wire,
)

__all__ = [
    "AssistantFrame",
    "CompactionFrame",
    "Frame",
    "NoticeFrame",
    "PromptFrame",
    "ToolCallFrame",
    "ToolResultFrame",
    "decode_frame",
    "encode_frame",
    "history",
    "prompt_message",
    "spent",
]


class _Frame(Wire, frozen=True, tag_field="kind"):
    pass


class PromptFrame(_Frame, frozen=True, tag="prompt"):
    """What the person submitted (its text and the images it came with, checked by
    `images.check_images`), and the context pieces its turn's requests carried with it (not
    part of the history: a later turn's requests do not repeat them)."""

    text: str
    turn: int
    pieces: list[ContextPiece] = []
    images: list[ImageBlock] = []


def prompt_message(text: str, images: list[ImageBlock]) -> Message:
    """The person's message a prompt is: its images, then its text (none when it is empty,
    which the APIs refuse, as an image-only prompt's is)."""
    return Message(role="user", content=[*images, TextBlock(text=text)] if text or not images else [*images])


class AssistantFrame(_Frame, frozen=True, tag="assistant"):
    """One model message: whole, or what arrived of one whose stream broke (then the turn
    failed). `usage` is what the response cost, when the provider said."""

    message: Message
    turn: int
    usage: Usage | None = None


class ToolCallFrame(_Frame, frozen=True, tag="toolCall"):
    """A tool call, as the gate let it through (after any redirect)."""

    call_id: str
    name: str
    input: Json
    turn: int


class ToolResultFrame(_Frame, frozen=True, tag="toolResult"):
    """A tool call's result."""

    call_id: str
    output: ToolOutput
    turn: int


class NoticeFrame(_Frame, frozen=True, tag="notice"):
    """A notice raised during the session."""

    notice: Notice
    turn: int


class CompactionFrame(_Frame, frozen=True, tag="compaction"):
    """A compaction: the history from here on starts with these messages. `reason` is why
    it ran (`overflow`: the request passed its budget; `manual`: /compact) and `by` the
    strategy that made it."""

    compaction: Compaction
    turn: int
    reason: str = ""
    by: str = ""


Frame: TypeAlias = PromptFrame | AssistantFrame | ToolCallFrame | ToolResultFrame | NoticeFrame | CompactionFrame

_encoder = msgspec.json.Encoder()
_decoder: msgspec.json.Decoder[Frame] | None = None
"""Built on the first decode: a run that continues no session never reads a frame."""


def encode_frame(frame: Frame) -> bytes:
    """A frame as the bytes the store keeps."""
    return _encoder.encode(frame)


def decode_frame(data: bytes) -> Frame:
    """A frame back from the store's bytes."""
    global _decoder
    if _decoder is None:
        _decoder = msgspec.json.Decoder(Frame)
    return _decoder.decode(data)


def history(frames: list[Frame]) -> list[Message]:
    """The model messages a session's frames add up to.

    A tool call whose result never arrived (the process was killed mid-call) is answered
    with an error result, so the history stays one the model APIs accept."""
    messages: list[Message] = []
    pending: dict[str, None] = {}
    results: list[ToolResultBlock] = []

    def flush_results() -> None:
        nonlocal results
        for call_id in list(pending):
            if not any(r.tool_use_id == call_id for r in results):
                results.append(
                    ToolResultBlock(
                        tool_use_id=call_id,
                        parts=[TextPart(text="the call did not finish: bingo stopped during it")],
                        is_error=True,
                    )
                )
        pending.clear()
        if results:
            messages.append(Message(role="user", content=list(results)))
            results = []

    for frame in frames:
        match frame:
            case PromptFrame(text=text, images=images):
                flush_results()
                messages.append(prompt_message(text, images))
            case AssistantFrame(message=message):
                flush_results()
                messages.append(message)
                for block in message.content:
                    if isinstance(block, ToolUseBlock):
                        pending[block.id] = None
            case ToolResultFrame(call_id=call_id, output=output):
                results.append(ToolResultBlock(tool_use_id=call_id, parts=output.parts, is_error=output.is_error))
            case CompactionFrame(compaction=compaction):
                flush_results()
                messages = list(compaction.messages)
            case ToolCallFrame() | NoticeFrame():
                pass
    flush_results()
    return messages


def spent(frames: list[Frame]) -> Usage:
    """The tokens a session's model responses spent, summed over its assistant frames (a
    frame written before usage was kept counts nothing)."""
    totals = dict.fromkeys(Usage.__struct_fields__, 0)
    for frame in frames:
        if isinstance(frame, AssistantFrame) and frame.usage is not None:
            for name in totals:
                totals[name] += getattr(frame.usage, name)
    return Usage(**totals)
