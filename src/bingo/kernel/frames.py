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
    "plus",
    "AgentFrame",
    "AssistantFrame",
    "ChildFrame",
    "CompactionFrame",
    "Frame",
    "NoticeFrame",
    "PromptFrame",
    "RewindFrame",
    "ToolCallFrame",
    "ToolResultFrame",
    "decode_frame",
    "encode_frame",
    "history",
    "live",
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


class RewindFrame(_Frame, frozen=True, tag="rewind"):
    """A rewind (`/rewind`, ADR-0044): the conversation goes back to what it was before
    frame `to`. The frames from there to this one are set aside, kept but no longer part of
    the history; a later rewind to a point before this frame brings them back."""

    to: int
    turn: int


ChildFrame: TypeAlias = PromptFrame | AssistantFrame | ToolCallFrame | ToolResultFrame | NoticeFrame | CompactionFrame
"""What a child conversation writes (a subagent's: it never rewinds, and runs no child)."""


class AgentFrame(_Frame, frozen=True, tag="agent"):
    """A frame of a child conversation (a subagent, INTERFACE.md §15), kept in its parent's
    session where it happened: `frame` was written by the child the parent's `agent` call
    `call_id` runs, shown as agent `agent`'s. It is never part of the parent's history (the
    model is told the child's final text, as the call's result), but a rewind sets it aside
    with the parent's frames around it, and its usage counts in the session's (ADR-0049)."""

    call_id: str
    agent: str
    frame: ChildFrame
    turn: int


Frame: TypeAlias = (
    PromptFrame
    | AssistantFrame
    | ToolCallFrame
    | ToolResultFrame
    | NoticeFrame
    | CompactionFrame
    | RewindFrame
    | AgentFrame
)

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


class _Kept:
    __slots__ = ("frame", "before")

    def __init__(self, frame: Frame, before: _Kept | None) -> None:
        self.frame, self.before = frame, before


def live(frames: list[Frame]) -> list[Frame]:
    """The frames a session's conversation is made of: each `RewindFrame` takes it back to
    what it was before the frame it names (those set aside are left out, and so are the
    rewind frames themselves)."""
    before: list[_Kept | None] = []
    kept: _Kept | None = None
    for frame in frames:
        before.append(kept)
        if isinstance(frame, RewindFrame):
            if 0 <= frame.to < len(before):
                kept = before[frame.to]
            continue
        kept = _Kept(frame, kept)
    out: list[Frame] = []
    while kept is not None:
        out.append(kept.frame)
        kept = kept.before
    out.reverse()
    return out


def history(frames: list[Frame]) -> list[Message]:
    """The model messages a session's frames add up to (its `live` frames: what a rewind
    set aside is not among them).

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

    for frame in live(frames):
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
            case ToolCallFrame() | NoticeFrame() | RewindFrame() | AgentFrame():
                pass
    flush_results()
    return messages


def plus(a: Usage, b: Usage) -> Usage:
    """Two usages summed, field by field."""
    return Usage(**{name: getattr(a, name) + getattr(b, name) for name in Usage.__struct_fields__})


def spent(frames: list[Frame]) -> Usage:
    """The tokens a session's model responses spent, summed over its assistant frames, its
    children's included (a frame written before usage was kept counts nothing)."""
    total = Usage()
    for frame in frames:
        if isinstance(frame, AgentFrame):
            frame = frame.frame
        if isinstance(frame, AssistantFrame) and frame.usage is not None:
            total = plus(total, frame.usage)
    return total
