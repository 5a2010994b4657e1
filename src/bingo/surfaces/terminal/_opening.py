"""What the terminal shows as it opens, and what its status line says.

Owns three drawings: the banner (one line: bingo's version, the provider and model the
first turn would use or how to set one, the working directory, the session), the recap of
a continued session (its last exchanges: the person's prompts, the model's text as
markdown, each tool call as one line, and a compaction as one line saying so, never as
what the person typed), and the bottom status line (the model and the
tokens this run spent). Everything foreign in them (a path, a session's text, a tool's
input) is escaped; the model's text is rendered as markdown and escaped once rendered, as
it is when it streams.

It decides nothing about the run: the app says what the banner names (`Opening`).
"""

from __future__ import annotations

import os

import msgspec
from rich.console import RenderableType
from rich.rule import Rule
from rich.text import Text

from ...kernel.frames import AgentFrame
from ...wire import ImageBlock, Json, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from .._calls import agent_lines, subject
from .._escape import escape
from ._draw import markdown

__all__ = ["Opening", "banner", "recap", "status"]

_EXCHANGES = 3
"""Exchanges (a prompt and what answered it) a continued session's recap shows."""
_TEXT_MAX = 1500
"""Characters of one past text the recap shows; longer, it is cut with a mark saying so."""
_AGENT_LINES = 12
"""Lines the recap shows of one subagent's run under its call (the last; the rest counted)."""


class Opening(msgspec.Struct, frozen=True, kw_only=True):
    """What the banner names, and the history of the session being continued."""

    version: str
    provider: str | None
    """The provider the first turn would use; None when none can be chosen."""
    model: str | None
    unset: str = ""
    """With no provider: what is wrong and how to set one (one line)."""
    cwd: str
    home: str | None = None
    """The person's home directory, shown as ~ at the start of `cwd`."""
    session: str | None = None
    """The id of the session being continued; None for a new one."""
    past: list[Message] = []
    compacted: int = 0
    """How many earlier messages a compaction replaced (0: the session was never compacted)."""
    summary: int = 0
    """How many of `past`'s first messages the compaction wrote (a summary, no one's words):
    the recap says the conversation was compacted instead of drawing them."""
    agents: list[AgentFrame] = []
    """The frames subagents wrote in the session (its live ones): the recap shows each under
    the `agent` call that ran it, as the agent's (ADR-0049)."""


def _where(cwd: str, home: str | None) -> str:
    if home and (cwd == home or cwd.startswith(home.rstrip(os.sep) + os.sep)):
        return "~" + cwd[len(home.rstrip(os.sep)) :]
    return cwd


def banner(opening: Opening) -> Text:
    """The one line the terminal opens with."""
    line = Text()
    line.append(f"bingo {escape(opening.version)}", style="bold")
    line.append(" · ", style="dim")
    if opening.provider is not None:
        line.append(escape(f"{opening.model} via {opening.provider}"))
    else:
        line.append(escape(f"no model: {opening.unset}"), style="yellow")
    line.append(" · ", style="dim")
    line.append(escape(_where(opening.cwd, opening.home)))
    line.append(" · ", style="dim")
    line.append(escape(f"continuing session {opening.session}") if opening.session else "new session")
    return line


def _prompt(text: str) -> str:
    """What the person typed: a prompt's text without the context pieces put before it."""
    while text.startswith("<context"):
        end = text.find("\n</context>\n")
        if end < 0:
            break
        text = text[end + len("\n</context>\n") :]
    return text.lstrip("\n")


def _cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _TEXT_MAX else text[:_TEXT_MAX] + " …"


def _exchanges(messages: list[Message]) -> tuple[list[Message], int]:
    """The messages of the last exchanges, and how many prompts came before them."""
    starts = [
        i
        for i, m in enumerate(messages)
        if m.role == "user" and any(isinstance(b, (TextBlock, ImageBlock)) for b in m.content)
    ]
    if not starts:
        return messages, 0
    shown = starts[-_EXCHANGES:]
    return messages[shown[0] :], len(starts) - len(shown)


def recap(opening: Opening) -> list[RenderableType]:
    """The last exchanges of the session being continued, framed by two rules ([] for a new
    session or one with nothing to show)."""
    messages, before = _exchanges(opening.past[opening.summary :])
    failed = {b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResultBlock) and b.is_error}
    drawn: list[RenderableType] = []
    if opening.summary:
        # Its summary is the compactor's words, not the person's: said as what it is.
        n = opening.compacted
        drawn.append(Text(f"earlier conversation compacted: {n} message{'s' if n != 1 else ''}", style="dim"))
    for message in messages:
        for block in message.content:
            match block:
                case TextBlock(text=text) if message.role == "user" and text.strip():
                    drawn.append(Text(escape("> " + _cut(_prompt(text))), style="bold"))
                case TextBlock(text=text) if text.strip():
                    drawn.append(markdown(escape(_cut(text))))
                case ImageBlock(media_type=media_type):
                    drawn.append(Text(escape(f"> [an image, {media_type}]"), style="bold"))
                case ToolUseBlock(id=call_id, name=name, input=input):
                    drawn.append(_call(name, input, call_id in failed))
                    drawn.extend(_agent(opening.agents, call_id))
                case _:
                    pass
    if not drawn:
        return []
    earlier = f" · {before} earlier prompt{'s' if before != 1 else ''} not shown" if before else ""
    head = Rule(Text(escape(f"the conversation so far{earlier}"), style="dim"), style="dim", align="left")
    return [head, *drawn, Rule(style="dim")]


def _agent(frames: list[AgentFrame], call_id: str) -> list[Text]:
    """What the subagent the call `call_id` ran wrote, each line marked as the agent's."""
    lines = [(f.agent, line) for f in frames if f.call_id == call_id for line in agent_lines(f.frame)]
    drawn: list[Text] = []
    if len(lines) > _AGENT_LINES:
        left = len(lines) - _AGENT_LINES
        drawn.append(
            Text(f"  agent {escape(lines[0][0])} › … {left} earlier line{'s' if left != 1 else ''}", style="dim")
        )
        lines = lines[-_AGENT_LINES:]
    for agent, line in lines:
        mark = Text(f"  agent {escape(agent)} › ", style="dim")
        mark.append(line, style="dim")
        drawn.append(mark)
    return drawn


def _call(name: str, input: Json, failed: bool) -> Text:
    mark, style = ("✗", "red") if failed else ("✓", "green")
    line = Text(f"{mark} ", style=style)
    line.append(escape(name), style="bold")
    about = subject(name, input)
    if about:
        line.append(" " + about)
    return line


def _tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def status(opening: Opening | None, used: Usage, model: str | None = None) -> str:
    """The bottom status line: the model (`model`, the one the run uses once it has one, else
    the opening's) and the tokens this run spent (`1.2k in · 340 out`; the input read from
    the provider's prompt cache said when there is any)."""
    model = model or (opening.model if opening is not None and opening.provider is not None else None) or "no model"
    cached = f" ({_tokens(used.cache_read_tokens)} cached)" if used.cache_read_tokens else ""
    return escape(f"{model} · {_tokens(used.input_tokens)} in{cached} · {_tokens(used.output_tokens)} out")
