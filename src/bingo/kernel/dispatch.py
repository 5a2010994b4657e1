"""The one way in for what a person submits, from any surface: a prompt or a slash command.

Owns the path of a submission. A slash command is looked up by name; its `command.before`
hooks decide (`deny` and `block` refuse it; `ask` asks the person "run /name?" and, with
nobody to ask, refuses it naming the hook; a `redirect` runs the command its payload names,
through the same lookup, so a redirect to no command is the usual error); then it runs, and
a `prompt` outcome becomes the person's message. A prompt (with the images it came with,
which `images.check_images` must pass first) becomes a turn: the model is
chosen on the first (the choice is injected, so the kernel never imports a provider), the
session is opened, and the turn loop runs it (`prompt.submit`, `tool.before` and the gate
are the turn's). Also what a surface may ask while a run goes on: whether a turn is
running, interrupting it, the commands and their completions.

It draws nothing: `submit` answers what became of the submission (`Submitted`) and the
surface shows it. It does not build the run (app.py composes the registry, hooks,
conversation and this), and knows neither the bridge nor the providers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..wire import CommandOutcome, CommandSpec, Completion, ErrorOutcome, ImageBlock, PromptOutcome, is_object
from .errors import UsageError
from .hooks import confirm
from .images import check_images
from .interfaces import Command, CommandContext, Provider
from .registry import Registry
from .turn import Conversation, TurnResult

__all__ = ["ChooseModel", "Dispatcher", "RunSession", "Submitted"]

_log = logging.getLogger(__name__)

ChooseModel = Callable[[], tuple[Provider, str]]
"""The model for this run's turns, chosen when the first turn needs one: the provider and
the model name. Raises ProviderError (or another BingoError) when there is none."""


class RunSession(Protocol):
    """The session a run writes to, created when its first turn is written."""

    @property
    def id(self) -> str | None:
        """The session's id, or None until something is written to it."""
        ...

    def ensure(self) -> str:
        """The session's id, creating the session if there is none yet."""
        ...

    def begin_turn(self, turn: int) -> None:
        """Turn `turn` starts: what is written from now on belongs to it."""
        ...


@dataclass(frozen=True, slots=True)
class Submitted:
    """What became of one submission. `status` is the exit status (0 done; 1 the command
    failed or was refused, or the turn did not end well); `outcome` is a command's outcome,
    for the surface to show (None for a prompt); `turn` is how the turn ended, if one ran."""

    status: int
    outcome: CommandOutcome | None = None
    turn: TurnResult | None = None


class Dispatcher:
    """Takes what a person submits and runs it: a slash command through its hooks, a prompt
    (or a command's `prompt` outcome) as a turn of `conversation`."""

    def __init__(
        self,
        *,
        registry: Registry,
        conversation: Conversation,
        session: RunSession,
        choose_model: ChooseModel,
        help_hint: str = "bingo -p /help lists them",
        commands: Mapping[str, Command] | None = None,
        before_turn: Callable[[str], Awaitable[Callable[[], None] | None]] | None = None,
    ) -> None:
        self._registry = registry
        self._before_turn = before_turn
        """Awaited with the prompt before each turn starts, its session made (a checkpoint);
        what it answers is called when the turn ends (the project's lock let go)."""
        self._own: Mapping[str, Command] = commands or {}
        """bingo's own commands, bound to this run (its table's), found before the registry's."""
        self._help_hint = help_hint
        """What to do about a command that does not exist, from where the person is."""
        self._conversation = conversation
        self._session = session
        self._choose_model = choose_model
        self._busy = False
        self._before = False
        """True while the turn waits for `before_turn` (its checkpoint), the conversation's
        turn not begun: an interrupt then is kept for it (`_early`), never lost."""
        self._early = False

    def busy(self) -> bool:
        """True while a turn is running."""
        return self._busy

    def interrupt(self) -> list[str]:
        """Interrupt the running turn, if one is; the names of calls still being waited for.
        Before the turn has begun (its checkpoint is being taken) the prompt is not sent."""
        if not self._busy:
            return []
        if self._before:
            self._early = True
            return []
        return self._conversation.interrupt()

    def commands(self) -> list[CommandSpec]:
        """Every command, built-in and plugin, by name."""
        commands = self._every()
        return [commands[name].spec for name in sorted(commands)]

    def _every(self) -> dict[str, Command]:
        return {**self._registry.commands, **self._own}

    async def complete(self, name: str, partial: str) -> list[Completion]:
        """Ways to finish the args of `/name`; never raises (none is a fine answer)."""
        command = self._own.get(name) or self._registry.commands.get(name)
        if command is None:
            return []
        try:
            return await command.complete(partial, self._conversation.cwd)
        except Exception:  # boundary: completion is never an error
            _log.exception("completion of /%s failed", name)
            return []

    async def submit(self, text: str, images: Sequence[ImageBlock] = ()) -> Submitted:
        """Run `text`: a slash command when it starts with `/`, otherwise a turn, with the
        `images` the person gave with it (a prompt's only).

        Raises:
            UsageError: there is no such command (or a hook redirected to none), a
                command's `prompt` outcome would start a turn while one is running, images
                came with a slash command, or an image is not one a turn can send
                (`check_images`: its type, its size, its bytes).
            BingoError: no model could be chosen for the turn.
        """
        if images:
            if text.startswith("/"):
                raise UsageError(
                    "images go with a prompt, not with a slash command",
                    "send the command alone, then the images with a prompt",
                )
            check_images(images)
        if not text.startswith("/"):
            return await self._turn(text, list(images))
        # The name ends at the first space or line break (a prompt on stdin comes after a line break).
        line = text[1:]
        cut = next((at for at, char in enumerate(line) if char.isspace()), len(line))
        name, args = line[:cut], line[cut + 1 :]
        outcome = await self._command(name, args)
        if not isinstance(outcome, PromptOutcome):
            return Submitted(1 if isinstance(outcome, ErrorOutcome) else 0, outcome)
        if self._busy:
            raise UsageError(f"/{name} starts a turn, and one is running", "wait for it to end, then run it again")
        submitted = await self._turn(outcome.text)
        return Submitted(submitted.status, outcome, submitted.turn)

    async def _command(self, name: str, args: str) -> CommandOutcome:
        """Put `/name args` to its `command.before` hooks and run what they leave."""
        command = self._lookup(name)
        verdict = await self._conversation.hooks.decide("command", "before", {"name": name, "args": args})
        if verdict.action in ("deny", "block"):
            return ErrorOutcome(message=f"/{name} was refused by a hook: {verdict.reason or 'no reason given'}")
        payload = verdict.payload
        if verdict.redirected_by is not None and is_object(payload):
            # A whole payload (the fold checked its shape): the command it names runs instead.
            redirected, redirected_args = payload.get("name"), payload.get("args")
            if isinstance(redirected, str) and isinstance(redirected_args, str):
                name, args = redirected, redirected_args
                command = self._lookup(name)
        if verdict.action == "ask":
            why = await confirm(self._conversation.asker, verdict, f"run /{name}{' ' + args if args else ''}?")
            if why is not None:
                return ErrorOutcome(message=f"/{name} was refused: {why}")
        return await command.run(args, CommandContext(cwd=self._conversation.cwd, session=self._session.id or ""))

    def _lookup(self, name: str) -> Command:
        command = self._own.get(name) or self._registry.commands.get(name)
        if command is None:
            import difflib  # only for a name that is wrong: start-up does not pay for it

            near = difflib.get_close_matches(name, list(self._every()), n=1, cutoff=0.75)
            hint = f"did you mean /{near[0]}? {self._help_hint}" if near else self._help_hint
            raise UsageError(f"there is no command /{name}", hint)
        return command

    async def _turn(self, prompt: str, images: list[ImageBlock] | None = None) -> Submitted:
        conversation = self._conversation
        if conversation.provider is None:
            conversation.provider, conversation.model = self._choose_model()
        conversation.session = self._session.ensure()
        self._session.begin_turn(conversation.turn + 1)
        self._busy, self._before, self._early = True, True, False
        try:
            release = await self._before_turn(prompt) if self._before_turn is not None else None
            self._before = False  # from here the conversation's turn takes an interrupt itself
            try:
                if self._early:
                    result = TurnResult("interrupted", "the turn was interrupted before the prompt was sent")
                else:
                    result = await conversation.run_turn(prompt, images or ())
            finally:
                if release is not None:
                    release()
        finally:
            self._busy = self._before = False
        return Submitted(0 if result.status == "done" else 1, turn=result)
