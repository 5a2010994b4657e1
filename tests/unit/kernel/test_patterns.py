"""`kernel.patterns.linear`: RE2, its refusals said, and text no UTF-8 holds taken in stride."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bingo.kernel._rule import PATTERN_MAX, argument_matches, matches, parse_rule
from bingo.kernel.patterns import linear


def test_look_around_and_backreferences_are_refused_with_re2s_reason() -> None:
    for pattern, reason in (("(?<=a)b", "invalid perl operator: (?<="), (r"(a)\1", "invalid escape sequence: \\1")):
        with pytest.raises(ValueError, match=re.escape(reason)):
            linear(pattern)


def test_a_lone_surrogate_in_a_text_or_a_pattern_is_matched_as_a_replacement_character() -> None:
    # JSON's "\ud800" decodes to one; RE2 takes UTF-8, which cannot hold it. A deny rule's
    # wildcard still matches where it stands, and the same literal matches itself.
    assert argument_matches("rm *", "rm -rf \ud800")
    assert argument_matches("rm \ud800*", "rm \ud800 x")
    assert not argument_matches("rm \ud800", "rm x")
    assert linear("a.c", dot_nl=True).fullmatch("a\ud800c") is not None
    assert linear("é", of_bytes=True).search("café".encode()) is not None


@given(
    rule=st.text(alphabet="ab*", max_size=8),
    name=st.text(alphabet="ab", max_size=10),
)
def test_a_tool_name_rule_matches_as_its_regex_would_without_one(rule: str, name: str) -> None:
    regex = ".*".join(re.escape(piece) for piece in rule.split("*"))
    assert matches(rule, name) == (re.fullmatch(regex, name, re.DOTALL) is not None)


def test_a_rule_pattern_past_its_bound_is_a_problem_and_a_long_name_rule_is_matched_at_once() -> None:
    rule = parse_rule("bash(" + "x" * (PATTERN_MAX + 1) + ")")
    assert rule.pattern is None and rule.tool == "bash"
    assert rule.problem == f"its pattern is longer than {PATTERN_MAX} characters; put * for what varies"
    assert not matches("a*" * 100_000 + "b", "a" * 200_000)  # Python's re: 100,000 nested choices
