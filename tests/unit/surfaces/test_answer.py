"""How the terminal decides a question's keys, and how a session is listed to choose from
(ADR-0035). The keys themselves are tested through the binary (tests/e2e/test_terminal_keys.py)."""

from __future__ import annotations

import datetime as dt

from bingo.store import SessionInfo
from bingo.surfaces.terminal._answer import Key, keys_for
from bingo.surfaces.terminal._start import session_rows


def test_choices_with_different_first_letters_are_answered_by_those_letters() -> None:
    assert keys_for(["yes", "no"]) == [Key("y", "yes", "yes"), Key("n", "no", "no")]
    assert keys_for(["Yes", "always", "No"]) == [
        Key("y", "Yes", "Yes"),
        Key("a", "always", "always"),
        Key("n", "No", "No"),
    ]


def test_choices_whose_letters_clash_or_are_many_or_not_letters_are_a_list() -> None:
    assert keys_for(["red", "rose"]) is None
    assert keys_for([f"{c}x" for c in "abcdefghij"]) is None  # ten: more than a line of keys
    assert keys_for(["-1", "+1"]) is None
    assert keys_for(["é", "a"]) is None  # a key a person may not have
    assert keys_for([]) is None


def test_a_session_is_listed_with_when_it_was_used_its_first_prompt_and_its_id() -> None:
    now = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)

    def info(id: str, minutes: float, title: str) -> SessionInfo:
        when = now - dt.timedelta(minutes=minutes)
        return SessionInfo(id=id, project="/p", created=when, updated=when, title=title, frames=2)

    rows = session_rows(
        [info("a", 0.5, "fix the bug"), info("b", 5, ""), info("c", 180, "x"), info("d", 3000, "y")], now
    )
    assert rows == [
        "        just now  fix the bug  · a",
        "       5 min ago  (no prompt)  · b",
        "         3 h ago  x  · c",
        "2026-12-02 10:00  y  · d",
    ]
