"""One conversation behind one surface: the handle every surface drives.

A `Run` owns what one conversation is, whatever shows it (the terminal, `-p`, a Matrix room,
an editor's ACP session, and later a subagent's child conversation): its session (which
stored session it writes, `RunSession`: the one place that says so), its conversation, the
kernel's dispatcher with bingo's own commands bound to this run (`_commands.TABLE`), the
"always" answers saved for its project, the `session.start` and `session.end` hooks (at its
opening and closing, and around `/clear` and `/resume`), its listener on the process's
notices (removed when it closes), and its closing.

It is made only by the factory (`RunFactory.open`), which shares the process's registry,
gate, hooks, plugins and model choice among its runs. It draws nothing (its surface does)
and parses nothing (the dispatcher does).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import signal
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..kernel.dispatch import ChooseModel, Dispatcher, Submitted
from ..kernel.errors import ProviderError, SessionError
from ..kernel.frames import CompactionFrame, Frame, history
from ..kernel.hooks import Hooks
from ..kernel.interfaces import Command, ToolCall
from ..kernel.notices import Notices
from ..kernel.turn import Compacted, Conversation
from ..surfaces import Surface, one_line
from ..wire import CommandSpec, Completion, ImageBlock, Json, Message, Notice, ToolOutput, Usage
from ._session import RunSession, compacted

if TYPE_CHECKING:
    from ..checkpoint import Checkpoints
    from ..kernel.interfaces import Provider
    from ..store import SessionInfo
    from ._child import ChildRun

__all__ = ["CHECKPOINT_SECONDS", "Place", "Run", "current_run"]

Place = Literal["terminal", "print", "room", "editor"]
"""Where a run's conversation is shown: which of bingo's commands it offers (the table),
what `/clear` means there, and whether its session id is the editor's to keep. A subagent's
child conversation will be one more (issue 33)."""

_CURRENT: contextvars.ContextVar[Run] = contextvars.ContextVar("bingo_run")
"""The run whose work this task is: set by the run while it dispatches (and, for a run opened
in a task of its own, from its opening). A notice raised in such a task is that run's; one
raised elsewhere (a plugin's, from the bridge's own task) is nobody's in particular."""


CHECKPOINT_SECONDS = 30.0
"""Seconds a checkpoint may hold a prompt's turn back before it is given up (with a notice)."""
RESTORE_WAIT = 10.0
"""Seconds a turn waits for another process's restore of the project to end."""
_log = logging.getLogger(__name__)

_LABEL = 80
"""Characters of a prompt's first line a checkpoint keeps, for `/rewind`'s list."""


def current_run() -> Run | None:
    """The run whose work the calling task is, if any."""
    return _CURRENT.get(None)


class Run:
    """The run behind one surface (its `RunHandle`): what is submitted goes to the kernel's
    dispatcher, and what became of it is shown on the surface; plus what bingo's own
    commands and the gate's "always" need of this run."""

    __slots__ = (
        "_checkpoints",
        "_choose_model",
        "_data_dir",
        "_forget",
        "_hooks",
        "_notices",
        "_solo",
        "_unlisten",
        "children",
        "closed",
        "commands_of",
        "conversation",
        "dispatcher",
        "place",
        "session",
        "submitting",
        "surface",
        "unsent",
    )

    def __init__(
        self,
        *,
        place: Place,
        surface: Surface,
        session: RunSession,
        conversation: Conversation,
        hooks: Hooks,
        notices: Notices,
        data_dir: Path,
        choose_model: ChooseModel,
        commands: Callable[[Run], Mapping[str, Command]],
        help_hint: str,
        solo: bool,
        forget: Callable[[Run], None],
        checkpoints: Callable[[], Checkpoints] | None = None,
    ) -> None:
        self.place: Place = place
        self._checkpoints = checkpoints
        """The project's checkpoints, one taken before each prompt's turn (ADR-0044)."""
        self.surface = surface
        self.session = session
        self.conversation = conversation
        self._hooks = hooks
        self._notices = notices
        self._data_dir = data_dir
        self._choose_model = choose_model
        self._solo = solo
        self._forget = forget
        """Tells the factory this run is closed."""
        """The process's only run (the terminal's, `-p`'s): every notice is its own."""
        self.unsent: str | None = None
        """What the person submitted last, when a `prompt.submit` hook refused the prompt it
        made (the terminal puts it back in the input); taken by `take_unsent`."""
        self.submitting = False
        """True while a submission of this run is being run (a command or a turn)."""
        self.closed = False
        self.children: list[ChildRun] = []
        """The child conversations this run's `agent` calls have open now (ADR-0049)."""
        self.commands_of: Mapping[str, Command] = commands(self)
        """bingo's own commands, bound to this run (the table's entries for its place)."""
        self.dispatcher = Dispatcher(
            registry=conversation.registry,
            conversation=conversation,
            session=session,
            choose_model=choose_model,
            help_hint=help_hint,
            commands=self.commands_of,
            before_turn=self._checkpoint,
        )
        conversation.on_always = self.remember
        self._unlisten = notices.listen(self._heard)

    # --- what a surface drives ------------------------------------------------------------

    def take_unsent(self) -> str | None:
        """The last submission a prompt hook refused, once (None when there is none)."""
        unsent, self.unsent = self.unsent, None
        return unsent

    def session_id(self) -> str | None:
        """The session this run writes to, once it has one."""
        return self.session.id

    def frames(self) -> list[Frame]:
        """The stored session's frames (none for a new one)."""
        return self.session.frames()

    def used(self) -> Usage:
        """What this run's model responses spent."""
        return self.conversation.used

    def model(self) -> str | None:
        """The model this run's turns use, once one is chosen."""
        return self.conversation.model if self.conversation.provider is not None else None

    def busy(self) -> bool:
        return self.dispatcher.busy()

    def commands(self) -> list[CommandSpec]:
        return self.dispatcher.commands()

    async def complete(self, name: str, partial: str) -> list[Completion]:
        return await self.dispatcher.complete(name, partial)

    def interrupt(self) -> list[str]:
        return self.dispatcher.interrupt()

    def chooser(self) -> tuple[Provider, str]:
        """The model this run's turns use, chosen as a turn chooses it (a child's too: its
        requests are counted as the run's)."""
        return self._choose_model()

    async def dispatch(self, text: str, images: Sequence[ImageBlock] = ()) -> Submitted:
        """Run a prompt (with its images) or a slash command, as this task's run; what became
        of it, for the surface to show. The notices a plugin raised past its limit are said
        after it, as one line per plugin.

        Raises:
            BingoError: as `Dispatcher.submit`.
        """
        with self._as_current():
            try:
                return await self._submitted(text, images)
            finally:
                self._notices.flush()

    @contextlib.contextmanager
    def _as_current(self) -> Generator[None]:
        """This task's work is this run's while it dispatches, then whose it was before (a
        run's own task stays its own; a child run's dispatch gives its parent's task back)."""
        token = _CURRENT.set(self)
        try:
            yield
        finally:
            _CURRENT.reset(token)

    async def _submitted(self, text: str, images: Sequence[ImageBlock] = ()) -> Submitted:
        self.submitting = True
        try:
            return await self.dispatcher.submit(text, images)
        finally:
            self.submitting = False

    async def submit(self, text: str) -> int:
        """Run a slash command or a model turn, and show what became of it; the exit status."""
        with self._as_current():
            try:
                submitted = await self._submitted(text)
                if submitted.outcome is not None:
                    self.surface.outcome(submitted.outcome)
                turn = submitted.turn
                self.unsent = text if turn is not None and turn.unsent else None
                if turn is not None and turn.status != "done":
                    self.surface.end()
                    self.surface.notice(Notice(source="bingo", message=turn.reason, level="error"))
                return submitted.status
            finally:
                # The notices a plugin raised past its limit are said as one line per plugin.
                self._notices.flush()
                self.surface.end()

    async def submit_with_interrupts(self, text: str) -> int:
        """`submit`, with Ctrl-C interrupting the turn: the first sends the cancels and waits
        for the answers (the seed's promise); a second stops waiting for them."""
        loop = asyncio.get_running_loop()
        interrupts = 0

        def on_sigint() -> None:
            nonlocal interrupts
            interrupts += 1
            if interrupts == 1:
                if self.interrupt():
                    self.surface.waiting(
                        "still waiting for the interrupted calls to answer: Ctrl-C again stops waiting"
                    )
                return
            stopped = self.interrupt()
            if stopped:
                self.surface.waiting(f"stopped waiting for {', '.join(stopped)}")

        loop.add_signal_handler(signal.SIGINT, on_sigint)
        try:
            return await self.submit(text)
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    async def _checkpoint(self, prompt: str) -> Callable[[], None] | None:
        """Before `prompt`'s turn: arrange its checkpoint. Once the turn's first request is
        out (the conversation's `after_sent`: the checkpoint's import, its store, git's
        excludes file and the walk never compete with the request for the CPU), a thread
        holds the project for the turn (waiting for another process's restore to end,
        `RESTORE_WAIT`) and checkpoints its files, given up (with one notice) past
        `CHECKPOINT_SECONDS`. No tool of the turn runs before the checkpoint ends (the
        conversation's `before_tools`), so it holds the project as it was before the prompt.
        The answer lets the project go once both the turn and the checkpoint have ended."""
        session = self.session.id
        if self._checkpoints is None or session is None:
            return None
        import threading
        import time

        try:
            seq = self.session.store.info(session).frames
        except SessionError:
            return None
        made = self._checkpoints
        label = (prompt.strip().splitlines() or [""])[0][:_LABEL]
        turn = self.conversation.turn + 1
        held: list[Callable[[], None]] = []

        def take(checkpoints: Checkpoints) -> None:  # in a thread
            release = checkpoints.turn(RESTORE_WAIT)
            if release is not None:
                held.append(release)
            deadline = time.monotonic() + CHECKPOINT_SECONDS

            def stop() -> bool:  # the look stops at its next directory and says so itself
                return time.monotonic() > deadline

            checkpoints.take(session=session, seq=seq, turn=turn, label=label, stop=stop)

        loop = asyncio.get_running_loop()
        taken: asyncio.Future[None] = loop.create_future()
        begun = threading.Event()

        def finished(running: asyncio.Future[None]) -> None:
            if taken.done():
                return
            failed = None if running.cancelled() else running.exception()
            if failed is None:
                taken.set_result(None)
            else:
                taken.set_exception(failed)

        def begin() -> None:
            if begun.is_set():
                return
            begun.set()
            try:
                # The thread is the run's work: a notice it raises is this run's (as to_thread's).
                checkpoints, context = made(), contextvars.copy_context()
                running = loop.run_in_executor(None, lambda: context.run(take, checkpoints))
            except Exception as exc:  # boundary: called from within the provider's request
                _log.exception("the checkpoint could not begin")
                why = f"{type(exc).__name__}: {exc}"
                self._notices.say(
                    "bingo", f"no checkpoint was taken before this prompt: {why}; the turn goes on", "warning"
                )
                taken.set_result(None)
                return
            running.add_done_callback(finished)

        self.conversation.before_tools = taken
        self.conversation.after_sent = begin
        over, gone = threading.Event(), threading.Event()

        def let_go(_: object = None) -> None:
            if over.is_set() and taken.done() and held and not gone.is_set():
                gone.set()
                held[0]()

        def ended() -> None:
            begin()  # a turn the dispatcher ended before it began still takes its checkpoint
            over.set()
            let_go()

        taken.add_done_callback(let_go)
        return ended

    # --- the session ---------------------------------------------------------------------

    def started(self) -> None:
        """Tell the `session.start` hooks that this run's session starts (its id, or "" for
        one the first prompt will make)."""
        self._hooks.observe("session", "start", {"session": self.session.id or ""})

    def ended(self) -> None:
        """Tell the `session.end` hooks that this run's session ends: at the run's close, and
        when `/clear` or `/resume` leaves it for another."""
        self._hooks.observe("session", "end", {"session": self.session.id or ""})

    def close(self) -> None:
        """The run is over: its session ends (the hooks are told), its store is closed, and it
        stops listening to the process's notices. Closing twice does nothing."""
        if self.closed:
            return
        self.closed = True
        self._unlisten()
        self._forget(self)
        self.ended()
        self.session.close()

    def own_task(self) -> None:
        """The calling task is this run's for good (the terminal's main task, a room's
        worker): what it and the tasks it starts raise is this run's from now on."""
        _CURRENT.set(self)

    def _heard(self, notice: Notice) -> None:
        """A notice of the process: kept in this run's session when it is this run's (raised
        in its task, or anywhere when it is the process's only run)."""
        here = _CURRENT.get(None)
        if here is self or (here is None and self._solo):
            self.session.notice(notice)

    def clear(self) -> None:
        """`/clear`: the next prompt starts a fresh conversation. On the terminal and in a
        room that is a new session (the hooks see this one end and the next start, as at a
        run's close and start); in an editor, whose session id is the editor's to keep
        (ADR-0037), the same stored session goes on after a compaction to nothing (`reason`
        "clear"), so the model sees nothing before it and a load replays it all."""
        conversation, session = self.conversation, self.session
        if self.place == "editor":
            from ..wire import Compaction

            if session.id is not None and conversation.messages:
                session.append(
                    CompactionFrame(
                        compaction=Compaction(messages=[]), turn=conversation.turn, reason="clear", by="/clear"
                    )
                )
            conversation.messages = []
            conversation.pieces = []
            return
        self.ended()
        if session.id is not None:
            session.store.release(session.id)
        session.id, session.turn = None, 0
        conversation.messages, conversation.turn, conversation.session = [], 0, ""
        conversation.pieces = []  # /context speaks of the new session's turns only
        self.started()

    def sessions(self) -> list[SessionInfo]:
        """This project's sessions, the latest first (`/sessions`)."""
        return self.session.store.sessions(self.session.project)

    def spent(self) -> Usage | None:
        """What the whole session spent, summed from its frames (None before it has any)."""
        from ..kernel.frames import spent

        return spent(self.session.store.frames(self.session.id)) if self.session.id else None

    def resume(self, session: str) -> tuple[str, list[Message], tuple[int, int]]:
        """Continue `session` (an id or a unique prefix, of this project) from the next prompt
        (`/resume`), letting the current one go: its id, its history and what a compaction
        made of it (`compacted`).

        Raises:
            SessionError: no such session in this project, or another run writes it.
        """
        store, project = self.session.store, self.session.project
        found = store.find(session, project)
        if store.info(found).project != project:
            raise SessionError(
                f"session {found} belongs to another project, {store.info(found).project}",
                f"continue it there, or here with bingo --resume {found}",
            )
        switched = found != self.session.id
        if switched:
            store.claim(found)  # before letting the current one go: a refusal leaves it as it was
            self.ended()
            if self.session.id is not None:
                store.release(self.session.id)
        frames = store.frames(found)
        past = history(frames)
        self.session.id, self.session.turn = found, 0
        self.conversation.messages, self.conversation.turn, self.conversation.session = past, 0, found
        self.conversation.pieces = []
        if switched:
            self.started()
        return found, past, compacted(frames)

    async def preview(self, name: str, input: Json, cwd: str | None = None) -> ToolOutput | None:
        """What a call would do, with nothing written, in this conversation's session and
        working directory (`cwd` when given: a subagent's, ADR-0049) (`tools.preview`: `edit`
        and `write` say; other tools None): what a permission question shows (ADR-0034)."""
        from ..tools import preview

        conversation = self.conversation
        call = ToolCall(
            call_id="preview",
            input=input,
            cwd=cwd or conversation.cwd,
            session=conversation.session,
            turn=conversation.turn,
        )
        return await preview(conversation.registry.tools.get(name), call)

    # --- the model, for /context, /model and /compact ------------------------------------

    def choose(self) -> None:
        """Give the conversation the model a turn would use (its summary, its window) when it
        has none yet; none when none can be had."""
        if self.conversation.provider is None:
            try:
                self.conversation.provider, self.conversation.model = self._choose_model()
            except ProviderError:
                pass

    async def compact(self) -> Compacted:
        """Compact by hand, with the model a turn would use once there is history to summarise."""
        if self.conversation.messages:
            self.choose()
        return await self.conversation.compact("manual")

    # --- "always" ------------------------------------------------------------------------

    def remember(self, rule: str) -> None:
        """Append `rule` to `permissions.allow` in `<project>/.bingo/settings.local.json`
        (a "yes, always"), merged into what the file holds, written atomically, and kept
        trusted as written (`trust.keep_written`)."""
        self._save_local(("permissions", "allow"), rule, rule)

    def remember_host(self, who: str, host: str) -> None:
        """Save the host an "always" answered for `who` (`bash`: `sandbox.network.allow`; a
        plugin: `plugins.<who>.sandbox.network`) in `settings.local.json`, as `remember` does."""
        keys = ("sandbox", "network", "allow") if who == "bash" else ("plugins", who, "sandbox", "network")
        self._save_local(keys, host, f"the host {host} for {who}")

    def _save_local(self, keys: tuple[str, ...], value: str, what: str) -> None:
        """Append `value` to the list at `keys` in `<project>/.bingo/settings.local.json`
        (`bridge.save_local`), and say what became of it."""
        from ..bridge import save_local

        for notice in save_local(Path(self.session.project), self._data_dir, keys, value, one_line(what)):
            self.surface.notice(notice)
