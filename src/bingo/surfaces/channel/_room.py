"""One Matrix room as a bingo surface: what a turn shows, sent as messages; the gate's and
a plugin's questions, answered by a message.

Owns what the person in the room reads (ADR-0037). The model's text of one turn is ONE
message, whatever tool calls come between its pieces: sent when the turn ends, or earlier
when the text has streamed for STREAM_EVERY seconds (then edited, `m.replace`, every
STREAM_EVERY seconds as it grows, and once more when the turn ends); its `body` is the text
and its `formatted_body` the HTML of its markdown (`_html.markdown_html`). The turn's tool
calls are ONE status message (`m.notice`), sent at the first call and edited as each starts
and ends: a line a call (`✓ read notes.txt: 3 lines`), the last STATUS_LINES of them. A
question (the gate's, a plugin's) is a message of its own, sent after the answer and status
so far are shown; what the turn says after it is a new answer and status, below the
question (the status message stays the turn's one). bingo's own lines (notices, a wait, a refusal) go as `m.notice` with their level
first (`[warning] wordcount: ...`), under a limit (NOTICE_BURST, then one every NOTICE_EVERY
seconds): what is left out goes to bingo's log and is counted in one line when the turn
ends. A command's outcome is a message, a View as its text fold in `body` and its HTML in
`formatted_body` (`_html.py`).

Every string from elsewhere passes `escape` (control characters shown, INTERFACE.md §8) and,
in HTML, `html.escape`; and every string passes the room's `Paths`, so no absolute path of
the bot's machine is sent (`_paths.py`).

A question (`permission`, `ask`) is a message; the next message from an allowed user that
is an answer (`yes`, `always`, `no`, or one of the question's choices) answers it, and
silence past `question_seconds` is "no". It does not read the homeserver (`_serve.py` hands
it each message through `answer`), and sends nothing itself: the `Outbox` does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...kernel.interfaces import PermissionAnswer
from ...wire import (
    CommandOutcome,
    ErrorOutcome,
    Json,
    NoneOutcome,
    Notice,
    PromptOutcome,
    TextOutcome,
    TextPart,
    ToolOutput,
    View,
    ViewOutcome,
    fold,
    is_object,
)
from .._escape import escape, escape_view, one_line
from ._html import markdown_html, view_html
from ._outbox import Outbox, message
from ._paths import Paths

__all__ = ["NOTICE_BURST", "NOTICE_EVERY", "STATUS_LINES", "STREAM_EVERY", "RoomSurface", "notice_line"]

_log = logging.getLogger(__name__)

NOTICE_BURST = 8
"""Notices a room is sent at once."""
NOTICE_EVERY = 2.0
"""Seconds a room past its burst waits for each further notice (the rest go to the log)."""
STREAM_EVERY = 2.0
"""Seconds a turn's answer may take before what there is of it is shown, and between the
edits that show more (a short answer is one message, never edited)."""
STATUS_LINES = 20
"""Calls a turn's status message names (the latest; the earlier are counted)."""
_SUMMARY = 120
"""Characters of a call's result its status line quotes."""
_TITLE = 80
"""Characters of a call's main argument its status line shows."""
_INPUT_SHOWN = 4000
"""Characters of a call's input a permission question quotes."""
_MAIN = ("command", "path", "pattern", "url", "query")
"""The input fields a status line names a call by, the first present."""

_PERMISSION_WORDS: dict[str, PermissionAnswer] = {
    "yes": "once",
    "y": "once",
    "once": "once",
    "always": "always",
    "no": "no",
    "n": "no",
}
_LEVELS = {"info": "notice", "warning": "warning", "error": "error"}


def notice_line(notice: Notice) -> str:
    """A notice as a room reads it, its level first (`[warning] wordcount: ...`): a line of
    bingo's, never the model's words (not yet escaped)."""
    return f"[{_LEVELS.get(notice.level, notice.level)}] {notice.source}: {notice.message}"


def _word(text: str) -> str:
    return text.strip().strip(".!").strip().lower()


def _title(name: str, input: Json, paths: Paths) -> str:
    """A call as its status line names it: the tool and its main argument (its paths short
    before it is cut), on one line."""
    value = next((v for key in _MAIN if isinstance(v := input.get(key), str) and v), None) if is_object(input) else None
    if value is None:
        return name
    value = " ".join(paths.known(value).split())
    return f"{name} {value if len(value) <= _TITLE else value[:_TITLE] + '…'}"


def _first_line(output: ToolOutput) -> str:
    said = next((p.text for p in output.parts if isinstance(p, TextPart) and p.text.strip()), "")
    return said.strip().splitlines()[0] if said.strip() else ""


def _summary(line: str) -> str:
    """A result's first line as a status line quotes it (its paths already short)."""
    return line if len(line) <= _SUMMARY else line[:_SUMMARY] + "…"


@dataclass(slots=True)
class _Question:
    answer: asyncio.Future[str | None]
    """The answer, or None when the question was withdrawn (`decline`)."""
    choices: tuple[str, ...]
    """The answers it takes, lower case (empty: any message)."""


class RoomSurface:
    """The surface of one room (`Surface`: TurnEvents, Asker, notices and outcomes)."""

    def __init__(
        self,
        room: str,
        outbox: Outbox,
        *,
        question_seconds: float,
        paths: Paths | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.room = room
        self._outbox = outbox
        self._question_seconds = question_seconds
        self._paths = paths if paths is not None else Paths(cwd=Path("/"), home=None, bingo_home=None)
        self._clock = clock
        self._pieces: list[str] = []
        """The turn's text: what came before each tool call, then what comes now."""
        self._piece: list[str] = []
        self._answer: str | None = None
        """The transaction id of the turn's answer message once sent (edited as it grows)."""
        self._shown = ""
        self._timer: asyncio.TimerHandle | None = None
        self._status: str | None = None
        """The transaction id of the turn's status message once sent (edited at each call)."""
        self._calls: dict[str, str] = {}
        """The status line of each call of the turn, by call id, in order."""
        self._question: _Question | None = None
        self._tokens = float(NOTICE_BURST)
        self._at = clock()
        self._left_out = 0

    # --- sending ------------------------------------------------------------------

    def _send(self, body: str, *, html: str | None = None, notice: bool = False) -> None:
        self._outbox.put(self.room, message(body, html=html, notice=notice))

    def _say(self, line: str) -> None:
        """One of bingo's own lines (already escaped), under the room's notice limit."""
        now = self._clock()
        self._tokens = min(NOTICE_BURST, self._tokens + (now - self._at) / NOTICE_EVERY)
        self._at = now
        if self._tokens < 1:
            self._left_out += 1
            _log.info("notice left out of %s: %s", self.room, line)
            return
        self._tokens -= 1
        self._send(self._paths.line(line), notice=True)

    def _view(self, view: View) -> None:
        shown = escape_view(view, self._paths.known)  # before the fold, so columns line up
        self._send(fold(shown), html=view_html(shown))

    def _text(self) -> str:
        return "\n\n".join(piece for piece in [*self._pieces, "".join(self._piece).strip()] if piece)

    def _show(self) -> None:
        """Show the turn's answer as it is now: sent, or its message edited when it grew."""
        text = self._text()
        if not text or text == self._shown:
            return
        shown = self._paths.known(escape(text))
        content = message(shown, html=markdown_html(shown))
        if self._answer is None:
            self._answer = self._outbox.put(self.room, content)
        else:
            self._outbox.put(self.room, content, replaces=self._answer)
        self._shown = text

    def _close(self, *, turn: bool) -> None:
        """The turn's answer as it is now is its last: what the turn says next is a new
        message (after a question, and when the turn ends); so is its status when the `turn`
        ends (a question leaves it to be edited: a call that asked still ends in it)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._show()
        self._pieces.clear()
        self._piece.clear()
        self._answer, self._shown = None, ""
        if turn:
            self._status = None
            self._calls.clear()

    def _stream(self) -> None:
        """The answer is still coming after STREAM_EVERY seconds: show what there is, and
        edit it every STREAM_EVERY seconds while more arrives."""
        self._timer = None
        self._show()
        self._tick()

    def _tick(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test's plain call): the text is sent when complete
            return
        self._timer = loop.call_later(STREAM_EVERY, self._stream)

    def _call(self, call_id: str, line: str) -> None:
        """Set one call's line in the turn's status message, and send or edit it."""
        self._calls[call_id] = self._paths.line(line)
        lines = list(self._calls.values())
        earlier = len(lines) - STATUS_LINES
        if earlier > 0:
            lines = [f"({earlier} earlier call{'s' if earlier != 1 else ''})", *lines[earlier:]]
        content = message("\n".join(lines), notice=True)
        if self._status is None:
            self._status = self._outbox.put(self.room, content)
        else:
            self._outbox.put(self.room, content, replaces=self._status)

    # --- TurnEvents ---------------------------------------------------------------

    def text(self, text: str) -> None:
        self._piece.append(text)
        if self._timer is None:
            self._tick()

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        piece = "".join(self._piece).strip()
        self._piece.clear()
        if piece:
            self._pieces.append(piece)
        self._call(call_id, escape(f"… {_title(name, input, self._paths)}"))

    def tool_progress(self, call_id: str, tail: str) -> None:
        return None  # a live line has no place in a room: the status line says when it ends

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        title = self._calls.get(call_id, f"… {escape(name)}").removeprefix("… ")
        said = _summary(self._paths.line(escape(_first_line(output))))  # short paths first: a cut must not halve one
        mark = "✗" if output.is_error else "✓"
        self._call(call_id, f"{mark} {title}" + (f": {said}" if said else ""))

    def waiting(self, what: str) -> None:
        self._say(escape(f"[notice] bingo: {what}"))

    def refused(self, call_id: str, name: str, why: str) -> None:
        self._call(call_id, escape(f"✗ {name}: {why}"))

    def end(self) -> None:
        self._close(turn=True)
        if self._left_out:
            count, self._left_out = self._left_out, 0
            more = "1 more notice was" if count == 1 else f"{count} more notices were"
            self._send(f"[notice] bingo: {more} left out here; they are in bingo's log", notice=True)

    # --- notices and outcomes -----------------------------------------------------

    def notice(self, notice: Notice) -> None:
        self._say(escape(notice_line(notice)))

    def outcome(self, outcome: CommandOutcome) -> None:
        match outcome:
            case TextOutcome(text=text):
                self._send(self._paths.known(escape(text)))
            case ViewOutcome(view=view):
                self._view(view)
            case ErrorOutcome(message=text):
                self._send(self._paths.line(escape(f"[error] bingo: {text}")), notice=True)
            case PromptOutcome() | NoneOutcome():
                pass

    # --- Asker: the person answers with a message ---------------------------------

    def asking(self) -> bool:
        """True while a question waits for its answer."""
        return self._question is not None

    def answer(self, text: str) -> bool:
        """Take `text` (a message from an allowed user) as the waiting question's answer;
        False when no question waits or `text` is not one of its answers."""
        question = self._question
        if question is None or question.answer.done():
            return False
        word = _word(text)
        if question.choices and word not in question.choices:
            return False
        question.answer.set_result(word if question.choices else text.strip())
        return True

    def decline(self) -> None:
        """Answer the waiting question "no" (the person stopped the turn it belongs to)."""
        question = self._question
        if question is not None and not question.answer.done():
            question.answer.set_result(None)

    async def _wait(self, choices: tuple[str, ...]) -> str | None:
        """The answer to the question just sent, or None past the deadline."""
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        question = _Question(answer=answer, choices=choices)
        self._question = question
        try:
            async with asyncio.timeout(self._question_seconds):
                return await question.answer
        except TimeoutError:
            self._say(f"[notice] bingo: no answer in {self._question_seconds:g} s: taken as no")
            return None
        finally:
            self._question = None

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        return await self._permission("bingo", name, input, always)

    async def agent_permission(
        self, call_id: str, agent: str, name: str, input: Json, always: str, by: str, cwd: str
    ) -> PermissionAnswer:
        """A subagent's permission (`AsksForAgents`): the question names the agent."""
        return await self._permission(f"agent {agent}" + (f" ({by})" if by else ""), name, input, always)

    async def _permission(self, who: str, name: str, input: Json, always: str) -> PermissionAnswer:
        self._close(turn=False)
        shown = json.dumps(input, ensure_ascii=False)
        if len(shown) > _INPUT_SHOWN:
            shown = shown[:_INPUT_SHOWN] + "..."
        # Only the lossless short forms: a question shows whole what it asks to run.
        self._send(
            self._paths.known(
                escape(
                    f"{who} wants to run {name} {shown}\nAnswer yes (this once), always (allow {one_line(always)} from now on) or no. No answer in {self._question_seconds:g} s is no."
                )
            ),
        )
        word = await self._wait(tuple(_PERMISSION_WORDS))
        return _PERMISSION_WORDS.get(word or "no", "no")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self._close(turn=False)
        words = tuple(c.lower() for c in choices) if choices else ()
        how = f"Answer {', '.join(choices)}." if choices else "Answer with a message."
        self._send(self._paths.known(escape(f"{question}\n{how} No answer in {self._question_seconds:g} s is no.")))
        answer = await self._wait(words)
        if answer is None:
            return "no"
        if choices:
            return next(c for c in choices if c.lower() == answer)
        return answer
