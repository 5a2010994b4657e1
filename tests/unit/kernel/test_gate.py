"""The gate: the permission grammar, precedence, the trusted-and-read-only exemption, the
hook's `ask`, and the refusal line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.kernel.gate import Decision, Gate, Verdict, matches, refusal
from bingo.kernel.settings import Permissions
from bingo.wire import ToolTraits

UNTRUSTED = ToolTraits()
TRUSTED_READ_ONLY = ToolTraits(trusted=True, read_only=True)
TRUSTED_WRITER = ToolTraits(trusted=True, read_only=False)
UNTRUSTED_READ_ONLY = ToolTraits(trusted=False, read_only=True)

names = st.text(min_size=0, max_size=30)
names_without_star = st.text(min_size=0, max_size=30).filter(lambda text: "*" not in text)


# --- the grammar ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "name", "expected"),
    [
        ("read", "read", True),
        ("read", "reader", False),
        ("read", "rea", False),
        ("read", "Read", False),
        ("*", "anything", True),
        ("*", "", True),
        ("plugin__*", "plugin__wordcount__count", True),
        ("plugin__*", "plugin_x", False),
        ("*__count", "plugin__wordcount__count", True),
        ("*__count", "plugin__wordcount__counter", False),
        ("plugin__*__rm", "plugin__files__rm", True),
        ("plugin__*__rm", "plugin____rm", True),
        ("plugin__*__rm", "plugin__files__rmdir", False),
        ("a*b*c", "abc", True),
        ("a*b*c", "a-x-b-y-c", True),
        ("a*b*c", "acb", False),
        ("**", "x", True),
        ("", "", True),
        ("", "x", False),
    ],
)
def test_a_rule_matches_the_names_its_stars_allow(rule: str, name: str, expected: bool) -> None:
    assert matches(rule, name) is expected


@pytest.mark.parametrize(
    ("rule", "literal_name", "other_name"),
    [
        ("b?sh", "b?sh", "bash"),
        ("[ab]", "[ab]", "a"),
        ("read.me", "read.me", "readxme"),
        ("a+", "a+", "aa"),
        ("(x|y)", "(x|y)", "x"),
        ("^x$", "^x$", "x"),
        ("a\\d", "a\\d", "a1"),
        ("{1}", "{1}", "1"),
    ],
)
def test_characters_other_than_star_stand_for_themselves(rule: str, literal_name: str, other_name: str) -> None:
    assert matches(rule, literal_name)
    assert not matches(rule, other_name)


def test_a_star_matches_across_newlines() -> None:
    assert matches("a*b", "a\nb")


@settings(derandomize=True, deadline=None)
@given(rule=names_without_star, name=names)
def test_a_rule_without_a_star_matches_only_itself(rule: str, name: str) -> None:
    assert matches(rule, name) is (rule == name)


@settings(derandomize=True, deadline=None)
@given(name=names)
def test_a_lone_star_matches_every_name(name: str) -> None:
    assert matches("*", name)


@settings(derandomize=True, deadline=None)
@given(prefix=names, middle=names, suffix=names)
def test_a_star_in_place_of_any_part_of_a_name_matches_it(prefix: str, middle: str, suffix: str) -> None:
    assert matches(prefix + "*" + suffix, prefix + middle + suffix)


@settings(derandomize=True, deadline=None)
@given(prefix=names_without_star, name=names)
def test_a_trailing_star_matches_exactly_the_names_with_that_prefix(prefix: str, name: str) -> None:
    assert matches(prefix + "*", name) is name.startswith(prefix)


@settings(derandomize=True, deadline=None)
@given(rule=names_without_star, name=names)
def test_stars_around_a_literal_match_exactly_the_names_containing_it(rule: str, name: str) -> None:
    assert matches("*" + rule + "*", name) is (rule in name)


# --- decisions -----------------------------------------------------------------------


def test_deny_beats_ask_and_allow() -> None:
    gate = Gate(Permissions(allow=("bash",), ask=("b*",), deny=("*sh",)))

    assert gate.decide("bash", UNTRUSTED) == Decision(Verdict.DENY, "*sh")


def test_ask_beats_allow() -> None:
    gate = Gate(Permissions(allow=("bash",), ask=("b*",)))

    assert gate.decide("bash", UNTRUSTED) == Decision(Verdict.ASK, "b*")


def test_an_allow_rule_allows_an_untrusted_tool() -> None:
    gate = Gate(Permissions(allow=("plugin__wordcount__count",)))

    decision = gate.decide("plugin__wordcount__count", UNTRUSTED)

    assert decision == Decision(Verdict.ALLOW, "plugin__wordcount__count")


def test_the_first_matching_rule_in_order_is_the_one_named() -> None:
    gate = Gate(Permissions(allow=("plugin__*", "plugin__wordcount__*")))

    assert gate.decide("plugin__wordcount__count", UNTRUSTED).rule == "plugin__*"


def test_an_untrusted_tool_without_a_rule_is_asked_about() -> None:
    gate = Gate(Permissions(allow=("read",)))

    assert gate.decide("plugin__wordcount__count", UNTRUSTED) == Decision(Verdict.ASK, None)


def test_a_trusted_read_only_tool_runs_without_a_rule() -> None:
    gate = Gate(Permissions())

    assert gate.decide("read", TRUSTED_READ_ONLY) == Decision(Verdict.ALLOW, None)


@pytest.mark.parametrize("traits", [TRUSTED_WRITER, UNTRUSTED_READ_ONLY, UNTRUSTED])
def test_a_tool_that_is_not_both_trusted_and_read_only_needs_a_rule(traits: ToolTraits) -> None:
    gate = Gate(Permissions())

    assert gate.decide("bash", traits).verdict is Verdict.ASK


def test_a_trusted_read_only_tool_is_still_denied_by_a_deny_rule() -> None:
    gate = Gate(Permissions(deny=("read",)))

    assert gate.decide("read", TRUSTED_READ_ONLY) == Decision(Verdict.DENY, "read")


def test_a_trusted_read_only_tool_is_asked_about_under_an_ask_rule() -> None:
    gate = Gate(Permissions(ask=("re*",)))

    assert gate.decide("read", TRUSTED_READ_ONLY) == Decision(Verdict.ASK, "re*")


def test_a_hook_asking_turns_an_allow_rule_into_a_question() -> None:
    gate = Gate(Permissions(allow=("bash",)))

    assert gate.decide("bash", UNTRUSTED, hook_asks=True) == Decision(Verdict.ASK, None)


def test_a_hook_asking_turns_the_read_only_exemption_into_a_question() -> None:
    gate = Gate(Permissions())

    assert gate.decide("read", TRUSTED_READ_ONLY, hook_asks=True).verdict is Verdict.ASK


def test_a_hook_asking_never_loosens_a_deny() -> None:
    gate = Gate(Permissions(deny=("bash",)))

    assert gate.decide("bash", UNTRUSTED, hook_asks=True) == Decision(Verdict.DENY, "bash")


@settings(derandomize=True, deadline=None)
@given(
    allow=st.lists(names, max_size=3),
    ask=st.lists(names, max_size=3),
    deny=st.lists(names, max_size=3),
    name=names,
    trusted=st.booleans(),
    read_only=st.booleans(),
)
def test_a_hook_asking_never_yields_allow(
    allow: list[str],
    ask: list[str],
    deny: list[str],
    name: str,
    trusted: bool,
    read_only: bool,
) -> None:
    gate = Gate(Permissions(allow=tuple(allow), ask=tuple(ask), deny=tuple(deny)))
    traits = ToolTraits(trusted=trusted, read_only=read_only)

    asked = gate.decide(name, traits, hook_asks=True)
    plain = gate.decide(name, traits)

    assert asked.verdict is not Verdict.ALLOW
    if plain.verdict is Verdict.DENY:
        assert asked == plain


def test_allowing_for_the_run_lets_later_calls_through() -> None:
    gate = Gate(Permissions())
    assert gate.decide("plugin__wordcount__count", UNTRUSTED).verdict is Verdict.ASK

    gate.allow("plugin__wordcount__count")

    decision = gate.decide("plugin__wordcount__count", UNTRUSTED)
    assert decision == Decision(Verdict.ALLOW, "plugin__wordcount__count")


def test_allowing_for_the_run_does_not_outrank_a_deny_rule() -> None:
    gate = Gate(Permissions(deny=("bash",)))

    gate.allow("bash")

    assert gate.decide("bash", UNTRUSTED).verdict is Verdict.DENY


def test_a_gate_does_not_share_its_run_rules_with_another_gate() -> None:
    permissions = Permissions()
    first, second = Gate(permissions), Gate(permissions)

    first.allow("bash")

    assert second.decide("bash", UNTRUSTED).verdict is Verdict.ASK
    assert permissions.allow == ()


def test_the_refusal_line_says_how_to_allow_the_tool() -> None:
    assert refusal("plugin__wordcount__count") == (
        "plugin__wordcount__count is not allowed here: add it to permissions.allow or pass --allow"
    )
