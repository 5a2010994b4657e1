"""What `bingo -p --output-format json|stream-json` prints: one value per JSON line, in the
shapes Claude Code's `--output-format json` and `stream-json` document (INTERFACE.md §13),
so a script written for it reads bingo unchanged.

Owns the output's types: each is a msgspec Struct tagged by `type`, and
`schema/script-output.json` is generated from them (`surfaces/script/schema.py`), so the
document cannot disagree with what is printed. Field names are Claude Code's, snake_case,
written as they are (not the plugin wire's camelCase). It does not decide what goes in them
(the surface does).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

import msgspec

__all__ = [
    "AssistantLine",
    "Denial",
    "InitLine",
    "Line",
    "NoticeLine",
    "OutMessage",
    "ResultLine",
    "ResultUsage",
    "TextContent",
    "ToolResultContent",
    "ToolUseContent",
    "UserLine",
]


class _Line(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """One line of the output."""


class _Content(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """One block of a message's content, as Anthropic's Messages API spells it."""


class TextContent(_Content, frozen=True, tag="text"):
    """Text the model wrote."""

    text: str


class ToolUseContent(_Content, frozen=True, tag="tool_use"):
    """A tool call the model asked for."""

    id: str
    name: str
    input: Any


class ToolResultContent(_Content, frozen=True, tag="tool_result"):
    """A tool call's result as the model was told it (an image part as `[image]`)."""

    tool_use_id: str
    content: str
    is_error: bool = False


Content: TypeAlias = TextContent | ToolUseContent | ToolResultContent


class OutMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A model message (its text and tool uses) or a batch of tool results."""

    role: Literal["assistant", "user"]
    content: list[Content]
    model: Annotated[
        str | None | msgspec.UnsetType, msgspec.Meta(description="The model that wrote it (assistant messages).")
    ] = msgspec.UNSET


class InitLine(_Line, frozen=True, tag="system"):
    """stream-json's first line: what the run is."""

    subtype: Literal["init"]
    session_id: Annotated[str, msgspec.Meta(description="The session this run writes (bingo --resume ID).")]
    cwd: str
    model: Annotated[str | None, msgspec.Meta(description="The model the run's turns use; null when none is set.")]
    tools: Annotated[list[str], msgspec.Meta(description="Every tool the model may be offered, by name.")]
    plugins: Annotated[list[str], msgspec.Meta(description="The plugins (and MCP servers) this run admits.")]


class AssistantLine(_Line, frozen=True, tag="assistant"):
    """stream-json: one whole model message, as it ends."""

    message: OutMessage
    session_id: str
    parent_tool_use_id: Annotated[
        str | None,
        msgspec.Meta(
            description="The `agent` call whose child conversation (a subagent's) wrote it; null for the run's own."
        ),
    ] = None


class UserLine(_Line, frozen=True, tag="user"):
    """stream-json: the results of one batch of tool calls, as they go back to the model."""

    message: OutMessage
    session_id: str
    parent_tool_use_id: Annotated[
        str | None,
        msgspec.Meta(
            description="The `agent` call whose child conversation (a subagent's) it went to; null for the run's own."
        ),
    ] = None


class NoticeLine(_Line, frozen=True, tag="notice"):
    """stream-json: a notice (also said on stderr, as in text mode)."""

    source: str
    level: Literal["info", "warning", "error"]
    message: str
    session_id: str


class ResultUsage(msgspec.Struct, frozen=True, kw_only=True):
    """Tokens the run's model responses spent, summed, as Anthropic reports them:
    `input_tokens` leaves out the cached input, which the cache fields count."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


class Denial(msgspec.Struct, frozen=True, kw_only=True):
    """A tool call that was refused (by a rule, a hook, or because nobody could be asked)."""

    tool_name: str
    tool_use_id: str
    tool_input: Any


class ResultLine(_Line, frozen=True, tag="result"):
    """The run's end: `json`'s one line, `stream-json`'s last."""

    subtype: Literal["success", "error_max_turns", "error_during_execution"]
    is_error: bool
    result: Annotated[
        str,
        msgspec.Meta(description="The final answer's text; when the run failed, the line saying why."),
    ]
    session_id: Annotated[str, msgspec.Meta(description="The session this run wrote (bingo --resume ID).")]
    num_turns: Annotated[int, msgspec.Meta(description="Model requests the run made.")]
    duration_ms: Annotated[int, msgspec.Meta(description="The run's time, from its start to this line.")]
    duration_api_ms: Annotated[int, msgspec.Meta(description="Of that, the time spent waiting for the model.")]
    usage: ResultUsage
    total_cost_usd: Annotated[
        float | None,
        msgspec.Meta(description="What the responses cost at list price; null for a model with no known price."),
    ]
    permission_denials: list[Denial]
    structured_output: Annotated[
        Any, msgspec.Meta(description="With --json-schema: the answer, parsed and valid against the schema.")
    ] = msgspec.UNSET
    errors: Annotated[
        list[str] | msgspec.UnsetType, msgspec.Meta(description="When is_error: what went wrong, one line each.")
    ] = msgspec.UNSET


Line: TypeAlias = InitLine | AssistantLine | UserLine | NoticeLine | ResultLine
"""Any line of the output."""
