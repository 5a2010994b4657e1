"""The script surface: `bingo -p --output-format json|stream-json` (INTERFACE.md §13).

Owns what a script reads: stdout holds only JSON (`_shapes`: for `json` the result line at
the end; for `stream-json` the init line, each model message as it ends, each batch of tool
results, each notice, and the result line last), and stderr what text mode says there
(notices, refusals, the failure's line). It draws nothing and asks nobody: every question
is answered "no" (GateError), and the kernel tells the model why in words.

Foreign bytes: msgspec writes every control character in a string as a `\\u` escape; the C1
controls and the bidirectional overrides, which it writes as they are, are escaped here too,
so no line can steer a terminal a CI log is shown on (INTERFACE.md §8). Stderr's lines pass
`escape` as the print surface's do.
"""

from __future__ import annotations

import re
import sys
from typing import Any, BinaryIO, Literal, TextIO

import msgspec

from ...kernel.errors import GateError
from ...kernel.frames import AgentFrame, AssistantFrame, Frame, ToolResultFrame
from ...kernel.interfaces import PermissionAnswer
from ...wire import (
    CommandOutcome,
    ErrorOutcome,
    Json,
    Notice,
    TextBlock,
    TextOutcome,
    TextPart,
    ToolOutput,
    ToolUseBlock,
    ViewOutcome,
    fold,
)
from .._escape import escape, escape_view
from ._shapes import (
    AssistantLine,
    Content,
    Denial,
    InitLine,
    Line,
    NoticeLine,
    OutMessage,
    ResultLine,
    TextContent,
    ToolResultContent,
    ToolUseContent,
    UserLine,
)

__all__ = ["Format", "ScriptSurface"]

Format = Literal["json", "stream-json"]

_STEERING = re.compile("[\u0080-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters msgspec leaves raw that a terminal may act on: they only occur inside JSON
strings, where a `\\u` escape means the same."""


_KEPT_BEFORE = 100
"""Start-up notices kept for the lines after init (each is said on stderr as it comes)."""


def _json(line: Line) -> bytes:
    text = msgspec.json.encode(line).decode("utf-8")
    return _STEERING.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8") + b"\n"


def _result_text(output: ToolResultFrame) -> str:
    return "".join(part.text if isinstance(part, TextPart) else "[image]" for part in output.output.parts)


class ScriptSurface:
    """JSON lines on stdout, notices on stderr, and nobody to ask."""

    __slots__ = (
        "_before",
        "_denials",
        "_pending",
        "_uses",
        "err",
        "format",
        "last_text",
        "model",
        "out",
        "outcome_text",
        "outcome_failed",
        "session_id",
    )

    def __init__(self, format: Format, out: BinaryIO | None = None, err: TextIO | None = None) -> None:
        self.format: Format = format
        self.out = out if out is not None else sys.stdout.buffer
        self.err = err if err is not None else sys.stderr
        self.session_id = ""
        """The session the lines name (set by the driver before the first)."""
        self.model: str | None = None
        self.last_text = ""
        """The text of the last model message: the final answer once the turn is done."""
        self.outcome_text: str | None = None
        """A slash command's outcome, folded to text."""
        self.outcome_failed = False
        self._uses: dict[str, ToolUseBlock] = {}
        """Every tool use the model asked for, by id: a refusal names its input."""
        self._pending: dict[str | None, list[Content]] = {}
        """Tool results not yet written as their batch's `user` line, by the `agent` call whose
        child they went to (None: the run's own)."""
        self._denials: list[Denial] = []
        self._before: list[Notice] | None = []
        """The notices said before the init line (at start-up), written right after it;
        None once it is written."""

    # --- lines ---------------------------------------------------------------------------

    def _write(self, line: Line) -> None:
        self.out.write(_json(line))
        self.out.flush()

    def _stream(self, line: Line) -> None:
        if self.format == "stream-json":
            self._write(line)

    def init(self, *, cwd: str, tools: list[str], plugins: list[str]) -> None:
        """stream-json's first line."""
        self._stream(
            InitLine(
                subtype="init", session_id=self.session_id, cwd=cwd, model=self.model, tools=tools, plugins=plugins
            )
        )
        before, self._before = self._before or [], None
        for notice in before:
            self._notice_line(notice)

    def frame(self, frame: Frame) -> None:
        """A frame of the run's turn, the moment it is written (the conversation's log); a
        child conversation's (a subagent's, an `AgentFrame`) is written as its own lines,
        naming the `agent` call as their `parent_tool_use_id`."""
        parent: str | None = None
        if isinstance(frame, AgentFrame):
            parent, frame = frame.call_id, frame.frame
        if isinstance(frame, AssistantFrame):
            self._flush_results(parent)
            content: list[Content] = []
            texts: list[str] = []
            for block in frame.message.content:
                if isinstance(block, TextBlock):
                    content.append(TextContent(text=block.text))
                    texts.append(block.text)
                elif isinstance(block, ToolUseBlock):
                    self._uses[block.id] = block
                    content.append(ToolUseContent(id=block.id, name=block.name, input=block.input))
            if parent is None:
                self.last_text = "".join(texts)
            message = OutMessage(role="assistant", content=content, model=self.model)
            self._stream(AssistantLine(message=message, session_id=self.session_id, parent_tool_use_id=parent))
        elif isinstance(frame, ToolResultFrame):
            self._pending.setdefault(parent, []).append(
                ToolResultContent(
                    tool_use_id=frame.call_id, content=_result_text(frame), is_error=frame.output.is_error
                )
            )

    def _flush_results(self, parent: str | None = None) -> None:
        """Write the results waiting for the conversation `parent` names (None: the run's own)
        as their batch's `user` line."""
        pending = self._pending.pop(parent, None)
        if pending:
            message = OutMessage(role="user", content=pending)
            self._stream(UserLine(message=message, session_id=self.session_id, parent_tool_use_id=parent))

    def result(self, line: ResultLine) -> None:
        """The last line: the run's result."""
        for parent in list(self._pending):
            self._flush_results(parent)
        self._write(line)

    def denials(self) -> list[Denial]:
        return list(self._denials)

    def _err(self, line: str) -> None:
        self.err.write(line + "\n")
        self.err.flush()

    def failed(self, line: str) -> None:
        """The one line saying why the run failed, on stderr (INTERFACE.md §1)."""
        self._err(escape(f"bingo: {line}"))

    # --- TurnEvents ----------------------------------------------------------------------

    def text(self, text: str) -> None:
        return None  # the whole message is written as it ends (`frame`)

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        return None

    def tool_progress(self, call_id: str, tail: str) -> None:
        return None

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        return None

    def waiting(self, what: str) -> None:
        self._err(f"bingo: {escape(what)}")

    def refused(self, call_id: str, name: str, why: str) -> None:
        use = self._uses.get(call_id)
        input: Any = use.input if use is not None else None
        self._denials.append(Denial(tool_name=name, tool_use_id=call_id, tool_input=input))
        self._err(f"bingo: {escape(why)}")

    def end(self) -> None:
        return None

    # --- notices and outcomes ------------------------------------------------------------

    def notice(self, notice: Notice) -> None:
        self._err(f"{escape(notice.source)}: {escape(notice.message)}")
        if self._before is None:
            self._notice_line(notice)
        elif len(self._before) < _KEPT_BEFORE:  # the rest are on stderr only
            self._before.append(notice)

    def _notice_line(self, notice: Notice) -> None:
        self._stream(
            NoticeLine(source=notice.source, level=notice.level, message=notice.message, session_id=self.session_id)
        )

    def outcome(self, outcome: CommandOutcome) -> None:
        """A slash command's outcome: its text is the result."""
        match outcome:
            case TextOutcome(text=text):
                self.outcome_text = text
            case ViewOutcome(view=view):
                self.outcome_text = fold(escape_view(view))
            case ErrorOutcome(message=message):
                self.outcome_text, self.outcome_failed = message, True
            case _:
                pass

    # --- Asker: nobody is here -----------------------------------------------------------

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise GateError("no person to ask")
