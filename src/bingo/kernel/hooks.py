"""Hooks: which declarations are hooks at all, running the hooks that declared a site and
point, and folding what they answer.

Owns the valid (site, point) pairs and the rule that a declaration naming any other is no
hook (`hook_problem`, applied where hooks are registered); the decision fold of INTERFACE.md
§5 (hooks run in registration order; `deny` and `block` stop; `redirect` replaces the payload
for the hooks after it, when its value is a whole payload of the same shape; `ask` is
remembered, with the first hook that asked; `continue` goes on); the words an `ask` is put
to the person in where no gate asks it (`confirm`: a slash command, a prompt); the deadline
on every hook (the only one a decision is held to, in process or across the wire: a bridged
hook sets no timer of its own); the rule that a hook which raises, is late or answers
anything else decides nothing and raises one notice — or answers `ask`, when its plugin is
one the person listed in `hooks.failClosed` — and the task group that observations run in
so that `observe` never makes its caller wait. It does not consult the gate (the turn loop
passes a tool hook's `ask` to it) and knows nothing of the wire: a bridged hook is a hook,
and whatever it raises is treated like any other hook's failure.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from types import TracebackType
from typing import Literal

import msgspec

from ..wire import HookOutcome, HookSpec, Json, is_object
from .errors import GateError, PluginUnavailable
from .interfaces import Asker, Hook
from .notices import Notices

__all__ = ["DECIDE_POINTS", "OBSERVE_POINTS", "HookVerdict", "Hooks", "asked_because", "confirm", "hook_problem"]

_log = logging.getLogger(__name__)

DECIDE_POINTS: frozenset[tuple[str, str]] = frozenset({("prompt", "submit"), ("tool", "before"), ("command", "before")})
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

_SITES: dict[str, tuple[str, ...]] = {
    "tool": ("before", "after"),
    "prompt": ("submit",),
    "command": ("before",),
    "turn": ("start", "end"),
    "session": ("start", "end"),
}
"""Every site and its points (DECIDE_POINTS and OBSERVE_POINTS), in the order a notice lists them."""

_PAIRS = "a hook names one site and its points: " + ", ".join(
    f"{site} ({', '.join(points)})" for site, points in _SITES.items()
)

_ANSWERS = "hooks can continue, deny, ask, block or redirect"
_REASON_SHOWN = 2000
"""Characters of an asking hook's reason put to the person."""

_NOTHING = "decides nothing"
_ASKS = "is treated as ask (hooks.failClosed)"
"""What becomes of a hook that decided nothing: the common case, and a fail-closed plugin's."""


def hook_problem(spec: HookSpec) -> str | None:
    """Why the declaration `spec` is no hook (its site is unknown, it names no points, or a
    point its site does not have), with the valid pairs; None when it is a hook. A hook
    whose declaration has a problem is never registered: it would be listed and never run."""
    site, points = spec.site, spec.points
    if site not in _SITES:
        wrong = f"site {site!r} is not a site"
    elif not points:
        wrong = f"it names no points of site {site!r}"
    else:
        strays = [point for point in points if (site, point) not in DECIDE_POINTS | OBSERVE_POINTS]
        if not strays:
            return None
        listed, one = ", ".join(repr(point) for point in strays), len(strays) == 1
        wrong = f"{'point' if one else 'points'} {listed} {'is' if one else 'are'} not of site {site!r}"
    return f"{wrong}; {_PAIRS}"


_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),  # before int: a bool is an int to Python, never to JSON
    (int, "a number"),
    (float, "a number"),
    (str, "a string"),
    (list, "an array"),
    (dict, "an object"),
)


def _kind(value: Json) -> str:
    """The JSON kind of `value`, in words."""
    for cls, words in _KINDS:
        if isinstance(value, cls):
            return words
    return "null"


def _redirect_problem(payload: Json, value: Json) -> str | None:
    """What is wrong with `value` as the payload that replaces `payload` (a redirect carries a
    whole payload of the same shape: the same keys, each of the same JSON kind), or None."""
    if not is_object(payload) or not is_object(value):
        return None if _kind(value) == _kind(payload) else _kind(value)
    missing = [key for key in payload if key not in value]
    if missing:
        return "a payload missing " + ", ".join(missing)
    extra = [key for key in value if key not in payload]
    if extra:
        return f"{'an extra key' if len(extra) == 1 else 'extra keys'} {', '.join(extra)}"
    for key, was in payload.items():
        if _kind(value[key]) != _kind(was):
            return f"{key} {_kind(value[key])} where it was {_kind(was)}"
    return None


def _shape(payload: Json) -> str:
    """A payload's shape, as a notice names it: `(tool, input, callId)`."""
    return f"({', '.join(payload)})" if is_object(payload) else _kind(payload)


class _Undecided(msgspec.Struct, frozen=True):
    """Why a hook decided nothing, as the words around what becomes of it: the notice is
    `hook <name> <did> <fate><then>` (`failed (boom) and` + `decides nothing`)."""

    did: str
    then: str = ""


class HookVerdict(msgspec.Struct, frozen=True):
    """What the hooks at a decision point decided together. `payload` is the payload as the
    last `redirect` left it; `reason` is the deciding hook's words for `deny` or `block`,
    and the asking hook's for `ask` (its value, when it gave one)."""

    action: Literal["continue", "deny", "ask", "block"]
    payload: Json
    reason: str | None = None
    redirected_by: Hook | None = None
    """The last hook that redirected the payload, if one did."""
    asked_by: Hook | None = None
    """The first hook that answered `ask` (or was treated as asking: `hooks.failClosed`),
    so that a refusal with nobody to ask can name it."""
    decided_by: Hook | None = None
    """The hook that answered `deny` or `block`, so that the refusal can name it."""


async def _answer(hook: Hook, point: str, payload: Json) -> object:
    """What `hook` answered, as it answered it: an in-process hook is not held to its
    annotation, so the fold checks the type instead of trusting it."""
    return await hook.decide(point, payload)


def _nonsense(outcome: HookOutcome, payload: Json) -> _Undecided | None:
    """Why `outcome`, answered for `payload`, decides nothing: an answer outside the five
    (`allow` above all: an in-process hook is not held to the Literal), or a redirect whose
    value is not a whole payload of the same shape. None when it decides."""
    answer: object = outcome.outcome
    if answer not in ("continue", "deny", "ask", "block", "redirect"):
        return _Undecided(f"answered {answer!r}, which", f": {_ANSWERS}")
    if answer != "redirect":
        return None
    if outcome.value is None:
        return _Undecided("answered 'redirect' with no value, which")
    problem = _redirect_problem(payload, outcome.value)
    if problem is None:
        return None
    return _Undecided(
        f"answered 'redirect' with {problem}, which",
        f": a redirect carries a whole payload of the same shape {_shape(payload)}",
    )


async def confirm(asker: Asker, verdict: HookVerdict, question: str) -> str | None:
    """Put a decision point's `ask` to the person where no gate asks it (a slash command, a
    prompt): `hook <name> (<plugin>) asks: <question>`, yes or no. None when they say yes;
    otherwise why not, in words that name the hook when there is nobody to ask."""
    hook = verdict.asked_by
    who = f"hook {hook.spec.name} ({hook.source})" if hook is not None else "a hook"
    try:
        answer = await asker.ask(f"{who} asks: {question}{asked_because(verdict)}", ["yes", "no"])
    except GateError:
        return f"{who} asked to confirm it, and there is no person to ask"
    return None if answer == "yes" else "the person said no"


def asked_because(verdict: HookVerdict) -> str:
    """The asking hook's words, as lines set off by `  │ ` below a question (so none can pass
    for bingo's own), or "" when it gave none. Bounded: a hook's reason is foreign text."""
    if verdict.action != "ask" or not verdict.reason:
        return ""
    words = verdict.reason if len(verdict.reason) <= _REASON_SHOWN else verdict.reason[: _REASON_SHOWN - 1] + "…"
    return "".join(f"\n  │ {line}" for line in words.splitlines() or [""])


def _seconds(deadline: float) -> str:
    return f"{deadline:g} s"


def _deadline_of(hook: Hook, default: float) -> float:
    """The seconds `hook` is waited for: its own `deadline` when it has one (a command hook's
    timeout, which its entry in settings names: INTERFACE.md §11), else `default`."""
    own: object = getattr(hook, "deadline", None)
    return float(own) if isinstance(own, int | float) and own > 0 else default


class Hooks:
    """The host's hooks. An async context manager: observations run in a task group it
    owns, and leaving it waits for them at most one deadline, then cancels the rest."""

    def __init__(
        self,
        hooks: Sequence[Hook],
        notices: Notices,
        deadline: float,
        *,
        fail_closed: frozenset[str] = frozenset(),
    ) -> None:
        # The registry's own list, read live: a plugin whose handshake changed is re-registered
        # mid-run, and its hooks must apply from then on.
        self._hooks = hooks
        self._notices = notices
        self._deadline = deadline
        self._fail_closed = fail_closed
        """The plugins (`hook.source`) whose hooks answer `ask` when they decide nothing."""
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

    def _undecided(self, hook: Hook, why: _Undecided) -> bool:
        """Say that `hook` decided nothing; True when its plugin fails closed, so that it
        answers `ask` instead."""
        closed = hook.source in self._fail_closed
        self._fault(hook, f"{why.did} {_ASKS if closed else _NOTHING}{why.then}")
        return closed

    async def decide(self, site: str, point: str, payload: Json) -> HookVerdict:
        """Run the hooks at decision point `site.point` in order and fold their answers.
        A hook that fails, is late or answers nonsense (an invalid redirect included)
        decides nothing (one notice), or answers `ask` if its plugin fails closed."""
        if (site, point) not in DECIDE_POINTS:
            raise ValueError(f"{site}.{point} is not a decision point")
        asked: Hook | None = None
        asked_why: str | None = None
        by: Hook | None = None
        for hook in self._at(site, point):
            outcome = await self._ask_one(hook, point, payload)
            if isinstance(outcome, HookOutcome):
                outcome = _nonsense(outcome, payload) or outcome
            if isinstance(outcome, _Undecided):
                if self._undecided(hook, outcome) and asked is None:
                    asked = hook
                continue
            if outcome is None:
                continue
            reason = outcome.value if isinstance(outcome.value, str) else None
            match outcome.outcome:
                case "deny":
                    return HookVerdict("deny", payload, reason, by, asked, hook)
                case "block":
                    return HookVerdict("block", payload, reason, by, asked, hook)
                case "redirect":
                    payload, by = outcome.value, hook
                case "ask":
                    if asked is None:
                        asked, asked_why = hook, reason
                case "continue":
                    pass
        return HookVerdict(
            "ask" if asked is not None else "continue", payload, asked_why if asked is not None else None, by, asked
        )

    async def _ask_one(self, hook: Hook, point: str, payload: Json) -> HookOutcome | _Undecided | None:
        """One hook's outcome; why it decided nothing; or None when its plugin is not
        running, which decides nothing quietly (its stop had its own notice)."""
        deadline = _deadline_of(hook, self._deadline)
        timeout = asyncio.timeout(deadline)
        try:
            async with timeout:
                outcome = await _answer(hook, point, payload)
        except TimeoutError as exc:
            if not timeout.expired():
                return _Undecided(f"failed ({self._logged(hook, 'decide', exc)}) and")
            return _Undecided(f"missed its deadline ({_seconds(deadline)}: deadlines.hook/decide in settings) and")
        except PluginUnavailable as exc:
            if hook.source not in self._fail_closed:
                return None
            return _Undecided(f"could not be asked ({exc.message}) and")
        except Exception as exc:  # boundary: a hook's failure is data, never the caller's
            return _Undecided(f"failed ({self._logged(hook, 'decide', exc)}) and")
        if not isinstance(outcome, HookOutcome):
            return _Undecided(f"answered a {type(outcome).__name__}, which", f": {_ANSWERS}")
        return outcome

    def _logged(self, hook: Hook, what: str, exc: BaseException) -> str:
        """Log `hook`'s failure to `what`, with its traceback; the failure in a few words."""
        _log.error("hook %s (%s) failed to %s", hook.spec.name, hook.source, what, exc_info=exc)
        return str(exc) or type(exc).__name__

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
        deadline = _deadline_of(hook, self._deadline)
        late = f"missed its deadline ({_seconds(deadline)}: deadlines.hook/decide in settings) observing {point}"
        timeout = asyncio.timeout(deadline)
        try:
            async with timeout:
                await hook.observe(point, payload)
        except TimeoutError as exc:
            if not timeout.expired():
                self._fault(hook, f"failed ({self._logged(hook, 'observe', exc)}) and observed nothing")
                return
            self._fault(hook, late)
        except asyncio.CancelledError:
            # Closing waited a deadline for this one and is cancelling it: it is as late as
            # one that hit its own timeout, which may simply not have fired yet.
            if self._gave_up:
                self._fault(hook, late)
            raise
        except Exception as exc:  # boundary: an observer's failure must not end the group
            self._fault(hook, f"failed ({self._logged(hook, 'observe', exc)}) and observed nothing")
