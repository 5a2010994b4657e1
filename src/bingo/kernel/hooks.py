"""Hooks: running the hooks that declared a site and point, and folding what they answer.

Owns the decision fold of INTERFACE.md §5 (hooks run in registration order; `deny` and
`block` stop; `redirect` replaces the payload for the hooks after it; `ask` is remembered;
`continue` goes on), the deadline on every hook, the rule that a hook which raises, is late
or answers anything else decides nothing and raises one notice, and the task group that
observations run in so that `observe` never makes its caller wait. It does not consult the
gate (the turn loop passes a hook's `ask` to it) and knows nothing of the wire: a bridged
hook is a hook, and whatever it raises is treated like any other hook's failure.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from types import TracebackType
from typing import Literal

import msgspec

from ..wire import HookOutcome, Json
from .interfaces import Hook
from .notices import Notices

__all__ = ["DECIDE_POINTS", "OBSERVE_POINTS", "HookVerdict", "Hooks"]

_log = logging.getLogger(__name__)

DECIDE_POINTS: frozenset[tuple[str, str]] = frozenset(
    {("prompt", "submit"), ("tool", "before"), ("command", "before")}
)
"""The (site, point) pairs whose hooks decide."""

OBSERVE_POINTS: frozenset[tuple[str, str]] = frozenset(
    {
        ("tool", "after"),
        ("turn", "start"),
        ("turn", "end"),
        ("session", "start"),
        ("session", "end"),
    }
)
"""The (site, point) pairs whose hooks only watch."""

_ANSWERS = "hooks can continue, deny, ask, block or redirect"


class HookVerdict(msgspec.Struct, frozen=True):
    """What the hooks at a decision point decided together. `payload` is the payload as the
    last `redirect` left it; `reason` is the deciding hook's words for `deny` or `block`."""

    action: Literal["continue", "deny", "ask", "block"]
    payload: Json
    reason: str | None = None
    redirected_by: Hook | None = None
    """The last hook that redirected the payload, if one did."""


async def _answer(hook: Hook, point: str, payload: Json) -> object:
    """What `hook` answered, as it answered it: an in-process hook is not held to its
    annotation, so the fold checks the type instead of trusting it."""
    return await hook.decide(point, payload)


def _seconds(deadline: float) -> str:
    return f"{deadline:g} s"


class Hooks:
    """The host's hooks. An async context manager: observations run in a task group it
    owns, and leaving it waits for them at most one deadline, then cancels the rest."""

    def __init__(self, hooks: Sequence[Hook], notices: Notices, deadline: float) -> None:
        # The registry's own list, read live: a plugin whose handshake changed is re-registered
        # mid-run, and its hooks must apply from then on.
        self._hooks = hooks
        self._notices = notices
        self._deadline = deadline
        self._group: asyncio.TaskGroup | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._gave_up = False

    async def __aenter__(self) -> Hooks:
        group = asyncio.TaskGroup()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is None:
            return
        try:
            if self._pending and exc_type is None:
                await asyncio.wait(set(self._pending), timeout=self._deadline)
                # What is still running now has had its deadline: it is cancelled as late.
                self._gave_up = True
        finally:
            for task in set(self._pending):
                task.cancel()
            # The body's own exception is not handed to the group: a TaskGroup would wrap it
            # in an ExceptionGroup, and the caller must see it as it was raised.
            await group.__aexit__(None, None, None)

    def _at(self, site: str, point: str) -> list[Hook]:
        return [hook for hook in self._hooks if hook.spec.site == site and point in hook.spec.points]

    def _fault(self, hook: Hook, what: str) -> None:
        self._notices.say(hook.source, f"hook {hook.spec.name} {what}", "warning")

    async def decide(self, site: str, point: str, payload: Json) -> HookVerdict:
        """Run the hooks at decision point `site.point` in order and fold their answers.
        A hook that fails, is late or answers nonsense decides nothing (one notice)."""
        if (site, point) not in DECIDE_POINTS:
            raise ValueError(f"{site}.{point} is not a decision point")
        asked = False
        by: Hook | None = None
        for hook in self._at(site, point):
            outcome = await self._ask_one(hook, point, payload)
            if outcome is None:
                continue
            # Typed as object: an in-process hook is not held to the Literal, and the fold
            # must treat any other answer ("allow" above all) as deciding nothing.
            answer: object = outcome.outcome
            reason = outcome.value if isinstance(outcome.value, str) else None
            match answer:
                case "deny":
                    return HookVerdict("deny", payload, reason, by)
                case "block":
                    return HookVerdict("block", payload, reason, by)
                case "redirect" if outcome.value is not None:
                    payload, by = outcome.value, hook
                case "redirect":
                    self._fault(hook, "answered 'redirect' with no value, which decides nothing")
                case "ask":
                    asked = True
                case "continue":
                    pass
                case _:
                    self._fault(hook, f"answered {answer!r}, which decides nothing: {_ANSWERS}")
        return HookVerdict("ask" if asked else "continue", payload, None, by)

    async def _ask_one(self, hook: Hook, point: str, payload: Json) -> HookOutcome | None:
        """One hook's outcome, or None (and one notice) when it decided nothing."""
        timeout = asyncio.timeout(self._deadline)
        try:
            async with timeout:
                outcome = await _answer(hook, point, payload)
        except TimeoutError as exc:
            if not timeout.expired():
                self._failed(hook, "decide", exc)
                return None
            self._fault(hook, f"missed its deadline ({_seconds(self._deadline)}) and decides nothing")
            return None
        except Exception as exc:  # boundary: a hook's failure is data, never the caller's
            self._failed(hook, "decide", exc)
            return None
        if not isinstance(outcome, HookOutcome):
            answer = type(outcome).__name__
            self._fault(hook, f"answered a {answer}, which decides nothing: {_ANSWERS}")
            return None
        return outcome

    def _failed(self, hook: Hook, what: str, exc: BaseException) -> None:
        _log.error("hook %s (%s) failed to %s", hook.spec.name, hook.source, what, exc_info=exc)
        words = str(exc) or type(exc).__name__
        verb = "decides nothing" if what == "decide" else "observed nothing"
        self._fault(hook, f"failed ({words}) and {verb}")

    def observe(self, site: str, point: str, payload: Json) -> None:
        """Hand `payload` to every hook watching `site.point`, without waiting for them.
        Must be called inside `async with hooks`."""
        if (site, point) not in OBSERVE_POINTS:
            raise ValueError(f"{site}.{point} is not an observation point")
        if self._group is None:
            raise RuntimeError("Hooks.observe called outside `async with hooks`")
        for hook in self._at(site, point):
            task = self._group.create_task(self._watch_one(hook, point, payload))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _watch_one(self, hook: Hook, point: str, payload: Json) -> None:
        late = f"missed its deadline ({_seconds(self._deadline)}) observing {point}"
        timeout = asyncio.timeout(self._deadline)
        try:
            async with timeout:
                await hook.observe(point, payload)
        except TimeoutError as exc:
            if not timeout.expired():
                self._failed(hook, "observe", exc)
                return
            self._fault(hook, late)
        except asyncio.CancelledError:
            # Closing waited a deadline for this one and is cancelling it: it is as late as
            # one that hit its own timeout, which may simply not have fired yet.
            if self._gave_up:
                self._fault(hook, late)
            raise
        except Exception as exc:  # boundary: an observer's failure must not end the group
            self._failed(hook, "observe", exc)
