"""The gate: whether a tool call runs, is asked about, or is refused.

Owns the permission grammar of INTERFACE.md §3 (a rule is a tool name in which `*` matches
any run of characters, and every other character, `?`, `[` and `.` included, stands for
itself), the precedence `deny` > `ask` > `allow`, the trusted-and-read-only exemption, and the
one line the model is told when a call is refused for want of a rule. It does not ask anyone
(the turn loop does) and does not run hooks (a hook's `ask` arrives here as `hook_asks`).
The verdict plane stays in-process: nothing here crosses the wire.
"""

from __future__ import annotations

import enum
import functools
import re

import msgspec

from ..wire import ToolTraits
from .settings import Permissions

__all__ = ["Decision", "Gate", "Verdict", "matches", "refusal"]

# Compiled rules are kept: the same few rules are matched against every call of a run.
_RULE_CACHE_SIZE = 1024


class Verdict(enum.Enum):
    """What the gate says about one call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Decision(msgspec.Struct, frozen=True):
    """A verdict and the rule that decided it; `rule` is None when no rule did (the
    trusted-and-read-only exemption, an untrusted tool with no rule, or a hook's `ask`)."""

    verdict: Verdict
    rule: str | None


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def _pattern(rule: str) -> re.Pattern[str]:
    literal_parts = (re.escape(part) for part in rule.split("*"))
    return re.compile(".*".join(literal_parts), re.DOTALL)


def matches(rule: str, name: str) -> bool:
    """Whether `rule` names the tool `name`: `*` matches any run of characters (none
    included); everything else must be equal."""
    return _pattern(rule).fullmatch(name) is not None


def refusal(name: str) -> str:
    """The line the model (and the person) is told when `name` was refused for want of a
    rule and nobody could be asked."""
    return f"{name} is not allowed here: add it to permissions.allow or pass --allow"


def _first(rules: list[str], name: str) -> str | None:
    for rule in rules:
        if matches(rule, name):
            return rule
    return None


class Gate:
    """Decides each tool call from the permission rules of this run."""

    def __init__(self, permissions: Permissions) -> None:
        self._allow = list(permissions.allow)
        self._ask = list(permissions.ask)
        self._deny = list(permissions.deny)

    def decide(self, name: str, traits: ToolTraits, *, hook_asks: bool = False) -> Decision:
        """The verdict for a call of tool `name`. `deny` beats `ask` beats `allow`; a tool
        whose traits are trusted and read-only runs without a rule unless a rule says
        otherwise; an untrusted tool with no rule is asked about. `hook_asks` (a hook
        answered `ask`) turns an ALLOW into ASK: a hook can tighten, never widen."""
        rule = _first(self._deny, name)
        if rule is not None:
            return Decision(Verdict.DENY, rule)
        rule = _first(self._ask, name)
        if rule is not None:
            return Decision(Verdict.ASK, rule)
        if hook_asks:
            return Decision(Verdict.ASK, None)
        rule = _first(self._allow, name)
        if rule is not None:
            return Decision(Verdict.ALLOW, rule)
        if traits.trusted and traits.read_only:
            return Decision(Verdict.ALLOW, None)
        return Decision(Verdict.ASK, None)

    def allow(self, rule: str) -> None:
        """Add an allow rule for the rest of this run (the person's "yes, always"). It does
        not outrank a `deny` or an `ask` rule from settings."""
        if rule not in self._allow:
            self._allow.append(rule)
