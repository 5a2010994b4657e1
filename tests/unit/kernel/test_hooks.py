"""Hooks: which declarations are hooks, the decision fold, the redirect's shape rule, the
deadline, the notices for hooks that decide nothing (or answer ask, failing closed), and
observations that never make the caller wait."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import msgspec
import pytest

from bingo.kernel.errors import PluginError, PluginUnavailable
from bingo.kernel.hooks import DECIDE_POINTS, OBSERVE_POINTS, Hooks, HookVerdict, hook_problem
from bingo.kernel.interfaces import Hook
from bingo.kernel.notices import Notices
from bingo.wire import HookOutcome, HookSpec, Json, Notice
from tests.support import clock

T = TypeVar("T")

DEADLINE = 5.0
SHORT_DEADLINE = 0.05
"""A hook's deadline where missing it is under test. The tests run on the virtual clock
(tests/support/clock.py): it passes at exactly this time, and costs no real time."""
TOOL_CALL: Json = {"tool": "bash", "input": {"command": "ls"}, "callId": "c1"}

CONTINUE = HookOutcome(outcome="continue")
ASK = HookOutcome(outcome="ask")


class FakeHook:
    """An in-memory hook: answers `answer` (or raises `error`, or never answers when
    `hang`), and records what it was shown."""

    def __init__(
        self,
        name: str,
        answer: Json = CONTINUE,
        *,
        site: str = "tool",
        points: Sequence[str] = ("before",),
        error: Exception | None = None,
        hang: bool = False,
    ) -> None:
        self._spec = HookSpec(name=name, site=site, points=list(points))
        self.answer = answer
        self.error = error
        self.hang = hang
        self.decided: list[Json] = []
        self.observed: list[tuple[str, Json]] = []
        self.release = asyncio.Event()
        self.wait_for_release = False
        self.cancelled = False

    @property
    def spec(self) -> HookSpec:
        return self._spec

    @property
    def source(self) -> str:
        return f"plugin {self._spec.name}"

    async def _misbehave(self) -> None:
        if self.hang:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        if self.error is not None:
            raise self.error

    async def decide(self, point: str, payload: Json) -> HookOutcome:
        self.decided.append(payload)
        await self._misbehave()
        return self.answer

    async def observe(self, point: str, payload: Json) -> None:
        if self.wait_for_release:
            await self.release.wait()
        await self._misbehave()
        self.observed.append((point, payload))


def allow_outcome() -> HookOutcome:
    """A HookOutcome saying `allow`: the wire type refuses one on decode, but an in-process
    hook can still build one, and the fold must not believe it."""
    outcome = HookOutcome(outcome="continue")
    msgspec.structs.force_setattr(outcome, "outcome", "allow")
    return outcome


def run(make: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(5):
            return await make()

    return clock.run(bounded())


def timed(make: Callable[[], Awaitable[T]]) -> tuple[T, float]:
    """What `make` returns, and how long it took on the virtual clock."""

    async def measured() -> tuple[T, float]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        result = await make()
        return result, loop.time() - start

    return run(measured)


def hooks_with(
    hooks: Sequence[Hook], deadline: float = DEADLINE, fail_closed: frozenset[str] = frozenset()
) -> tuple[Hooks, list[Notice]]:
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)
    return Hooks(hooks, notices, deadline, fail_closed=fail_closed), said


def decide(
    hooks: Sequence[Hook],
    payload: Json = TOOL_CALL,
    deadline: float = DEADLINE,
    fail_closed: frozenset[str] = frozenset(),
) -> tuple[HookVerdict, list[Notice]]:
    runner, said = hooks_with(hooks, deadline, fail_closed)
    verdict = run(lambda: runner.decide("tool", "before", payload))
    return verdict, said


PAIRS = (
    "a hook names one site and its points: tool (before, after), prompt (submit), "
    "command (before), turn (start, end), session (start, end)"
)


# --- which declarations are hooks ----------------------------------------------------


@pytest.mark.parametrize(("site", "point"), sorted(DECIDE_POINTS | OBSERVE_POINTS))
def test_every_valid_site_and_point_is_a_hook(site: str, point: str) -> None:
    assert hook_problem(HookSpec(name="h", site=site, points=[point])) is None


def test_a_hook_may_name_several_points_of_its_site() -> None:
    assert hook_problem(HookSpec(name="h", site="tool", points=["before", "after"])) is None


@pytest.mark.parametrize(
    ("site", "points", "wrong"),
    [
        ("tool.before", ["before"], "site 'tool.before' is not a site"),
        ("tools", ["before"], "site 'tools' is not a site"),
        ("tool", ["pre"], "point 'pre' is not of site 'tool'"),
        ("tool", ["before", "pre", "submit"], "points 'pre', 'submit' are not of site 'tool'"),
        ("prompt", ["before"], "point 'before' is not of site 'prompt'"),
        ("tool", [], "it names no points of site 'tool'"),
    ],
)
def test_a_declaration_with_no_valid_site_and_points_is_no_hook_and_the_pairs_are_named(
    site: str, points: list[str], wrong: str
) -> None:
    assert hook_problem(HookSpec(name="h", site=site, points=points)) == f"{wrong}; {PAIRS}"


# --- deciding ------------------------------------------------------------------------


def test_without_hooks_the_payload_continues_unchanged() -> None:
    verdict, said = decide([])

    assert verdict == HookVerdict("continue", TOOL_CALL)
    assert said == []


def test_only_hooks_declaring_the_site_and_point_are_asked() -> None:
    wanted = FakeHook("wanted")
    other_point = FakeHook("late", HookOutcome(outcome="deny"), points=["after"])
    other_site = FakeHook("prompt", HookOutcome(outcome="deny"), site="prompt", points=["before"])

    verdict, _ = decide([other_point, wanted, other_site])

    assert verdict.action == "continue"
    assert wanted.decided == [TOOL_CALL]
    assert other_point.decided == other_site.decided == []


def test_a_deny_stops_the_hooks_after_it_and_gives_its_reason() -> None:
    first = FakeHook("first")
    guard = FakeHook("guard", HookOutcome(outcome="deny", value="no shell today"))
    after = FakeHook("after")

    verdict, said = decide([first, guard, after])

    assert verdict == HookVerdict("deny", TOOL_CALL, "no shell today", decided_by=guard)
    assert first.decided == [TOOL_CALL]
    assert after.decided == []
    assert said == []


def test_a_block_stops_the_hooks_after_it_and_gives_its_reason() -> None:
    after = FakeHook("after")

    stop = FakeHook("stop", HookOutcome(outcome="block", value="quota"))
    verdict, _ = decide([stop, after])

    assert verdict == HookVerdict("block", TOOL_CALL, "quota", decided_by=stop)
    assert after.decided == []


def test_a_reason_that_is_not_a_string_is_no_reason() -> None:
    stop = FakeHook("stop", HookOutcome(outcome="deny", value={"why": 1}))
    verdict, _ = decide([stop])

    assert verdict == HookVerdict("deny", TOOL_CALL, None, decided_by=stop)


def test_a_redirect_replaces_the_payload_for_later_hooks_and_the_caller() -> None:
    redirected: Json = {"tool": "bash", "input": {"command": "ls -a"}, "callId": "c1"}
    after = FakeHook("after")

    rewrite = FakeHook("rewrite", HookOutcome(outcome="redirect", value=redirected))

    verdict, _ = decide([rewrite, after])

    assert verdict == HookVerdict("continue", redirected, redirected_by=rewrite)
    assert after.decided == [redirected]


def test_a_deny_after_a_redirect_carries_the_redirected_payload() -> None:
    redirected: Json = {"tool": "rm", "input": {}, "callId": "c1"}

    rewrite = FakeHook("rewrite", HookOutcome(outcome="redirect", value=redirected))

    guard = FakeHook("guard", HookOutcome(outcome="deny", value="no rm"))
    verdict, _ = decide([rewrite, guard])

    assert verdict == HookVerdict("deny", redirected, "no rm", redirected_by=rewrite, decided_by=guard)


def test_a_redirect_without_a_value_decides_nothing_and_says_so() -> None:
    verdict, said = decide([FakeHook("rewrite", HookOutcome(outcome="redirect"))])

    assert verdict == HookVerdict("continue", TOOL_CALL)
    assert [(n.source, n.message) for n in said] == [
        ("plugin rewrite", "hook rewrite answered 'redirect' with no value, which decides nothing")
    ]


def test_a_redirect_to_an_empty_object_decides_nothing_and_later_hooks_see_the_payload() -> None:
    after = FakeHook("guard", HookOutcome(outcome="deny", value="no shell"))

    verdict, said = decide([FakeHook("blinder", HookOutcome(outcome="redirect", value={})), after])

    assert verdict == HookVerdict("deny", TOOL_CALL, "no shell", decided_by=after)
    assert after.decided == [TOOL_CALL]
    assert [(n.source, n.message) for n in said] == [
        (
            "plugin blinder",
            "hook blinder answered 'redirect' with a payload missing tool, input, callId, which decides "
            "nothing: a redirect carries a whole payload of the same shape (tool, input, callId)",
        )
    ]


@pytest.mark.parametrize(
    ("value", "wrong"),
    [
        ("bash", "a string"),
        ([TOOL_CALL], "an array"),
        ({"tool": "bash", "input": {}}, "a payload missing callId"),
        ({**TOOL_CALL, "why": "because"}, "an extra key why"),
        ({**TOOL_CALL, "why": 1, "how": 2}, "extra keys why, how"),
        ({**TOOL_CALL, "input": "ls"}, "input a string where it was an object"),
        ({**TOOL_CALL, "tool": None}, "tool null where it was a string"),
        ({**TOOL_CALL, "callId": True}, "callId a boolean where it was a string"),
    ],
)
def test_a_redirect_that_is_not_a_whole_payload_of_the_same_shape_decides_nothing(value: Json, wrong: str) -> None:
    after = FakeHook("after")

    verdict, said = decide([FakeHook("rewrite", HookOutcome(outcome="redirect", value=value)), after])

    assert verdict == HookVerdict("continue", TOOL_CALL)
    assert after.decided == [TOOL_CALL]
    assert [n.message for n in said] == [
        f"hook rewrite answered 'redirect' with {wrong}, which decides nothing: "
        "a redirect carries a whole payload of the same shape (tool, input, callId)"
    ]


def test_a_number_may_replace_a_number_whole_or_not() -> None:
    payload: Json = {"text": "hi", "n": 1}
    redirected: Json = {"text": "ho", "n": 2.5}

    verdict, said = decide([FakeHook("rewrite", HookOutcome(outcome="redirect", value=redirected))], payload)

    assert (verdict.action, verdict.payload, said) == ("continue", redirected, [])


def test_a_redirect_after_a_redirect_is_held_to_the_redirected_shape() -> None:
    first: Json = {"tool": "read", "input": {"path": "a"}, "callId": "c1"}

    verdict, said = decide(
        [
            FakeHook("one", HookOutcome(outcome="redirect", value=first)),
            FakeHook("two", HookOutcome(outcome="redirect", value={**first, "input": []})),
        ]
    )

    assert verdict.payload == first
    assert [n.message for n in said] == [
        "hook two answered 'redirect' with input an array where it was an object, which decides "
        "nothing: a redirect carries a whole payload of the same shape (tool, input, callId)"
    ]


def test_an_ask_is_remembered_past_later_hooks_that_continue() -> None:
    careful, after = FakeHook("careful", ASK), FakeHook("after")

    verdict, _ = decide([careful, after])

    assert verdict == HookVerdict("ask", TOOL_CALL, asked_by=careful)
    assert after.decided == [TOOL_CALL]


def test_a_later_deny_outranks_an_earlier_ask() -> None:
    verdict, _ = decide([FakeHook("careful", ASK), FakeHook("guard", HookOutcome(outcome="deny"))])

    assert verdict.action == "deny"


def test_a_hook_answering_allow_decides_nothing_and_says_so_once() -> None:
    after = FakeHook("after", ASK)

    verdict, said = decide([FakeHook("guard", allow_outcome()), after])

    assert verdict == HookVerdict("ask", TOOL_CALL, asked_by=after)
    assert [(n.source, n.message, n.level) for n in said] == [
        (
            "plugin guard",
            "hook guard answered 'allow', which decides nothing: hooks can continue, deny, ask, block or redirect",
            "warning",
        )
    ]


def test_a_hook_answering_something_that_is_not_an_outcome_decides_nothing() -> None:
    verdict, said = decide([FakeHook("odd", "deny")])

    assert verdict.action == "continue"
    assert [n.message for n in said] == [
        "hook odd answered a str, which decides nothing: hooks can continue, deny, ask, block or redirect"
    ]


def test_a_hook_that_raises_decides_nothing_is_logged_and_the_next_hook_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    after = FakeHook("after", HookOutcome(outcome="deny", value="later"))

    with caplog.at_level(logging.ERROR, logger="bingo.kernel.hooks"):
        verdict, said = decide([FakeHook("broken", error=RuntimeError("boom")), after])

    assert verdict == HookVerdict("deny", TOOL_CALL, "later", decided_by=after)
    assert [(n.source, n.message) for n in said] == [("plugin broken", "hook broken failed (boom) and decides nothing")]
    assert any(record.exc_info for record in caplog.records)


def test_a_remote_hook_refused_by_the_wire_is_treated_like_any_failure() -> None:
    refused = PluginError("hook/decide answered an outcome the wire does not know", code=-32602)

    verdict, said = decide([FakeHook("remote", error=refused)])

    assert verdict.action == "continue"
    assert len(said) == 1
    assert said[0].message.startswith("hook remote failed (")


def test_a_hook_that_misses_its_deadline_decides_nothing_and_the_next_runs() -> None:
    late = FakeHook("slow", HookOutcome(outcome="deny"), hang=True)
    after = FakeHook("after", ASK)
    runner, said = hooks_with([late, after], SHORT_DEADLINE)

    verdict, took = timed(lambda: runner.decide("tool", "before", TOOL_CALL))

    assert took == pytest.approx(SHORT_DEADLINE)
    assert verdict == HookVerdict("ask", TOOL_CALL, asked_by=after)
    assert late.cancelled
    assert [(n.source, n.message) for n in said] == [
        ("plugin slow", "hook slow missed its deadline (0.05 s: deadlines.hook/decide in settings) and decides nothing")
    ]


def test_a_hook_raising_its_own_timeout_is_a_failure_not_a_missed_deadline() -> None:
    _, said = decide([FakeHook("fussy", error=TimeoutError("upstream timed out"))])

    assert [n.message for n in said] == ["hook fussy failed (upstream timed out) and decides nothing"]


def test_decide_refuses_a_point_that_only_observes() -> None:
    runner, _ = hooks_with([])

    with pytest.raises(ValueError):
        run(lambda: runner.decide("tool", "after", TOOL_CALL))


@pytest.mark.parametrize(("site", "point"), [("prompt", "submit"), ("command", "before")])
def test_every_decision_point_runs_its_hooks(site: str, point: str) -> None:
    hook = FakeHook("h", HookOutcome(outcome="block", value="stop"), site=site, points=[point])
    runner, _ = hooks_with([hook])

    verdict = run(lambda: runner.decide(site, point, {"text": "hi"}))

    assert verdict == HookVerdict("block", {"text": "hi"}, "stop", decided_by=hook)


# --- observing -----------------------------------------------------------------------


def test_observe_does_not_wait_for_the_observer() -> None:
    watcher = FakeHook("watch", site="turn", points=["start"])
    watcher.wait_for_release = True

    async def scenario() -> tuple[list[tuple[str, Json]], list[tuple[str, Json]]]:
        runner, _ = hooks_with([watcher])
        async with runner:
            runner.observe("turn", "start", {"turn": 1})
            before = list(watcher.observed)
            watcher.release.set()
        return before, watcher.observed

    before, after = run(scenario)

    assert before == []
    assert after == [("start", {"turn": 1})]


def test_only_observers_of_the_site_and_point_are_told() -> None:
    wanted = FakeHook("a", site="session", points=["start", "end"])
    other = FakeHook("b", site="turn", points=["start"])

    async def scenario() -> None:
        runner, _ = hooks_with([wanted, other])
        async with runner:
            runner.observe("session", "end", {"session": "s1"})

    run(scenario)

    assert wanted.observed == [("end", {"session": "s1"})]
    assert other.observed == []


def test_a_failing_observer_says_so_and_the_others_still_observe() -> None:
    broken = FakeHook("broken", site="tool", points=["after"], error=RuntimeError("nope"))
    fine = FakeHook("fine", site="tool", points=["after"])

    async def scenario() -> list[Notice]:
        runner, said = hooks_with([broken, fine])
        async with runner:
            runner.observe("tool", "after", {"tool": "read"})
        return said

    said = run(scenario)

    assert fine.observed == [("after", {"tool": "read"})]
    assert [(n.source, n.message) for n in said] == [
        ("plugin broken", "hook broken failed (nope) and observed nothing")
    ]


def test_a_late_observer_is_given_up_on_with_a_notice_when_hooks_close() -> None:
    late = FakeHook("late", site="turn", points=["end"], hang=True)

    async def scenario() -> list[Notice]:
        runner, said = hooks_with([late], SHORT_DEADLINE)
        async with runner:
            runner.observe("turn", "end", {"turn": 1})
        return said

    said, took = timed(scenario)

    assert took == pytest.approx(SHORT_DEADLINE)
    assert late.cancelled
    assert [n.message for n in said] == [
        "hook late missed its deadline (0.05 s: deadlines.hook/decide in settings) observing end"
    ]


def test_an_error_in_the_body_cancels_observations_and_is_raised_as_it_was() -> None:
    late = FakeHook("late", site="turn", points=["end"], hang=True)

    async def scenario() -> None:
        runner, _ = hooks_with([late])
        async with runner:
            runner.observe("turn", "end", {"turn": 1})
            await asyncio.sleep(0)  # let the observation start
            raise PluginError("the turn failed")

    with pytest.raises(PluginError):
        run(scenario)

    assert late.cancelled


def test_observe_outside_the_context_is_a_programming_error() -> None:
    runner, _ = hooks_with([FakeHook("a", site="turn", points=["start"])])

    with pytest.raises(RuntimeError):
        runner.observe("turn", "start", {})


def test_observe_refuses_a_point_that_decides() -> None:
    async def scenario() -> None:
        runner, _ = hooks_with([])
        async with runner:
            runner.observe("tool", "before", TOOL_CALL)

    with pytest.raises(ValueError):
        run(scenario)


# --- failing closed ------------------------------------------------------------------

CLOSED = frozenset({"plugin guard"})
"""The fake hooks' source is `plugin <name>`: this fails the hook named guard closed."""


def test_a_fail_closed_hook_that_misses_its_deadline_answers_ask() -> None:
    guard = FakeHook("guard", hang=True)
    runner, said = hooks_with([guard], SHORT_DEADLINE, CLOSED)

    verdict, took = timed(lambda: runner.decide("tool", "before", TOOL_CALL))

    assert took == pytest.approx(SHORT_DEADLINE)
    assert verdict == HookVerdict("ask", TOOL_CALL, asked_by=guard)
    assert [(n.source, n.message) for n in said] == [
        (
            "plugin guard",
            "hook guard missed its deadline (0.05 s: deadlines.hook/decide in settings) and is treated as ask (hooks.failClosed)",
        )
    ]


def test_a_fail_closed_hook_that_raises_answers_ask() -> None:
    verdict, said = decide([FakeHook("guard", error=RuntimeError("boom"))], fail_closed=CLOSED)

    assert verdict.action == "ask"
    assert [n.message for n in said] == ["hook guard failed (boom) and is treated as ask (hooks.failClosed)"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            "deny",
            "hook guard answered a str, which is treated as ask (hooks.failClosed): hooks can continue, deny, ask, block or redirect",
        ),
        (
            allow_outcome(),
            "hook guard answered 'allow', which is treated as ask (hooks.failClosed): hooks can continue, deny, ask, block or redirect",
        ),
        (
            HookOutcome(outcome="redirect"),
            "hook guard answered 'redirect' with no value, which is treated as ask (hooks.failClosed)",
        ),
        (
            HookOutcome(outcome="redirect", value={}),
            "hook guard answered 'redirect' with a payload missing tool, input, callId, which is treated as ask "
            "(hooks.failClosed): a redirect carries a whole payload of the same shape (tool, input, callId)",
        ),
    ],
)
def test_a_fail_closed_hook_answering_nonsense_answers_ask(answer: Json, message: str) -> None:
    guard = FakeHook("guard", answer)
    verdict, said = decide([guard], fail_closed=CLOSED)

    assert verdict == HookVerdict("ask", TOOL_CALL, asked_by=guard)
    assert [n.message for n in said] == [message]


def test_a_fail_closed_hook_whose_plugin_is_not_running_answers_ask() -> None:
    down = PluginUnavailable("plugin guard is not running: it exited (status 1)")

    verdict, said = decide([FakeHook("guard", error=down)], fail_closed=CLOSED)

    assert verdict.action == "ask"
    assert [n.message for n in said] == [
        "hook guard could not be asked (plugin guard is not running: it exited (status 1)) and is treated as ask (hooks.failClosed)"
    ]


def test_a_hook_whose_plugin_is_not_running_decides_nothing_quietly() -> None:
    verdict, said = decide([FakeHook("guard", error=PluginUnavailable("plugin guard is not running"))])

    assert verdict == HookVerdict("continue", TOOL_CALL)
    assert said == []


def test_failing_closed_is_per_plugin_and_a_deny_still_denies() -> None:
    other = FakeHook("other", error=RuntimeError("boom"))

    guard = FakeHook("guard", HookOutcome(outcome="deny", value="no"))
    verdict, said = decide([other, guard], fail_closed=CLOSED)

    assert verdict == HookVerdict("deny", TOOL_CALL, "no", decided_by=guard)
    assert [n.message for n in said] == ["hook other failed (boom) and decides nothing"]
