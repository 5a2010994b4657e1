"""The turn loop through in-memory twins: a scripted provider, fake tools and hooks, a list
for a session log. Covers the order of a turn and the one path every tool call takes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from bingo.kernel.errors import GateError
from bingo.kernel.frames import Frame, ToolCallFrame, ToolResultFrame
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.interfaces import REQUEST_SENT, PermissionAnswer, ToolCall
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Permissions, Settings
from bingo.kernel.turn import Conversation
from bingo.wire import (
    Compaction,
    CompactionContext,
    CompactorSpec,
    ContextPiece,
    ContextQuery,
    ContributorSpec,
    Delta,
    HookOutcome,
    HookSpec,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    Notice,
    ProviderSpec,
    TextBlock,
    TextDelta,
    TextPart,
    ToolOutput,
    ToolResultBlock,
    ToolSpec,
    ToolTraits,
    ToolUseBlock,
)

SAFE = ToolTraits(trusted=True, read_only=True, concurrency_safe=True, interrupt="cancel")


@dataclass
class ScriptedProvider:
    replies: list[list[TextBlock | ToolUseBlock]]
    requests: list[ModelRequest] = field(default_factory=lambda: [])
    spec: ProviderSpec = ProviderSpec(name="scripted")
    source: str = "test"

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        self.requests.append(request)
        content = self.replies.pop(0) if self.replies else [TextBlock(text="(end)")]
        for block in content:
            if isinstance(block, TextBlock):
                on_delta(TextDelta(text=block.text))
        stop: Literal["toolUse", "end"] = "toolUse" if any(isinstance(b, ToolUseBlock) for b in content) else "end"
        return ModelResponse(message=Message(role="assistant", content=list(content)), stop_reason=stop)


@dataclass
class FakeTool:
    name: str
    traits: ToolTraits = ToolTraits()
    calls: list[Json] = field(default_factory=lambda: [])
    gate: asyncio.Event | None = None
    running: int = 0
    peak: int = 0
    source: str = "builtin"  # stand-ins for bingo's own tools, whose names the registry reserves

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name)

    async def call(self, call: ToolCall) -> ToolOutput:
        self.calls.append(call.input)
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            return ToolOutput(parts=[TextPart(text=f"{self.name} ran")])
        finally:
            self.running -= 1


@dataclass
class FakeHook:
    answer: HookOutcome
    spec: HookSpec = HookSpec(name="h", site="tool", points=["before"])
    source: str = "test"

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        return self.answer

    async def observe(self, point: str, payload: Json) -> None:
        return None


@dataclass
class Events:
    texts: list[str] = field(default_factory=lambda: [])

    def text(self, text: str) -> None:
        self.texts.append(text)

    def tool_started(self, call_id: str, name: str, input: Json) -> None: ...
    def tool_progress(self, call_id: str, tail: str) -> None: ...
    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None: ...
    def waiting(self, what: str) -> None: ...
    def refused(self, call_id: str, name: str, why: str) -> None: ...


@dataclass
class Person:
    answer: PermissionAnswer | None = None  # None: nobody is there
    asked: list[str] = field(default_factory=lambda: [])

    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        self.asked.append(name)
        if self.answer is None:
            raise GateError("no person to ask")
        return self.answer

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise GateError("no person to ask")


@dataclass
class Log:
    frames: list[Frame] = field(default_factory=lambda: [])

    def append(self, frame: Frame) -> None:
        self.frames.append(frame)


def _use(call_id: str, name: str, input: Json = None) -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name=name, input=input if input is not None else {})


def _run(
    replies: list[list[TextBlock | ToolUseBlock]],
    *,
    tools: tuple[FakeTool, ...] = (),
    hooks: tuple[FakeHook, ...] = (),
    person: Person | None = None,
    allow: tuple[str, ...] = (),
    budget: int = 100_000,
    prepare: Callable[[Registry], None] | None = None,
) -> tuple[Conversation, ScriptedProvider, Log, list[Notice], str]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)
    registry = Registry(notices)
    for tool in tools:
        registry.add_tool(tool)
    for hook in hooks:
        registry.add_hook(hook)
    if prepare is not None:
        prepare(registry)
    provider = ScriptedProvider(replies)
    log = Log()
    settings = Settings(
        permissions=Permissions(allow=allow),
        context_budget=budget,
        deadlines={"context/contribute": 0.2, "hook/decide": 1.0},
    )

    async def go() -> tuple[Conversation, str]:
        async with Hooks(registry.hooks, notices, 1.0) as runner:
            conversation = Conversation(
                registry=registry,
                settings=settings,
                gate=Gate(settings.permissions),
                hooks=runner,
                notices=notices,
                log=log,
                events=Events(),
                asker=person or Person(),
                session="s1",
                cwd="/tmp",
                provider=provider,
            )
            async with asyncio.timeout(5):
                result = await conversation.run_turn("hello")
            return conversation, result.status

    conversation, status = asyncio.run(go())
    return conversation, provider, log, said, status


def _results(request: ModelRequest) -> list[ToolResultBlock]:
    return [b for m in request.messages for b in m.content if isinstance(b, ToolResultBlock)]


def _text(block: ToolResultBlock) -> str:
    return "".join(p.text for p in block.parts if isinstance(p, TextPart))


def test_a_trusted_read_only_tool_runs_without_asking() -> None:
    read = FakeTool("read", SAFE)
    person = Person("no")
    _, provider, _, _, status = _run([[_use("1", "read")], [TextBlock(text="ok")]], tools=(read,), person=person)
    assert status == "done" and read.calls == [{}] and person.asked == []
    assert _text(_results(provider.requests[1])[0]) == "read ran"


def test_an_untrusted_tool_with_nobody_to_ask_is_refused_in_words() -> None:
    bash = FakeTool("bash")
    _, provider, log, _, _ = _run([[_use("1", "bash")], [TextBlock(text="ok")]], tools=(bash,))
    assert bash.calls == []
    [result] = _results(provider.requests[1])
    assert result.is_error and _text(result) == "bash is not allowed here: add it to permissions.allow or pass --allow"
    assert not any(isinstance(f, ToolCallFrame) for f in log.frames)  # a refused call never ran
    assert any(isinstance(f, ToolResultFrame) for f in log.frames)


def test_a_hook_cannot_allow_but_can_make_the_gate_ask() -> None:
    read = FakeTool("read", SAFE)
    person = Person("once")
    _run(
        [[_use("1", "read")], [TextBlock(text="ok")]],
        tools=(read,),
        person=person,
        hooks=(FakeHook(HookOutcome(outcome="ask")),),
    )
    assert person.asked == ["read"] and read.calls == [{}]


def test_a_redirected_call_goes_through_the_gate_as_what_it_has_become() -> None:
    read, bash = FakeTool("read", SAFE), FakeTool("bash")
    hook = FakeHook(
        HookOutcome(outcome="redirect", value={"tool": "bash", "input": {"command": "rm -rf /"}, "callId": "1"})
    )
    _, provider, _, _, _ = _run([[_use("1", "read")], [TextBlock(text="ok")]], tools=(read, bash), hooks=(hook,))
    assert read.calls == [] and bash.calls == []
    assert "bash is not allowed here" in _text(_results(provider.requests[1])[0])


def test_a_redirect_that_is_not_a_whole_payload_leaves_the_call_as_it_was() -> None:
    read, bash = FakeTool("read", SAFE), FakeTool("bash")
    hook = FakeHook(HookOutcome(outcome="redirect", value={"tool": "bash"}))
    _, _, _, said, _ = _run(
        [[_use("1", "read", {"path": "a"})], [TextBlock(text="ok")]], tools=(read, bash), hooks=(hook,), allow=("bash",)
    )
    assert read.calls == [{"path": "a"}] and bash.calls == []
    assert [n.message for n in said] == [
        "hook h answered 'redirect' with a payload missing input, callId, which decides nothing: "
        "a redirect carries a whole payload of the same shape (tool, input, callId)"
    ]


def test_a_hook_block_ends_the_turn() -> None:
    read = FakeTool("read", SAFE)
    _, provider, _, _, status = _run(
        [[_use("1", "read")], [TextBlock(text="never")]],
        tools=(read,),
        hooks=(FakeHook(HookOutcome(outcome="block", value="stop now")),),
    )
    assert status == "blocked" and read.calls == [] and len(provider.requests) == 1


def test_concurrency_safe_calls_run_together_and_the_rest_in_order() -> None:
    gate = asyncio.Event()
    safe = FakeTool("glob", SAFE, gate=None)

    class Opener(FakeTool):
        async def call(self, call: ToolCall) -> ToolOutput:
            gate.set()
            return await super().call(call)

    slow = FakeTool("grep", SAFE, gate=gate)
    serial = FakeTool("edit")
    uses: list[TextBlock | ToolUseBlock] = [
        _use("1", "grep"),
        _use("2", "glob"),
        _use("3", "glob"),
        _use("4", "edit"),
        _use("5", "edit"),
    ]
    opener = Opener("open", SAFE)
    uses.insert(3, _use("x", "open"))
    _, provider, _, _, _ = _run([uses, [TextBlock(text="ok")]], tools=(slow, safe, serial, opener), allow=("edit",))
    assert slow.peak == 1 and safe.calls == [{}, {}] and serial.peak == 1 and serial.calls == [{}, {}]
    assert [r.tool_use_id for r in _results(provider.requests[1])] == ["1", "2", "3", "x", "4", "5"]


def test_a_late_contributor_is_dropped_with_a_notice_and_the_turn_goes_on() -> None:
    @dataclass
    class Contributor:
        name: str
        late: bool
        source: str = "test"

        @property
        def spec(self) -> ContributorSpec:
            return ContributorSpec(name=self.name)

        async def contribute(self, query: ContextQuery) -> list[ContextPiece]:
            if self.late:
                await asyncio.Event().wait()
            return [ContextPiece(text=f"turn {query.turn}: {query.prompt}", title=self.name)]

    def prepare(registry: Registry) -> None:
        registry.add_contributor(Contributor("late", True))
        registry.add_contributor(Contributor("quick", False))

    _, provider, _, said, status = _run([[TextBlock(text="ok")]], prepare=prepare)
    assert status == "done"
    prompt = provider.requests[0].messages[-1].content[0]
    assert isinstance(prompt, TextBlock) and "turn 1: hello" in prompt.text
    assert [n.message for n in said] == [
        "contributor late gave no answer within 0.2 s (deadlines.context/contribute in settings) and was dropped from this turn"
    ]


def test_history_past_its_budget_is_compacted_before_the_model_sees_it() -> None:
    @dataclass
    class Halver:
        spec: CompactorSpec = CompactorSpec(name="trim")
        source: str = "test"

        async def compact(self, context: CompactionContext, reason: Literal["overflow", "manual"]) -> Compaction:
            return Compaction(
                messages=[Message(role="user", content=[TextBlock(text=f"compacted ({reason})")]), context.messages[-1]]
            )

    def prepare(registry: Registry) -> None:
        registry.add_compactor(Halver())

    long = [
        Message(role="user", content=[TextBlock(text="x" * 400)]),
        Message(role="assistant", content=[TextBlock(text="y")]),
    ]
    notices = Notices()
    registry = Registry(notices)
    prepare(registry)
    provider = ScriptedProvider([[TextBlock(text="ok")]])
    log = Log()
    settings = Settings(context_budget=50, compactor="trim")

    async def go() -> None:
        async with Hooks([], notices, 1.0) as runner:
            conversation = Conversation(
                registry=registry,
                settings=settings,
                gate=Gate(settings.permissions),
                hooks=runner,
                notices=notices,
                log=log,
                events=Events(),
                asker=Person(),
                session="s",
                cwd="/",
                provider=provider,
                messages=list(long),
            )
            await conversation.run_turn("next")

    asyncio.run(go())
    first = provider.requests[0].messages[0].content[0]
    assert isinstance(first, TextBlock) and first.text == "compacted (overflow)"


def test_a_second_interrupt_abandons_a_blocking_call_and_it_ends_as_cancelled() -> None:
    notices = Notices()
    registry = Registry(notices)
    stuck = FakeTool("stuck", ToolTraits(interrupt="block"), gate=asyncio.Event())
    registry.add_tool(stuck)
    provider = ScriptedProvider([[_use("1", "stuck")]])
    log = Log()
    settings = Settings(permissions=Permissions(allow=("stuck",)))
    seen: list[tuple[bool, bool]] = []

    async def go() -> str:
        async with Hooks([], notices, 1.0) as runner:
            conversation = Conversation(
                registry=registry,
                settings=settings,
                gate=Gate(settings.permissions),
                hooks=runner,
                notices=notices,
                log=log,
                events=Events(),
                asker=Person(),
                session="s",
                cwd="/",
                provider=provider,
            )
            turn = asyncio.create_task(conversation.run_turn("go"))
            while stuck.running == 0:
                await asyncio.sleep(0)
            [running] = conversation._running.values()  # pyright: ignore[reportPrivateUsage]
            assert conversation.interrupt() == ["stuck"]  # told, and still awaited
            seen.append((running.call.interrupted.is_set(), running.call.abandoned.is_set()))
            await asyncio.sleep(0)
            assert not turn.done()
            assert conversation.interrupt() == ["stuck"]  # the person will not wait
            seen.append((running.call.interrupted.is_set(), running.call.abandoned.is_set()))
            async with asyncio.timeout(5):
                return (await turn).status

    assert asyncio.run(go()) == "interrupted"
    assert seen == [(True, False), (True, True)]
    [result] = [frame for frame in log.frames if type(frame).__name__ == "ToolResultFrame"]
    assert "stuck was cancelled: the turn was interrupted" in str(result)


def _waiting_world() -> tuple[Registry, FakeTool, ScriptedProvider, Log, Settings, Notices]:
    notices = Notices()
    registry = Registry(notices)
    writer = FakeTool("writer")
    registry.add_tool(writer)
    provider = ScriptedProvider([[_use("1", "writer")], [TextBlock(text="done")]])
    return registry, writer, provider, Log(), Settings(permissions=Permissions(allow=("writer",))), notices


def _conversation(
    world: tuple[Registry, FakeTool, ScriptedProvider, Log, Settings, Notices], hooks: Hooks
) -> Conversation:
    registry, _, provider, log, settings, notices = world
    return Conversation(
        registry=registry,
        settings=settings,
        gate=Gate(settings.permissions),
        hooks=hooks,
        notices=notices,
        log=log,
        events=Events(),
        asker=Person(),
        session="s",
        cwd="/",
        provider=provider,
    )


def test_the_model_is_asked_before_the_turns_checkpoint_ends_and_no_tool_runs_before_it() -> None:
    world = _waiting_world()
    _, writer, provider, _, _, notices = world

    async def go() -> tuple[int, int, str]:
        async with Hooks([], notices, 1.0) as runner:
            conversation = _conversation(world, runner)
            checkpoint: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            conversation.before_tools = checkpoint
            turn = asyncio.create_task(conversation.run_turn("go"))
            while len(provider.requests) < 1:
                await asyncio.sleep(0)
            for _ in range(20):
                await asyncio.sleep(0)  # the model asked for the tool; the tool waits
            asked, ran = len(provider.requests), len(writer.calls)
            checkpoint.set_result(None)
            async with asyncio.timeout(5):
                return asked, ran, (await turn).status

    assert asyncio.run(go()) == (1, 0, "done")
    assert writer.calls == [{}]


def test_an_interrupt_while_a_tool_waits_for_the_checkpoint_ends_the_turn_and_the_tool_never_runs() -> None:
    world = _waiting_world()
    _, writer, provider, log, _, notices = world

    async def go() -> str:
        async with Hooks([], notices, 1.0) as runner:
            conversation = _conversation(world, runner)
            checkpoint: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            conversation.before_tools = checkpoint
            turn = asyncio.create_task(conversation.run_turn("go"))
            while len(provider.requests) < 1:
                await asyncio.sleep(0)
            for _ in range(20):
                await asyncio.sleep(0)
            conversation.interrupt()
            async with asyncio.timeout(5):
                status = (await turn).status
            assert not checkpoint.cancelled()  # the checkpoint itself goes on
            return status

    assert asyncio.run(go()) == "interrupted"
    assert writer.calls == []
    [result] = [frame for frame in log.frames if isinstance(frame, ToolResultFrame)]
    assert "writer was not run: the turn was interrupted" in str(result)


@dataclass
class SayingProvider(ScriptedProvider):
    """Says its request is written (`REQUEST_SENT`), as the built-in providers do, and notes
    how many times what waits for it had begun at the start of each stream and after it said."""

    say: bool = True
    begun: list[int] = field(default_factory=lambda: [])
    seen: list[tuple[int, int]] = field(default_factory=lambda: [])

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        before = len(self.begun)
        sent = REQUEST_SENT.get()
        if self.say and sent is not None:
            sent()
        self.seen.append((before, len(self.begun)))
        return await super().stream(request, on_delta)


def _begun_world(say: bool) -> tuple[Registry, FakeTool, SayingProvider, Log, Settings, Notices]:
    registry, writer, _, log, settings, notices = _waiting_world()
    provider = SayingProvider([[_use("1", "writer")], [TextBlock(text="done")]], say=say)
    return registry, writer, provider, log, settings, notices


def _run_begun(world: tuple[Registry, FakeTool, SayingProvider, Log, Settings, Notices]) -> str:
    _, _, provider, _, _, notices = world

    async def go() -> str:
        async with Hooks([], notices, 1.0) as runner:
            conversation = _conversation(world, runner)
            checkpoint: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            conversation.before_tools = checkpoint

            def begin() -> None:
                provider.begun.append(1)
                checkpoint.set_result(None)

            conversation.after_sent = begin
            async with asyncio.timeout(5):
                return (await conversation.run_turn("go")).status

    return asyncio.run(go())


def test_what_the_first_request_does_not_need_begins_once_the_provider_says_it_is_written() -> None:
    world = _begun_world(say=True)
    assert _run_begun(world) == "done"
    _, writer, provider, _, _, _ = world
    # Not begun when the request was being made; begun when written; once for the turn.
    assert provider.seen == [(0, 1), (1, 1)]
    assert provider.begun == [1]
    assert writer.calls == [{}]


def test_what_the_first_request_does_not_need_begins_with_the_answer_when_the_provider_does_not_say() -> None:
    world = _begun_world(say=False)
    assert _run_begun(world) == "done"
    _, writer, provider, _, _, _ = world
    assert provider.seen == [(0, 0), (1, 1)]  # begun by the first answer, before its tool ran
    assert provider.begun == [1]
    assert writer.calls == [{}]


def test_what_the_first_request_does_not_need_begins_when_a_turn_ends_without_asking_the_model() -> None:
    notices = Notices()
    refuse = FakeHook(
        HookOutcome(outcome="deny", value="no"), spec=HookSpec(name="h", site="prompt", points=["submit"])
    )
    world = _begun_world(say=True)
    _, _, provider, _, _, _ = world

    async def go() -> str:
        async with Hooks([refuse], notices, 1.0) as runner:
            conversation = _conversation(world, runner)
            conversation.after_sent = lambda: provider.begun.append(1)
            return (await conversation.run_turn("go")).status

    assert asyncio.run(go()) == "blocked"
    assert provider.seen == [] and provider.begun == [1]
