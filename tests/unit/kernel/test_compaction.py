"""Compaction when it is needed: the estimate of a whole request, the window and budget, the
strategies in order (the settings' one, the model's summary, trim), and what each leaves."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from bingo.kernel.compaction import (
    AskModel,
    RequestSizes,
    SummaryCompactor,
    TrimCompactor,
    estimate_request,
    estimate_tokens,
    last_exchange,
)
from bingo.kernel.errors import GateError, ProviderError
from bingo.kernel.frames import CompactionFrame, Frame, PromptFrame
from bingo.kernel.gate import Gate
from bingo.kernel.hooks import Hooks
from bingo.kernel.interfaces import PermissionAnswer, Provider
from bingo.kernel.notices import Notices
from bingo.kernel.registry import Registry
from bingo.kernel.settings import Settings
from bingo.kernel.turn import Compacted, Conversation
from bingo.wire import (
    Compaction,
    CompactionContext,
    CompactorSpec,
    Delta,
    Json,
    Message,
    ModelRequest,
    ModelResponse,
    Notice,
    ProviderSpec,
    TextBlock,
    TextPart,
    ToolOutput,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)


@dataclass
class Model:
    """Answers each request with the next reply (a text), or raises when it is an exception."""

    replies: list[str | Exception]
    requests: list[ModelRequest] = field(default_factory=lambda: [])
    spec: ProviderSpec = ProviderSpec(name="anthropic")
    source: str = "builtin"

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else "(end)"
        if isinstance(reply, Exception):
            raise reply
        return ModelResponse(message=Message(role="assistant", content=[TextBlock(text=reply)]), stop_reason="end")


@dataclass
class Events:
    def text(self, text: str) -> None: ...
    def tool_started(self, call_id: str, name: str, input: Json) -> None: ...
    def tool_progress(self, call_id: str, tail: str) -> None: ...
    def tool_finished(self, call_id: str, name: str, output: ToolOutput, seconds: float) -> None: ...
    def waiting(self, what: str) -> None: ...
    def refused(self, call_id: str, name: str, why: str) -> None: ...


@dataclass
class Nobody:
    async def permission(self, name: str, input: Json, always: str) -> PermissionAnswer:
        raise GateError("no person to ask")

    async def ask(self, question: str, choices: list[str] | None) -> str:
        raise GateError("no person to ask")


@dataclass
class Log:
    frames: list[Frame] = field(default_factory=lambda: [])

    def append(self, frame: Frame) -> None:
        self.frames.append(frame)


def _user(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text=text)])


def _said(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def _history(turns: int, size: int) -> list[Message]:
    out: list[Message] = []
    for n in range(1, turns + 1):
        out += [_user(f"prompt {n} " + "x" * size), _said(f"answer {n}")]
    return out


@dataclass
class Run:
    conversation: Conversation
    model: Provider
    log: Log
    said: list[Notice]


def _conversation(
    model: Provider,
    messages: list[Message],
    settings: Settings,
    *,
    windows: Callable[[str, str], int | None] | None = None,
    prepare: Callable[[Registry], object] | None = None,
) -> Callable[[Callable[[Conversation], object]], Run]:
    def run(body: Callable[[Conversation], object]) -> Run:
        notices = Notices()
        said: list[Notice] = []
        notices.listen(said.append)
        registry = Registry(notices)
        if prepare is not None:
            prepare(registry)
        log = Log()

        async def go() -> Conversation:
            async with Hooks([], notices, 1.0) as hooks:
                conversation = Conversation(
                    registry=registry,
                    settings=settings,
                    gate=Gate(settings.permissions),
                    hooks=hooks,
                    notices=notices,
                    log=log,
                    events=Events(),
                    asker=Nobody(),
                    session="s",
                    cwd="/",
                    provider=model,
                    model="claude-x",
                    system="SYSTEM",
                    messages=list(messages),
                    windows=windows,
                )
                async with asyncio.timeout(5):
                    result = body(conversation)
                    if asyncio.iscoroutine(result):
                        await result
                return conversation

        conversation = asyncio.run(go())
        return Run(conversation, model, log, said)

    return run


def test_the_estimate_of_a_request_counts_the_system_prompt_tools_and_tool_inputs() -> None:
    use = Message(role="assistant", content=[ToolUseBlock(id="1", name="write", input={"content": "y" * 4000})])
    bare = ModelRequest(model="m", messages=[_user("x" * 400)])
    full = ModelRequest(
        model="m", messages=[_user("x" * 400), use], system="s" * 800, tools=[ToolSpec(name="t", description="d" * 400)]
    )
    assert estimate_tokens(bare.messages) == 101
    assert estimate_request(full) - estimate_request(bare) >= (800 + 400 + 4000) // 4


def test_the_latest_exchange_starts_at_the_last_prompt_not_at_a_tool_result() -> None:
    result = Message(role="user", content=[ToolResultBlock(tool_use_id="1", parts=[TextPart(text="r")])])
    messages = [
        _user("a"),
        _said("b"),
        _user("c"),
        Message(role="assistant", content=[ToolUseBlock(id="1", name="t", input={})]),
        result,
    ]
    assert last_exchange(messages) == 2


def test_the_summary_asks_the_model_with_the_history_and_keeps_the_latest_exchange_verbatim() -> None:
    model = Model(["the person wants kumquats"])
    compactor = SummaryCompactor(_whole(model), model="m", system="SYS", tools=[ToolSpec(name="t")], max_tokens=100)
    history = _history(3, 10)
    done = asyncio.run(compactor.compact(CompactionContext(messages=history), "manual"))
    [asked] = model.requests
    assert asked.system == "SYS" and [t.name for t in asked.tools] == ["t"] and asked.max_tokens == 100
    assert asked.messages[:4] == history[:4]  # the history as it was: a prompt cache still matches its start
    last = asked.messages[-1]
    assert (
        last.role == "user"
        and isinstance(last.content[-1], TextBlock)
        and "Write that summary now" in last.content[-1].text
    )
    head, ack, *rest = done.messages
    assert isinstance(head.content[0], TextBlock) and head.content[0].text.endswith(
        "A summary of what came before:\n\nthe person wants kumquats"
    )
    assert ack.role == "assistant" and rest == history[4:]


def _whole(model: Model) -> AskModel:
    async def ask(request: ModelRequest) -> ModelResponse:
        return await model.stream(request, lambda _d: None)

    return ask


def test_a_history_of_one_exchange_has_nothing_to_summarise_and_asks_no_model() -> None:
    model = Model([])
    compactor = SummaryCompactor(_whole(model), model="m", system=None, tools=[], max_tokens=None)
    history = _history(1, 10)
    assert asyncio.run(compactor.compact(CompactionContext(messages=history), "overflow")).messages == history
    assert model.requests == []


def test_a_request_past_the_budget_is_compacted_by_summary_first_with_a_notice_and_a_frame() -> None:
    model = Model(["SUMMARY", "fine"])
    settings = Settings(context_window=1000)  # budget: 800 tokens
    run = _conversation(model, _history(4, 1000), settings)(lambda c: c.run_turn("now"))
    summary_request, turn_request = model.requests
    assert "Write that summary now" in str(summary_request.messages[-1])
    first = turn_request.messages[0].content[0]
    assert isinstance(first, TextBlock) and first.text.endswith("SUMMARY")
    assert "prompt 1" not in str(turn_request.messages) and turn_request.messages[-1] == _user("now")
    [frame] = [f for f in run.log.frames if isinstance(f, CompactionFrame)]
    assert frame.reason == "overflow" and frame.by == "summary"
    [notice] = [n.message for n in run.said]
    assert (
        notice.startswith("the conversation (about ")
        and "passed its budget of 800 tokens (80% of the model's 1000-token window): compacted by summary to about"
        in notice
    )


def test_the_window_comes_from_the_table_unless_the_setting_says_otherwise() -> None:
    model = Model([])
    seen: list[tuple[str, str]] = []

    def table(provider: str, name: str) -> int | None:
        seen.append((provider, name))
        return 200_000

    run = _conversation(model, [], Settings(), windows=table)(lambda c: None)
    assert (
        run.conversation.window() == 200_000
        and run.conversation.budget() == 160_000
        and run.conversation.result_budget() == 20_000
    )
    assert seen[0] == ("anthropic", "claude-x")
    run = _conversation(model, [], Settings(context_window=5000, tool_result_budget=123), windows=table)(lambda c: None)
    assert (run.conversation.window(), run.conversation.budget(), run.conversation.result_budget()) == (5000, 4000, 123)
    run = _conversation(model, [], Settings(), windows=lambda p, m: None)(lambda c: None)
    assert run.conversation.window() == 32_000  # a model nobody wrote down is assumed small


def test_a_failing_summary_falls_back_to_trim_with_a_notice() -> None:
    model = Model([ProviderError("overloaded", "try later"), "fine"])
    run = _conversation(model, _history(6, 1000), Settings(context_window=1000))(lambda c: c.run_turn("now"))
    [frame] = [f for f in run.log.frames if isinstance(f, CompactionFrame)]
    assert frame.by == "trim"
    assert run.said[0].message == "compaction by summary failed: overloaded: try later; trying trim"


def test_the_compactor_the_settings_name_runs_first() -> None:
    @dataclass
    class Mine:
        spec: CompactorSpec = CompactorSpec(name="plugin__p__mine")
        source: str = "p"

        async def compact(self, context: CompactionContext, reason: Literal["overflow", "manual"]) -> Compaction:
            return Compaction(messages=[_user("mine"), _said("ok"), *context.messages[-2:]])

    model = Model(["fine"])
    run = _conversation(
        model,
        _history(4, 1000),
        Settings(context_window=1000, compactor="plugin__p__mine"),
        prepare=lambda r: r.add_compactor(Mine()),
    )(lambda c: c.run_turn("now"))
    assert model.requests[0].messages[0] == _user("mine")  # no summary was asked for
    [frame] = [f for f in run.log.frames if isinstance(f, CompactionFrame)]
    assert frame.by == "plugin__p__mine"


def test_compact_on_an_empty_history_has_nothing_to_do() -> None:
    found: list[Compacted] = []

    async def body(c: Conversation) -> None:
        found.append(await c.compact("manual"))

    run = _conversation(Model([]), [], Settings())(body)
    assert found == [Compacted("nothing")] and run.log.frames == []


def test_a_latest_exchange_too_large_alone_is_said_once_and_not_compacted_again_and_again() -> None:
    model = Model(["fine"])
    run = _conversation(model, [], Settings(context_window=1000))(lambda c: c.run_turn("y" * 8000))
    assert len(model.requests) == 1 and not any(isinstance(f, CompactionFrame) for f in run.log.frames)
    assert [n.message for n in run.said] == [
        f"this request is about {estimate_request(model.requests[0])} tokens, past the budget of 800 (80% of the model's 1000-token window), "
        "and compaction can fold nothing more this turn: it is sent as it is"
    ]


def test_context_pieces_go_with_their_turn_and_are_not_kept_in_the_history() -> None:
    from bingo.wire import ContextPiece, ContextQuery, ContributorSpec

    @dataclass
    class Clock:
        source: str = "p"

        @property
        def spec(self) -> ContributorSpec:
            return ContributorSpec(name="clock")

        async def contribute(self, query: ContextQuery) -> list[ContextPiece]:
            return [ContextPiece(text=f"tick {query.turn}", title="clock")]

    model = Model(["one", "two"])

    async def body(c: Conversation) -> None:
        await c.run_turn("first")
        await c.run_turn("second")

    run = _conversation(model, [], Settings(), prepare=lambda r: r.add_contributor(Clock()))(body)
    first, second = model.requests
    assert "tick 1" in str(first.messages[-1]) and "first" in str(first.messages[-1])
    assert second.messages[0] == _user("first")  # not repeated with its pieces
    assert "tick 2" in str(second.messages[-1]) and "tick 1" not in str(second.messages)
    assert [f.text for f in run.log.frames if isinstance(f, PromptFrame)] == ["first", "second"]
    assert [f.pieces[0].text for f in run.log.frames if isinstance(f, PromptFrame)] == ["tick 1", "tick 2"]
    assert run.conversation.messages[0] == _user("first")


def test_trim_needs_no_model() -> None:
    history = _history(6, 10)
    done = asyncio.run(TrimCompactor().compact(CompactionContext(messages=history), "manual"))
    assert done.messages[2:] == history[4:]


def test_an_interrupt_stops_the_summary_and_the_turn_with_the_history_as_it_was() -> None:
    @dataclass
    class Hanging:
        started: asyncio.Event = field(default_factory=asyncio.Event)
        spec: ProviderSpec = ProviderSpec(name="anthropic")
        source: str = "builtin"

        async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
            self.started.set()
            await asyncio.Event().wait()
            raise AssertionError("not reached")

    history = _history(4, 1000)
    statuses: list[str] = []

    async def body(c: Conversation) -> None:
        model = Hanging()
        c.provider = model
        turn = asyncio.ensure_future(c.run_turn("now"))
        await model.started.wait()
        c.interrupt()
        statuses.append((await turn).status)

    run = _conversation(Model([]), history, Settings(context_window=1000))(body)
    assert statuses == ["interrupted"]
    assert run.conversation.messages == [*history, _user("now")]
    assert not any(isinstance(f, CompactionFrame) for f in run.log.frames)


def test_context_lists_the_system_prompt_the_window_and_the_latest_turns_pieces() -> None:
    from bingo.kernel.commands import ContextCommand
    from bingo.kernel.interfaces import CommandContext
    from bingo.wire import ContextPiece, ContextQuery, ContributorSpec, StackView, TableView, ViewOutcome

    @dataclass
    class Note:
        source: str = "p"

        @property
        def spec(self) -> ContributorSpec:
            return ContributorSpec(name="note")

        async def contribute(self, query: ContextQuery) -> list[ContextPiece]:
            return [ContextPiece(text="n" * 40, title="note", priority=3)]

    shown: list[ViewOutcome] = []

    async def body(c: Conversation) -> None:
        await c.run_turn("hello")
        outcome = await ContextCommand(c, lambda: None).run("", CommandContext(cwd="/", session="s"))
        assert isinstance(outcome, ViewOutcome)
        shown.append(outcome)

    _conversation(Model(["hi"]), [], Settings(context_window=10_000), prepare=lambda r: r.add_contributor(Note()))(body)
    [outcome] = shown
    view = outcome.view
    assert isinstance(view, StackView)
    sizes, pieces = view.children[2], view.children[3]
    assert isinstance(sizes, TableView) and sizes.rows[:3] == [
        ["window (anthropic claude-x)", 10_000],
        ["compaction past", 8_000],
        ["one tool result at most", 1_000],
    ]
    assert isinstance(pieces, TableView) and pieces.rows == [["note", 3, 40]]


def test_a_long_tool_loop_compacts_once_in_its_turn_and_says_once_that_it_is_still_over() -> None:
    from bingo.kernel.interfaces import ToolCall
    from bingo.wire import ToolTraits

    @dataclass
    class Looping:
        """Asks for `steps` tool calls, one per response, then ends; a summary request
        (the instruction is its last words) is answered with a summary."""

        steps: int
        requests: list[ModelRequest] = field(default_factory=lambda: [])
        spec: ProviderSpec = ProviderSpec(name="anthropic")
        source: str = "builtin"

        async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
            self.requests.append(request)
            if "Write that summary now" in str(request.messages[-1]):
                return ModelResponse(message=_said("SUMMARY"), stop_reason="end")
            if self.steps == 0:
                return ModelResponse(message=_said("done"), stop_reason="end")
            self.steps -= 1
            use = ToolUseBlock(id=f"c{self.steps}", name="read", input={})
            return ModelResponse(message=Message(role="assistant", content=[use]), stop_reason="toolUse")

    @dataclass
    class Big:
        spec: ToolSpec = ToolSpec(name="read")
        traits: ToolTraits = ToolTraits(trusted=True, read_only=True)
        source: str = "builtin"

        async def call(self, call: ToolCall) -> ToolOutput:
            return ToolOutput(parts=[TextPart(text="r" * 3000)])  # a tenth of the window: not cut

    looping = Looping(steps=6)
    run = _conversation(looping, _history(3, 1000), Settings(context_window=3000), prepare=lambda r: r.add_tool(Big()))(
        lambda c: c.run_turn("now")
    )
    assert len([r for r in looping.requests if "Write that summary now" in str(r.messages[-1])]) == 1
    assert len([f for f in run.log.frames if isinstance(f, CompactionFrame)]) == 1
    said = [n.message for n in run.said]
    assert len(said) == 2 and "compacted by summary" in said[0]
    assert said[1].startswith("this request is about ") and said[1].endswith(
        "compaction can fold nothing more this turn: it is sent as it is"
    )
    assert len(looping.requests) == 1 + 7  # one summary, then every step of the turn


def test_a_conversations_remembered_sizes_estimate_every_request_as_the_whole_sum_does() -> None:
    sizes = RequestSizes()
    tools = [ToolSpec(name="read", description="reads a file", input_schema={"type": "object"})]
    messages = [Message(role="user", content=[TextBlock(text="count the words")])]
    for step in range(20):
        request = ModelRequest(model="m", messages=list(messages), tools=tools, system="be brief")
        assert sizes.estimate(request) == estimate_request(request)
        messages.append(
            Message(role="assistant", content=[ToolUseBlock(id=f"t{step}", name="read", input={"path": "x" * step})])
        )
        messages.append(
            Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{step}", parts=[TextPart(text="y" * 99)])])
        )
    folded = [Message(role="user", content=[TextBlock(text="a summary")]), *messages[-2:]]
    request = ModelRequest(model="m", messages=folded, tools=[], system=None)
    assert sizes.estimate(request) == estimate_request(request)
