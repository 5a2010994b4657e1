"""The built-in compaction strategy and the history-size estimate that triggers compaction.

Owns `estimate_tokens` and `TrimCompactor`, which keeps the most recent exchanges whole and
folds everything before them into one short summary message. It does not decide *when* to
compact (the turn loop does) nor call a model to summarise (a plugin compactor can).
"""

from __future__ import annotations

from typing import Literal

from ..wire import (
    Compaction,
    CompactionContext,
    CompactorSpec,
    Message,
    TextBlock,
    TextPart,
    ToolResultBlock,
    ToolUseBlock,
)
from .registry import BUILTIN

__all__ = ["CHARS_PER_TOKEN", "TrimCompactor", "estimate_tokens"]

CHARS_PER_TOKEN = 4
"""A coarse, provider-independent estimate: good enough to decide when to compact."""

_KEEP_RECENT = 4
"""How many of the latest prompts (with everything after them) survive a compaction whole."""

_SUMMARY_LINE = 160
"""Each folded message keeps at most this many characters of its text."""


def _text_of(message: Message) -> str:
    out: list[str] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                out.append(text)
            case ToolUseBlock(name=name):
                out.append(f"[called {name}]")
            case ToolResultBlock(parts=parts):
                out.append("[result] " + " ".join(p.text for p in parts if isinstance(p, TextPart)))
    return " ".join(out)


def estimate_tokens(messages: list[Message]) -> int:
    """Roughly how many tokens `messages` cost."""
    return sum(len(_text_of(m)) for m in messages) // CHARS_PER_TOKEN + len(messages)


def _is_prompt(message: Message) -> bool:
    return message.role == "user" and all(isinstance(b, TextBlock) for b in message.content)


class TrimCompactor:
    """Keeps the last few exchanges whole and summarises the rest in one line each."""

    spec = CompactorSpec(name="trim", description="keep recent exchanges, fold the rest")
    source = BUILTIN

    async def compact(
        self, context: CompactionContext, reason: Literal["overflow", "manual"]
    ) -> Compaction:
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
