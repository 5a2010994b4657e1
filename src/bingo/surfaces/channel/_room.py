"""One Matrix room as a bingo surface: what a turn shows, sent as messages; the gate's and
a plugin's questions, answered by a message.

Owns what the person in the room reads. The model's text is gathered and sent when its
message is complete (before a tool call starts, and when the turn ends), never a message
per delta; one still coming after STREAM_EVERY seconds is shown as far as it goes and
edited (`m.replace`) every STREAM_EVERY seconds and once more when complete. A tool call is one short notice; a tool's or command's View is one message whose
`body` is its text fold and whose `formatted_body` is its HTML (`_html.py`). bingo's own
lines go as `m.notice`, under a limit (NOTICE_BURST, then one every NOTICE_EVERY seconds):
what is left out goes to bingo's log and is counted in one line when the turn ends. Every
string from elsewhere passes `escape` (control characters shown, INTERFACE.md §8) and, in
HTML, `html.escape`.

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
)
from .._escape import escape, escape_view, one_line
from ._html import view_html
from ._outbox import Outbox, message

__all__ = ["NOTICE_BURST", "NOTICE_EVERY", "STREAM_EVERY", "RoomSurface"]

_log = logging.getLogger(__name__)

NOTICE_BURST = 8
"""Notices a room is sent at once."""
NOTICE_EVERY = 2.0
"""Seconds a room past its burst waits for each further notice (the rest go to the log)."""
STREAM_EVERY = 2.0
"""Seconds a message of the model's may take before what there is of it is shown, and
between the edits that show more (a short answer is one message, never edited)."""
_INPUT_SHOWN = 4000
"""Characters of a call's input a permission question quotes."""

_PERMISSION_WORDS: dict[str, PermissionAnswer] = {"yes": "once", "y": "once", "once": "once", "always": "always", "no": "no", "n": "no"}


def _word(text: str) -> str:
    return text.strip().strip(".!").strip().lower()


@dataclass(slots=True)
class _Question:
    answer: asyncio.Future[str | None]
    """The answer, or None when the question was withdrawn (`decline`)."""
    choices: tuple[str, ...]
    """The answers it takes, lower case (empty: any message)."""


class RoomSurface:
    """The surface of one room (`Surface`: TurnEvents, Asker, notices and outcomes)."""

    def __init__(self, room: str, outbox: Outbox, *, question_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.room = room
        self._outbox = outbox
        self._question_seconds = question_seconds
        self._clock = clock
        self._text: list[str] = []
        self._streamed: str | None = None
        """The transaction id of the message the model's text so far was shown in (edited
        as more arrives), or None."""
        self._shown = ""
        self._timer: asyncio.TimerHandle | None = None
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
        self._send(line, notice=True)

    def _view(self, view: View) -> None:
        shown = escape_view(view)  # before the fold, so columns line up
        self._send(fold(shown), html=view_html(shown))

    def _flush(self) -> None:
        """Send the model's text gathered so far, as one message (or as the last edit of
        the message it was streamed in)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        text = "".join(self._text).strip()
        self._text.clear()
        streamed, self._streamed = self._streamed, None
        if streamed is not None:
            if text != self._shown:
                self._outbox.put(self.room, message(escape(text)), replaces=streamed)
        elif text:
            self._send(escape(text))
        self._shown = ""

    def _stream(self) -> None:
        """A message still coming after STREAM_EVERY seconds: show what there is, and edit
        it every STREAM_EVERY seconds while more arrives."""
        self._timer = None
        text = "".join(self._text).strip()
        if text and text != self._shown:
            content = message(escape(text))
            if self._streamed is None:
                self._streamed = self._outbox.put(self.room, content)
            else:
                self._outbox.put(self.room, content, replaces=self._streamed)
            self._shown = text
        self._tick()

    def _tick(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test's plain call): the text is sent when complete
            return
        self._timer = loop.call_later(STREAM_EVERY, self._stream)

    # --- TurnEvents ---------------------------------------------------------------

    def text(self, text: str) -> None:
        self._text.append(text)
        if self._timer is None and self._streamed is None:
            self._tick()

    def tool_started(self, call_id: str, name: str, input: Json) -> None:
        self._flush()
        self._say(f"running {escape(name)}")

    def tool_progress(self, call_id: str, tail: str) -> None:
        return None  # a live line has no place in a room: the result follows

    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None:
        if output.display is not None:
            self._view(output.display)
        if output.is_error:
            said = next((p.text for p in output.parts if isinstance(p, TextPart)), "")
            first = said.strip().splitlines()[0] if said.strip() else ""
            self._say(escape(f"{name} failed" + (f": {first}" if first else "")))

    def waiting(self, what: str) -> None:
        self._say(escape(what))

    def refused(self, call_id: str, name: str, why: str) -> None:
        self._flush()
        self._say(escape(why))

    def end(self) -> None:
        self._flush()
        if self._left_out:
            count, self._left_out = self._left_out, 0
            more = "1 more notice was" if count == 1 else f"{count} more notices were"
            self._send(f"{more} left out here; they are in bingo's log", notice=True)

    # --- notices and outcomes -----------------------------------------------------

    def notice(self, notice: Notice) -> None:
        self._flush()
        self._say(f"{escape(notice.source)}: {escape(notice.message)}")

    def outcome(self, outcome: CommandOutcome) -> None:
        match outcome:
            case TextOutcome(text=text):
                self._send(escape(text))
            case ViewOutcome(view=view):
                self._view(view)
            case ErrorOutcome(message=text):
                self._send(escape(text), notice=True)
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
            self._say(f"no answer in {self._question_seconds:g} s: taken as no")
            return None
        finally:
            self._question = None

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        self._flush()
        shown = json.dumps(input, ensure_ascii=False)
        if len(shown) > _INPUT_SHOWN:
            shown = shown[:_INPUT_SHOWN] + "..."
        self._send(
            escape(f"bingo wants to run {name} {shown}\nAnswer yes (this once), always (allow {one_line(always)} from now on) or no. No answer in {self._question_seconds:g} s is no."),
        )
        word = await self._wait(tuple(_PERMISSION_WORDS))
        return _PERMISSION_WORDS.get(word or "no", "no")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self._flush()
        words = tuple(c.lower() for c in choices) if choices else ()
        how = f"Answer {', '.join(choices)}." if choices else "Answer with a message."
        self._send(escape(f"{question}\n{how} No answer in {self._question_seconds:g} s is no."))
        answer = await self._wait(words)
        if answer is None:
            return "no"
        if choices:
            return next(c for c in choices if c.lower() == answer)
        return answer
