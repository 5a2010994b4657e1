"""The terminal surface's state and output: what a turn, a command or a notice leaves on the
screen, what is live (the model's block not yet complete, the running tools with their
progress line), and the queue of questions waiting for the person. The model's text is drawn
as markdown a block at a time, once each is complete (`_markdown.Blocks`, ADR-0017).

Owns the rule that questions queue: `permission` and `ask` put a question in line and wait
for its answer, and the keyboard loop (`_loop.py`) answers them one at a time, never two at
once. It reads no keys and runs no prompt itself.

Every string it shows is escaped (`surfaces.escape`) on its way to rich or to the live area,
bingo's own lines included: they name plugins, tools and paths. Views and tool-call lines are
escaped where they are drawn (`_draw.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable

import msgspec
from rich.console import Console, Group, RenderableType
from rich.text import Text

from ...kernel.errors import GateError
from ...kernel.interfaces import Declined, PermissionAnswer
from ...wire import (
    CommandOutcome,
    ErrorOutcome,
    Json,
    NoneOutcome,
    Notice,
    PromptOutcome,
    TextOutcome,
    ToolOutput,
    ViewOutcome,
)
from .._calls import Preview, preview_of, result_lines, result_text, subject
from .._escape import escape
from ._draw import draw, finished, markdown, result, short
from ._markdown import Blocks

__all__ = ["Question", "TerminalSurface"]

_NOTICE_STYLE = {"info": "dim", "warning": "dim yellow", "error": "red"}
_KEPT_RESULTS = 100
"""Results of this run `/result N` can show again (the oldest are let go)."""
_KEPT_CHARS = 200_000
"""Characters of one result kept for `/result`; past it, the rest is counted, not kept."""

_log = logging.getLogger(__name__)


class Question(msgspec.Struct):
    """One question waiting for the person: a gate permission (`tool` set) or a plugin's ask."""

    text: str
    choices: list[str] | None
    answer: asyncio.Future[str]
    tool: str | None = None
    input: Json = None
    always: str | None = None
    """For a permission: the allow rule a "yes, always" adds."""
    preview: Preview | None = None
    """For a permission: what it approves, shown above its keys (ADR-0034)."""
    words: str = ""
    """For a permission answered "no": the person's words for the model, if they gave any."""
    listed: bool = False
    """The choices are rows of a list to pick from, never answered by their first letters."""


class _Running(msgspec.Struct):
    name: str
    input: Json
    tail: str = ""


def _nothing() -> None:
    return None


async def _no_dry_run(name: str, input: Json, cwd: str | None = None) -> ToolOutput | None:
    return None


class TerminalSurface:
    """A person at a terminal: drawn output, a live area, and questions in line."""

    __slots__ = (
        "_blocks",
        "_calls",
        "_drawn",
        "_results",
        "_running",
        "asked",
        "changed",
        "closed",
        "console",
        "dry_run",
        "questions",
    )

    def __init__(self, console: Console | None = None) -> None:
        self.console = console if console is not None else Console(highlight=False)
        self.changed: Callable[[], None] = _nothing
        """Called when the live area must be redrawn (the keyboard loop sets it)."""
        self.asked: Callable[[], None] = _nothing
        """Called when a question joins the line (the keyboard loop sets it)."""
        self.questions: deque[Question] = deque()
        self.closed = False
        """Set when nobody is left to answer: questions then raise GateError at once."""
        self._blocks = Blocks()
        """The model's text of the response being streamed, cut into markdown blocks."""
        self._drawn = False
        """A block of the current response is on the screen (the next one is set off by a blank line)."""
        self._running: dict[str, _Running] = {}
        self.dry_run: Callable[[str, Json, str | None], Awaitable[ToolOutput | None]] = _no_dry_run
        """What a call would do, with nothing written (`tools.preview`; the app sets it): the
        diff a permission question shows, in the working directory given (a subagent's, which
        may be its worktree), else the run's."""
        self._results: OrderedDict[int, str] = OrderedDict()
        """The last results of this run by number, escaped, for `/result N`."""
        self._calls = 0
        """Calls finished this run: the number of the last one."""

    def print(self, renderable: RenderableType) -> None:
        """Leave `renderable` on the screen, above the live area."""
        self.console.print(renderable, soft_wrap=isinstance(renderable, Text))

    def say(self, text: str, style: str = "dim") -> None:
        """One line of bingo's own (escaped: it may name what a plugin or a person chose)."""
        self.print(Text(escape(text), style=style))

    def say_lines(self, *lines: tuple[str, str]) -> None:
        """Lines of bingo's own, each (text, style), in one write: the live area is redrawn
        between two writes, never inside one."""
        said = Text()
        for n, (text, style) in enumerate(lines):
            if n:
                said.append("\n")
            said.append(escape(text), style=style)
        self.print(said)

    def live(self) -> list[tuple[str, str]]:
        """The live area as prompt_toolkit formatted text: the unfinished line, then one line
        per running tool with its progress."""
        lines: list[tuple[str, str]] = []
        pending = self._blocks.pending()
        if pending:
            lines.append(("", escape(pending) + "\n"))
        for tool in self._running.values():
            lines.append(("bold", f"⋯ {escape(tool.name)}"))
            about = subject(tool.name, tool.input)
            lines.append(("", f" {about}" if about else ""))
            lines.append(("fg:ansibrightblack", f" · {tool.tail}\n" if tool.tail else "\n"))
        return lines

    def _block(self, block: str) -> None:
        # One print, the blank line that sets it off included: the prompt is redrawn
        # between two writes, never inside one.
        # Escaped before it is read as markdown too, so a control byte is shown, not
        # dropped by rich; `markdown` escapes what the rendering made of it.
        drawn = markdown(escape(block))
        self.print(Group(Text(), drawn) if self._drawn else drawn)
        self._drawn = True

    def _flush(self) -> None:
        """The response's text is over (it ended, or a tool call or a line of bingo's comes):
        its last block is drawn as it stands."""
        block = self._blocks.rest()
        if block is not None:
            self._block(block)
        self._drawn = False

    # --- TurnEvents ---------------------------------------------------------------

    def text(self, text: str) -> None:
        # Rendered and escaped as whole blocks, not as deltas: a joiner split between two
        # deltas is seen with its neighbours, and markdown is read as a whole.
        for block in self._blocks.feed(text):
            self._block(block)
        self.changed()

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        self._flush()
        self._running[call_id] = _Running(name, input)
        self.changed()

    def tool_progress(self, call_id: str, tail: str) -> None:
        running = self._running.get(call_id)
        if running is not None:
            lines = tail.strip().splitlines()
            running.tail = short(lines[-1] if lines else "", 80)
            self.changed()

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        running = self._running.pop(call_id, None)
        self._flush()
        self._calls += 1
        said = result_text(output)
        if len(said) > _KEPT_CHARS:
            said = f"{said[:_KEPT_CHARS]}\n… {len(said) - _KEPT_CHARS:,} more characters, not kept"
        self._results[self._calls] = said
        while len(self._results) > _KEPT_RESULTS:
            self._results.popitem(last=False)
        drawn: list[RenderableType] = [finished(name, running.input if running else None, output, seconds)]
        if output.display is not None:
            drawn.append(draw(output.display))
        lines, more = result_lines(name, output, width=max(self.console.width - 4, 20))
        if lines:
            drawn.append(result(lines, more, self._calls))
        # One print: the prompt is redrawn between two writes, never inside one, and the
        # result's lines must stay under their call's.
        self.print(drawn[0] if len(drawn) == 1 else Group(*drawn))
        self.changed()

    def result(self, number: int | None) -> tuple[int, str] | None:
        """The result of call `number` of this run (the last when None), whole and escaped,
        with its number; None when there is no such result kept."""
        if number is None:
            number = self._calls
        said = self._results.get(number)
        return None if said is None else (number, said)

    def waiting(self, what: str) -> None:
        self._flush()
        self.say(f"⋯ {what}", "yellow")

    def refused(self, call_id: str, name: str, why: str) -> None:
        self._flush()
        self.say(f"✗ {why}", "red")
        self.changed()

    # --- notices, outcomes, the end of a turn -------------------------------------

    def notice(self, notice: Notice) -> None:
        self.print(Text(escape(f"{notice.source}: {notice.message}"), style=_NOTICE_STYLE.get(notice.level, "dim")))

    def outcome(self, outcome: CommandOutcome) -> None:
        match outcome:
            case TextOutcome(text=text):
                self.print(Text(escape(text)))
            case ViewOutcome(view=view):
                self.print(draw(view))
            case ErrorOutcome(message=message):
                self.say(message, "red")
            case PromptOutcome() | NoneOutcome():
                pass

    def end(self) -> None:
        self._flush()
        self.changed()

    # --- Asker: the person answers, one question at a time -------------------------

    async def _queue(self, question: Question) -> str:
        if self.closed:
            raise GateError("nobody is left to answer")
        self.questions.append(question)
        self.asked()
        try:
            return await question.answer
        finally:
            if question in self.questions:
                self.questions.remove(question)

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer | Declined:
        return await self._permission(f"bingo wants to run {name}", name, input, always)

    async def permission_asked(self, name: str, input: Json, always: str, by: str) -> PermissionAnswer | Declined:
        """A permission a hook made the gate ask: `by` (the hook and its words) is shown with it."""
        return await self._permission(f"bingo wants to run {name} · {by}", name, input, always)

    async def agent_permission(
        self, call_id: str, agent: str, name: str, input: Json, always: str, by: str, cwd: str
    ) -> PermissionAnswer | Declined:
        """A subagent's permission (`AsksForAgents`): the question names the agent, and the
        hook that made the gate ask when one did; its preview is worked out where the child
        works (`cwd`: its worktree, if it has one)."""
        text = f"agent {agent} wants to run {name}" + (f" · {by}" if by else "")
        return await self._permission(text, name, input, always, cwd)

    async def _permission(
        self, text: str, name: str, input: Json, always: str, cwd: str | None = None
    ) -> PermissionAnswer | Declined:
        self._flush()
        try:
            planned = await self.dry_run(name, input, cwd)
        except Exception:  # boundary: a preview that fails must not fail the question
            _log.exception("the preview of %s failed", name)
            planned = None
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        question = Question(
            text=text,
            choices=None,
            answer=future,
            tool=name,
            input=input,
            always=always,
            preview=preview_of(name, input, planned),
        )
        answer = await self._queue(question)
        if answer == "no" and question.words:
            return Declined(reason=question.words)
        return "once" if answer == "once" else "always" if answer == "always" else "no"

    async def choose(self, question: str, rows: list[str]) -> str:
        """One of `rows`, picked from a list (GateError when the person answers nothing)."""
        self._flush()
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await self._queue(Question(text=question, choices=rows, answer=future, listed=True))

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self._flush()
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        return await self._queue(Question(text=question, choices=choices or None, answer=future))
