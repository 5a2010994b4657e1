"""`kernel.patterns.linear`: RE2, its refusals said, and text no UTF-8 holds taken in stride."""

from __future__ import annotations

import re

import pytest

from bingo.kernel._rule import argument_matches
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
