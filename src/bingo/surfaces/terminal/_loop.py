"""The keyboard loop: one prompt always up, so a person can type while a turn runs.

Owns what a key does. Enter submits (a turn or a command; while one is in flight an
instant command runs beside it, and anything else is queued, shown as queued, and submitted
in order when the turn ends; Ctrl-C drops the queue with the turn). Ctrl-C during a turn interrupts it (an interrupted bridged
call is sent its cancel and waited for); a second one stops waiting: the plugin that did not
answer is stopped, and the call ends as cancelled.
A first Ctrl-C prints nothing of its own: the turn's end says it was interrupted, in one line.
Ctrl-C at an idle prompt clears the line; Ctrl-D at an empty one ends the session, leaving one
line on how to continue it. A prompt a hook refused is put back in the input. A question
closes the prompt (keeping what was typed), is answered, and the prompt comes back. Output
goes through prompt_toolkit's patched stdout, so it lands above the prompt. It draws nothing
itself: the surface does.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.patch_stdout import patch_stdout

from ...kernel.errors import BingoError, GateError
from ...kernel.home import bingo_home, data_dir
from ...wire import Usage
from .._commands import EXIT_COMMANDS
from .._seam import Driver
from ._input import CommandCompleter, answer, main_session
from ._opening import Opening, banner, recap, status
from ._surface import Question, TerminalSurface

__all__ = ["interact"]

_log = logging.getLogger(__name__)


class _Woken(Exception):
    """The prompt was closed so the loop sees a question, or the end of a one-turn run."""


def _nothing_used() -> Usage:
    return Usage()


def _none() -> str | None:
    return None


async def interact(
    driver: Driver,
    surface: TerminalSurface,
    *,
    first: str | None = None,
    opening: Opening | None = None,
    used: Callable[[], Usage] = _nothing_used,
    session: Callable[[], str | None] = _none,
    unsent: Callable[[], str | None] = _none,
    model: Callable[[], str | None] = _none,
) -> int:
    """Drive `driver` from the keyboard until Ctrl-D (exit status 0); with `first`, submit it
    and return its exit status once it is over (`bingo "PROMPT"` on a terminal).

    With `opening`, the banner is drawn first, and a continued session's last exchanges;
    the status line names the model (`model`, once the run has one, else the opening's)
    and what `used` says this run spent. `session` is the run's session id, named in the
    line the end leaves (how to continue it); `unsent` gives back, once, a submission whose
    prompt a hook refused, which is put back in the input."""
    prompt = main_session(
        data_dir(bingo_home(os.environ)) / "history", driver, toolbar=lambda: status(opening, used(), model())
    )
    if opening is not None:
        surface.print(banner(opening))
        for drawn in recap(opening):
            surface.print(drawn)
    with patch_stdout(raw=True):
        async with asyncio.TaskGroup() as group:
            code = await _Loop(driver, surface, prompt, group, unsent).run(first)
    ended = session()
    if first is None and ended is not None:
        surface.say(f"bingo --resume {ended} continues this session (bingo -c: the latest)")
    return code


class _Loop:
    def __init__(
        self,
        driver: Driver,
        surface: TerminalSurface,
        session: PromptSession[str],
        group: asyncio.TaskGroup,
        unsent: Callable[[], str | None] = _none,
    ) -> None:
        self.driver = driver
        self.unsent = unsent
        self.surface = surface
        self.session = session
        self.group = group
        self.holder: asyncio.Task[int] | None = None
        """The submission in flight that is not an instant command (at most one)."""
        self.queued: deque[str] = deque()
        """What was submitted while a turn ran, to submit when it ends (in order)."""
        self.one_turn = False
        self.draft = ""
        self.interrupts = 0
        self.awaited: list[str] = []
        self.stopped_command = False
        """The person pressed Ctrl-C twice at a running command: its task is cancelled."""
        self.woken = False
        surface.changed = session.app.invalidate
        surface.asked = self._wake

    def _running(self) -> bool:
        return self.holder is not None and not self.holder.done()

    async def run(self, first: str | None) -> int:
        try:
            if first is not None:
                self.one_turn = True
                self._start(first)
            while True:
                self.woken = False
                if self.one_turn and self.holder is not None and self.holder.done():
                    return self.holder.result()
                if self.surface.questions:
                    await self._answer(self.surface.questions.popleft())
                    continue
                try:
                    text = await self.session.prompt_async(self._message, default=self.draft, pre_run=self._pre_run)
                except _Woken:
                    self.draft = self.session.default_buffer.text
                    continue
                except KeyboardInterrupt:
                    self.draft = ""
                    self._interrupt()
                    continue
                except EOFError:
                    return await self._quit()
                self.draft = ""
                if text.strip()[1:] in EXIT_COMMANDS and text.strip().startswith("/"):
                    return await self._quit()  # `/exit`, `/quit`: as Ctrl-D
                self._submit(text.strip())
        finally:
            self._close()

    def _message(self) -> FormattedText:
        lines = self.surface.live()
        completer = self.session.completer
        if isinstance(completer, CommandCompleter) and completer.tab_waiting:
            lines.append(("fg:ansibrightblack", "completing… (your Tab applies when they arrive)\n"))
        if self._running() and self.awaited:
            lines.append(
                (
                    "fg:ansibrightblack",
                    "interrupted, waiting for the calls to answer · Ctrl-C again stops waiting (and the plugin that is not answering)\n",
                )
            )
        elif self._running():
            lines.append(("fg:ansibrightblack", "working · Ctrl-C interrupts\n"))
        lines.append(("bold", "> "))
        return FormattedText(lines)

    def _wake(self) -> None:
        app = self.session.app
        if app.is_running and app.future is not None and not app.future.done():
            app.exit(exception=_Woken())
        else:
            self.woken = True  # the prompt is starting: `_pre_run` closes it as it opens

    def _pre_run(self) -> None:
        if self.woken:
            self.woken = False
            self.session.app.exit(exception=_Woken())

    # --- submissions ----------------------------------------------------------------

    def _submit(self, text: str) -> None:
        if not text:
            return
        echo = ("> " + text, "bold")
        if not self._running() and not self.queued:
            self.surface.say(*echo)
            self._start(text)
        elif self._instant(text):
            self.surface.say(*echo)
            self.group.create_task(self._one(text))
        elif self.one_turn:
            # The echo and what became of it in one write: the live area is never redrawn between.
            self.surface.say_lines(
                echo, ("a turn is running: wait for it to end, or press Ctrl-C to interrupt it", "yellow")
            )
        else:
            self.queued.append(text)
            ahead = len(self.queued) - 1
            self.surface.say_lines(
                echo,
                (
                    f"queued: it runs when the turn ends{f', after {ahead} more' if ahead else ''} (Ctrl-C drops it)",
                    "yellow",
                ),
            )

    def _instant(self, text: str) -> bool:
        name = text[1:].partition(" ")[0] if text.startswith("/") else None
        return any(spec.name == name and spec.instant for spec in self.driver.commands())

    def _start(self, text: str) -> None:
        self.interrupts, self.awaited, self.stopped_command = 0, [], False
        self.holder = self.group.create_task(self._one(text))
        self.holder.add_done_callback(self._ended)

    def _ended(self, _: asyncio.Task[int]) -> None:
        if self.one_turn:
            self._wake()
            return
        self._put_back()
        if self.queued and not self.surface.closed:
            text = self.queued.popleft()
            self.surface.say("> " + text, "bold")
            self._start(text)
        self.session.app.invalidate()

    def _put_back(self) -> None:
        """A prompt a hook refused goes back in the input for the person to edit (unless they
        have begun typing something else: it is in the history, ↑ brings it back)."""
        text = self.unsent()
        if text is None:
            return
        buffer = self.session.default_buffer
        if buffer.text or self.draft:
            self.surface.say("your prompt was not sent (↑ brings it back to edit)", "yellow")
            return
        self.draft = text
        buffer.text = text
        buffer.cursor_position = len(text)
        self.surface.say("your prompt was not sent: it is back in the input to edit", "yellow")

    async def _one(self, text: str) -> int:
        try:
            return await self.driver.submit(text)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self.stopped_command or task is not self.holder or task is None or task.cancelling() > 1:
                raise  # the session is ending, not the person stopping a command
            task.uncancel()
            self.surface.say("stopped waiting for the command (a late answer is dropped)", "yellow")
            return 130
        except BingoError as exc:
            self.surface.say(f"bingo: {exc.line()}", "red")
            return exc.exit_code
        except Exception as exc:  # boundary: one failed submission must not end the session
            _log.exception("submission failed")
            self.surface.say(
                f"bingo: internal error ({type(exc).__name__}); details are in ~/.bingo/data/logs/bingo.log", "red"
            )
            return 1

    # --- interrupts, questions, the end ---------------------------------------------

    def _interrupt(self) -> None:
        if not self._running():
            return  # an idle prompt: Ctrl-C has cleared the line
        if not self.driver.busy():
            # A slash command, not a turn: nothing to interrupt but the wait for its answer.
            self.interrupts += 1
            if self.interrupts == 1:
                self.surface.say("a command is running; Ctrl-C again stops waiting for it", "yellow")
            elif self.holder is not None and not self.stopped_command:
                self.stopped_command = True
                self.holder.cancel()
            return
        self.interrupts += 1
        self._drop_queued()
        if self.interrupts == 1:
            # No line of its own: the turn's end says it was interrupted (one line), and the
            # calls still waited for are named by the turn and the status line.
            self.awaited = self.driver.interrupt()
            self.session.app.invalidate()
        elif self.awaited:
            stopped = self.driver.interrupt()
            self.surface.say(f"stopped waiting for {', '.join(stopped or self.awaited)}", "yellow")
            self.awaited = []

    def _drop_queued(self) -> None:
        """Ctrl-C stops what the person set going, the prompts queued behind it too (each is
        in the history: ↑ brings it back)."""
        while self.queued:
            self.surface.say(f"dropped the queued prompt (↑ brings it back): {self.queued.popleft()}", "yellow")

    async def _answer(self, question: Question) -> None:
        if question.answer.done():
            return
        try:
            said = await answer(question)
        except GateError:  # Esc where "no" is no answer: the asker hears nobody answered
            if not question.answer.done():
                question.answer.set_exception(GateError("the person did not answer"))
            self.surface.say(f"? {question.text} → (no answer)")
            return
        except (KeyboardInterrupt, EOFError):
            if not question.answer.done():
                if question.tool is not None:
                    question.answer.set_result("no")
                else:
                    question.answer.set_exception(GateError("the person did not answer"))
            self._interrupt()
            return
        if question.answer.done():
            return
        question.answer.set_result(said)
        if question.tool is None:
            self.surface.say(f"? {question.text} → {said}")
        elif said != "always":  # the run says what "always" allowed, and where it keeps it
            self.surface.say(
                f"allowed {question.tool} once"
                if said == "once"
                else f"declined {question.tool}" + (f": {question.words}" if question.words else "")
            )

    async def _quit(self) -> int:
        if not self._running() or self.holder is None:
            return 0
        if not self.driver.busy() and not self.stopped_command:
            # Leaving while a slash command runs: stop waiting for it rather than for its deadline.
            self.stopped_command = True
            self.holder.cancel()
        else:
            self._interrupt()
        self.surface.say("waiting for the turn to end")
        self._close()
        status = await self.holder
        return status if self.one_turn else 0

    def _close(self) -> None:
        """Nobody is left to answer: waiting questions and new ones are answered GateError."""
        self.surface.closed = True
        while self.surface.questions:
            question = self.surface.questions.popleft()
            if not question.answer.done():
                question.answer.set_exception(GateError("nobody is left to answer"))
