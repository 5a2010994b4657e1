"""The dispatcher through in-memory twins: what a person submits (a prompt or a slash
command) through its hooks to the command or the turn, with no process and no provider."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import pytest

from bingo.kernel.dispatch import Dispatcher, Submitted
from bingo.kernel.errors import GateError, ProviderError, UsageError
from bingo.kernel.frames import Frame
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.interfaces import CommandContext, PermissionAnswer, Provider
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.kernel.turn import Conversation, TurnResult
from bingo.wire import (
    CommandOutcome,
    CommandSpec,
    Completion,
    Delta,
    ErrorOutcome,
    HookOutcome,
    HookSpec,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    PromptOutcome,
    ProviderSpec,
    TextBlock,
    TextDelta,
    TextOutcome,
    ToolOutput,
)

_T = TypeVar("_T")


@dataclass
class EchoModel:
    """Answers every request with `heard: <the last user text>`."""

    requests: list[ModelRequest] = field(default_factory=lambda: [])
    spec: ProviderSpec = ProviderSpec(name="echo")
    source: str = "test"

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        self.requests.append(request)
        [block] = request.messages[-1].content
        assert isinstance(block, TextBlock)
        on_delta(TextDelta(text="heard: " + block.text))
        return ModelResponse(
            message=Message(role="assistant", content=[TextBlock(text="heard: " + block.text)]), stop_reason="end"
        )


@dataclass
class FakeCommand:
    name: str
    outcome: CommandOutcome = field(default_factory=lambda: TextOutcome(text="done"))
    ran: list[str] = field(default_factory=lambda: [])
    source: str = "zplug"

    @property
    def spec(self) -> CommandSpec:
        return CommandSpec(name=self.name, hint="a fake")

    async def run(self, args: str, ctx: CommandContext) -> CommandOutcome:
        self.ran.append(args)
        return self.outcome

    async def complete(self, partial: str, cwd: str) -> list[Completion]:
        if partial == "boom":
            raise RuntimeError("a completion that fails")
        return [Completion(value=partial + "!")]


@dataclass
class FakeHook:
    answer: HookOutcome
    site: str = "command"
    points: tuple[str, ...] = ("before",)
    name: str = "guard"
    source: str = "zguard"
    shown: list[Json] = field(default_factory=lambda: [])

    @property
    def spec(self) -> HookSpec:
        return HookSpec(name=self.name, site=self.site, points=list(self.points))

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        self.shown.append(payload)
        return self.answer

    async def observe(self, point: str, payload: Json) -> None:
        return None


@dataclass
class Person:
    """Answers every question with `says`; None: nobody is there."""

    says: str | None = None
    asked: list[tuple[str, list[str] | None]] = field(default_factory=lambda: [])

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        self.asked.append((question, choices))
        if self.says is None:
            raise GateError("no person to ask")
        return self.says


@dataclass
class Events:
    def text(self, text: str) -> None: ...
    def tool_started(self, call_id: str, name: str, input: Json) -> None: ...
    def tool_progress(self, call_id: str, tail: str) -> None: ...
    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None: ...
    def waiting(self, what: str) -> None: ...
    def refused(self, call_id: str, name: str, why: str) -> None: ...


@dataclass
class Session:
    """A run's session that counts what the dispatcher asks of it."""

    id: str | None = None
    turns: list[int] = field(default_factory=lambda: [])
    frames: list[Frame] = field(default_factory=lambda: [])

    def ensure(self) -> str:
        if self.id is None:
            self.id = "s1"
        return self.id

    def begin_turn(self, turn: int) -> None:
        self.turns.append(turn)

    def append(self, frame: Frame) -> None:
        self.frames.append(frame)


@dataclass
class World:
    dispatcher: Dispatcher
    session: Session
    model: EchoModel
    person: Person
    chosen: list[str]


Scenario = Callable[[World], Awaitable[_T]]


def _run(
    scenario: Scenario[_T],
    *,
    commands: tuple[FakeCommand, ...] = (),
    hooks: tuple[FakeHook, ...] = (),
    person: Person | None = None,
    choose: Callable[[], tuple[Provider, str]] | None = None,
    before_turn: Callable[[str], Awaitable[Callable[[], None] | None]] | None = None,
) -> _T:
    notices = Notices()
    registry = Registry(notices)
    for command in commands:
        registry.add_command(command)
    for hook in hooks:
        registry.add_hook(hook)
    model, session, person = EchoModel(), Session(), person or Person()
    settings = Settings(deadlines={"hook/decide": 1.0})
    chosen: list[str] = []

    def choose_model() -> tuple[Provider, str]:
        chosen.append("echo")
        return model, "echo-1"

    async def go() -> _T:
        async with Hooks(registry.hooks, notices, 1.0) as runner:
            conversation = Conversation(
                registry=registry,
                settings=settings,
                gate=Gate(settings.permissions),
                hooks=runner,
                notices=notices,
                log=session,
                events=Events(),
                asker=person,
                session="",
                cwd="/w",
            )
            dispatcher = Dispatcher(
                registry=registry,
                conversation=conversation,
                session=session,
                choose_model=choose or choose_model,
                before_turn=before_turn,
            )
            async with asyncio.timeout(5):
                return await scenario(World(dispatcher, session, model, person, chosen))

    return asyncio.run(go())


def _submit(text: str) -> Scenario[Submitted]:
    async def scenario(world: World) -> Submitted:
        return await world.dispatcher.submit(text)

    return scenario


# --- prompts -----------------------------------------------------------------------------


def test_a_prompt_is_a_turn_and_the_model_is_chosen_once_on_the_first() -> None:
    async def scenario(world: World) -> tuple[Submitted, Submitted, World]:
        return await world.dispatcher.submit("hello"), await world.dispatcher.submit("again"), world

    first, second, world = _run(scenario)

    assert first == Submitted(0, turn=TurnResult("done")) and second == Submitted(0, turn=TurnResult("done"))
    assert world.chosen == ["echo"]
    assert [r.model for r in world.model.requests] == ["echo-1", "echo-1"]
    assert world.session.id == "s1" and world.session.turns == [1, 2]


def test_an_interrupt_while_the_turns_checkpoint_is_taken_is_kept_and_the_prompt_is_not_sent() -> None:
    # Ctrl-C, /stop or an editor's cancel while `before_turn` (the checkpoint, on a thread)
    # runs: the conversation's turn has not begun, and its own start cleared the interrupt, so
    # the turn ran on as if nothing was asked (a hanging model hung on).
    entered, go_on, released = asyncio.Event(), asyncio.Event(), []

    async def checkpoint(prompt: str) -> Callable[[], None]:
        entered.set()
        await go_on.wait()
        return lambda: released.append(prompt)

    async def scenario(world: World) -> tuple[Submitted, list[str], Submitted, World]:
        submitted = asyncio.ensure_future(world.dispatcher.submit("hello"))
        await entered.wait()
        waiting = world.dispatcher.interrupt()
        go_on.set()
        first = await submitted
        return first, waiting, await world.dispatcher.submit("again"), world

    first, waiting, second, world = _run(scenario, before_turn=checkpoint)

    assert first == Submitted(1, turn=TurnResult("interrupted", "the turn was interrupted before the prompt was sent"))
    assert waiting == [] and released == ["hello", "again"]
    assert second == Submitted(0, turn=TurnResult("done"))  # the next prompt is not interrupted
    [request] = world.model.requests  # "hello" never reached the model
    assert request.messages[-1].content == [TextBlock(text="again")]


def test_no_model_to_choose_is_the_choices_error_and_no_session_is_made() -> None:
    def nothing() -> tuple[Provider, str]:
        raise ProviderError("no model provider is configured", "set ANTHROPIC_API_KEY")

    async def scenario(world: World) -> World:
        with pytest.raises(ProviderError):
            await world.dispatcher.submit("hello")
        return world

    world = _run(scenario, choose=nothing)

    assert world.session.id is None


def test_a_prompt_hook_that_asks_with_nobody_to_ask_ends_the_turn_naming_the_hook() -> None:
    ask = FakeHook(HookOutcome(outcome="ask"), site="prompt", points=("submit",))

    submitted = _run(_submit("hello"), hooks=(ask,))

    assert submitted == Submitted(
        1,
        turn=TurnResult(
            "blocked",
            "the prompt was not sent: hook guard (zguard) asked to confirm it, and there is no person to ask",
            unsent=True,
        ),
    )


def test_a_prompt_hook_that_redirects_and_asks_sends_the_redirected_prompt_once_the_person_says_yes() -> None:
    redirect = FakeHook(
        HookOutcome(outcome="redirect", value={"text": "hello, politely"}),
        site="prompt",
        points=("submit",),
        name="polite",
    )
    ask = FakeHook(HookOutcome(outcome="ask"), site="prompt", points=("submit",))
    person = Person("yes")

    async def scenario(world: World) -> tuple[Submitted, World]:
        return await world.dispatcher.submit("hello"), world

    submitted, world = _run(scenario, hooks=(redirect, ask), person=person)

    assert submitted.status == 0
    assert ask.shown == [{"text": "hello, politely"}]
    assert person.asked == [("hook guard (zguard) asks: send this prompt to the model?", ["yes", "no"])]
    [request] = world.model.requests
    assert request.messages[-1].content == [TextBlock(text="hello, politely")]


# --- slash commands ----------------------------------------------------------------------


def test_a_command_is_run_with_its_args_and_needs_no_model_nor_session() -> None:
    command = FakeCommand("wordcount")

    async def scenario(world: World) -> tuple[Submitted, World]:
        return await world.dispatcher.submit("/wordcount notes.txt"), world

    submitted, world = _run(scenario, commands=(command,))

    assert submitted == Submitted(0, TextOutcome(text="done"))
    assert command.ran == ["notes.txt"]
    assert world.chosen == [] and world.session.id is None


def test_a_command_that_answers_an_error_is_status_1() -> None:
    command = FakeCommand("broken", outcome=ErrorOutcome(message="it broke"))

    assert _run(_submit("/broken"), commands=(command,)) == Submitted(1, ErrorOutcome(message="it broke"))


def test_there_is_no_such_command_is_a_usage_error_and_no_hook_is_asked() -> None:
    guard = FakeHook(HookOutcome(outcome="continue"))

    async def scenario(world: World) -> None:
        with pytest.raises(UsageError) as caught:
            await world.dispatcher.submit("/nope")
        assert caught.value.line() == "there is no command /nope: bingo -p /help lists them"

    _run(scenario, hooks=(guard,))

    assert guard.shown == []


def test_a_hook_that_denies_a_command_refuses_it_with_its_reason() -> None:
    command = FakeCommand("wordcount")
    deny = FakeHook(HookOutcome(outcome="deny", value="not today"))

    submitted = _run(_submit("/wordcount notes.txt"), commands=(command,), hooks=(deny,))

    assert submitted == Submitted(1, ErrorOutcome(message="/wordcount was refused by a hook: not today"))
    assert deny.shown == [{"name": "wordcount", "args": "notes.txt"}]
    assert command.ran == []


def test_a_hook_that_asks_with_nobody_to_ask_refuses_the_command_naming_the_hook() -> None:
    command = FakeCommand("wordcount")
    ask = FakeHook(HookOutcome(outcome="ask"))

    submitted = _run(_submit("/wordcount notes.txt"), commands=(command,), hooks=(ask,))

    assert submitted == Submitted(
        1,
        ErrorOutcome(
            message="/wordcount was refused: hook guard (zguard) asked to confirm it, and there is no person to ask"
        ),
    )
    assert command.ran == []


@pytest.mark.parametrize(("says", "ran", "status"), [("yes", ["notes.txt"], 0), ("no", [], 1)])
def test_a_hook_that_asks_puts_the_command_to_the_person(says: str, ran: list[str], status: int) -> None:
    command = FakeCommand("wordcount")
    person = Person(says)

    submitted = _run(
        _submit("/wordcount notes.txt"),
        commands=(command,),
        hooks=(FakeHook(HookOutcome(outcome="ask")),),
        person=person,
    )

    assert person.asked == [("hook guard (zguard) asks: run /wordcount notes.txt?", ["yes", "no"])]
    assert command.ran == ran and submitted.status == status
    if says == "no":
        assert submitted.outcome == ErrorOutcome(message="/wordcount was refused: the person said no")


def test_a_redirect_runs_the_command_it_names_with_its_args() -> None:
    asked, instead = FakeCommand("wordcount"), FakeCommand("safe-count")
    redirect = FakeHook(HookOutcome(outcome="redirect", value={"name": "safe-count", "args": "--dry notes.txt"}))

    submitted = _run(_submit("/wordcount notes.txt"), commands=(asked, instead), hooks=(redirect,))

    assert submitted == Submitted(0, TextOutcome(text="done"))
    assert asked.ran == [] and instead.ran == ["--dry notes.txt"]


def test_a_redirect_to_no_command_is_the_usual_error() -> None:
    command = FakeCommand("wordcount")
    redirect = FakeHook(HookOutcome(outcome="redirect", value={"name": "nope", "args": ""}))

    async def scenario(world: World) -> None:
        with pytest.raises(UsageError) as caught:
            await world.dispatcher.submit("/wordcount notes.txt")
        assert caught.value.line() == "there is no command /nope: bingo -p /help lists them"

    _run(scenario, commands=(command,), hooks=(redirect,))

    assert command.ran == []


def test_a_redirect_that_asks_asks_about_the_command_that_will_run() -> None:
    instead = FakeCommand("safe-count")
    redirect = FakeHook(HookOutcome(outcome="redirect", value={"name": "safe-count", "args": ""}), name="swap")
    person = Person("yes")

    _run(
        _submit("/wordcount notes.txt"),
        commands=(FakeCommand("wordcount"), instead),
        hooks=(redirect, FakeHook(HookOutcome(outcome="ask"))),
        person=person,
    )

    assert person.asked == [("hook guard (zguard) asks: run /safe-count?", ["yes", "no"])]
    assert instead.ran == [""]


def test_a_commands_prompt_outcome_is_submitted_as_a_turn() -> None:
    command = FakeCommand("review", outcome=PromptOutcome(text="review this"))

    async def scenario(world: World) -> tuple[Submitted, World]:
        return await world.dispatcher.submit("/review"), world

    submitted, world = _run(scenario, commands=(command,))

    assert submitted == Submitted(0, PromptOutcome(text="review this"), TurnResult("done"))
    [request] = world.model.requests
    assert request.messages[-1].content == [TextBlock(text="review this")]


def test_a_commands_prompt_outcome_while_a_turn_runs_is_a_usage_error() -> None:
    command = FakeCommand("review", outcome=PromptOutcome(text="review this"))
    streaming, release = asyncio.Event(), asyncio.Event()

    @dataclass
    class Stuck:
        spec: ProviderSpec = ProviderSpec(name="stuck")
        source: str = "test"

        async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
            streaming.set()
            await release.wait()
            return ModelResponse(message=Message(role="assistant", content=[TextBlock(text="ok")]), stop_reason="end")

    stuck = Stuck()

    def choose() -> tuple[Provider, str]:
        return stuck, "stuck-1"

    async def scenario(world: World) -> tuple[bool, bool, Submitted]:
        turn = asyncio.ensure_future(world.dispatcher.submit("hello"))
        await streaming.wait()
        with pytest.raises(UsageError) as caught:
            await world.dispatcher.submit("/review")
        assert caught.value.line() == "/review starts a turn, and one is running: wait for it to end, then run it again"
        busy = world.dispatcher.busy()
        release.set()
        submitted = await turn
        return busy, world.dispatcher.busy(), submitted

    during, after, submitted = _run(scenario, commands=(command,), choose=choose)

    assert during and not after and submitted.status == 0


# --- what a surface asks while a run goes on ---------------------------------------------


def test_commands_are_listed_by_name_and_completions_never_raise() -> None:
    async def scenario(
        world: World,
    ) -> tuple[list[str], list[Completion], list[Completion], list[Completion], list[str]]:
        dispatcher = world.dispatcher
        return (
            [spec.name for spec in dispatcher.commands()],
            await dispatcher.complete("b", "x"),
            await dispatcher.complete("b", "boom"),
            await dispatcher.complete("nope", "x"),
            dispatcher.interrupt(),
        )

    names, some, failed, none, interrupted = _run(scenario, commands=(FakeCommand("b"), FakeCommand("a")))

    assert names == ["a", "b"]
    assert some == [Completion(value="x!")] and failed == [] and none == []
    assert interrupted == []  # no turn is running
