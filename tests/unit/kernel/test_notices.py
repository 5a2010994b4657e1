"""Notices: the fan-out, "say it once", and the limit on what a source other than the host
may say (a burst, then NOTICES_PER_SECOND), paced by an injected clock."""

from __future__ import annotations

import logging

import pytest

from bingo.kernel.log import FOREIGN_MAX
from bingo.kernel.notices import HOST, NOTICE_BURST, NOTICES_PER_SECOND, Notices
from bingo.wire import Notice


class Clock:
    """Seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _notices(clock: Clock) -> tuple[Notices, list[Notice]]:
    notices = Notices(clock=clock, kept_in="/logs/bingo.log")
    said: list[Notice] = []
    notices.listen(said.append)
    return notices, said


def _lines(said: list[Notice]) -> list[str]:
    return [f"{notice.source}: {notice.message}" for notice in said]


def test_a_source_says_its_burst_and_the_rest_is_counted_and_said_in_one_line_at_flush() -> None:
    notices, said = _notices(Clock())
    for n in range(NOTICE_BURST + 25):
        notices.say("chatty", f"notice {n}")
    assert _lines(said) == [f"chatty: notice {n}" for n in range(NOTICE_BURST)]
    notices.flush()
    assert said[-1] == Notice(
        source="chatty", message="25 more notices were left out here; they are in /logs/bingo.log", level="warning"
    )
    notices.flush()  # nothing more was left out: nothing more to say
    assert len(said) == NOTICE_BURST + 1


def test_past_its_burst_a_source_earns_notices_back_at_the_rate() -> None:
    clock = Clock()
    notices, said = _notices(clock)
    for n in range(NOTICE_BURST + 1):
        notices.say("chatty", f"notice {n}")
    assert len(said) == NOTICE_BURST
    clock.now += 0.5 / NOTICES_PER_SECOND
    notices.say("chatty", "too soon")
    clock.now += 0.5 / NOTICES_PER_SECOND
    notices.say("chatty", "a second on")
    notices.say("chatty", "too soon again")
    assert _lines(said)[NOTICE_BURST:] == ["chatty: a second on"]
    notices.flush()
    assert _lines(said)[-1] == "chatty: 3 more notices were left out here; they are in /logs/bingo.log"


def test_a_quiet_source_earns_back_its_whole_burst_and_no_more() -> None:
    clock = Clock()
    notices, said = _notices(clock)
    for n in range(NOTICE_BURST):
        notices.say("chatty", f"first {n}")
    clock.now += 1000 / NOTICES_PER_SECOND
    for n in range(NOTICE_BURST + 1):
        notices.say("chatty", f"again {n}")
    assert len(said) == 2 * NOTICE_BURST
    notices.flush()
    assert _lines(said)[-1] == "chatty: 1 more notice was left out here; they are in /logs/bingo.log"


def test_each_source_has_its_own_limit_and_the_host_has_none() -> None:
    notices, said = _notices(Clock())
    for n in range(3 * NOTICE_BURST):
        notices.say("chatty", f"chatty {n}")
        if n < NOTICE_BURST:
            notices.say("quiet", f"quiet {n}")
        notices.say(HOST, f"host {n}")
    sources = [notice.source for notice in said]
    assert sources.count("chatty") == NOTICE_BURST
    assert sources.count("quiet") == NOTICE_BURST
    assert sources.count(HOST) == 3 * NOTICE_BURST
    notices.flush()
    assert (
        _lines(said)[-1] == f"chatty: {2 * NOTICE_BURST} more notices were left out here; they are in /logs/bingo.log"
    )


def test_a_notice_left_out_is_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    notices, _ = _notices(Clock())
    with caplog.at_level(logging.INFO, logger="bingo.kernel.notices"):
        for n in range(NOTICE_BURST + 2):
            notices.say("chatty", f"notice {n}")
    assert [record.getMessage() for record in caplog.records] == [
        f"notice left out: chatty: notice {NOTICE_BURST}",
        f"notice left out: chatty: notice {NOTICE_BURST + 1}",
    ]


def test_a_long_notice_is_cut_and_says_its_length() -> None:
    notices, said = _notices(Clock())
    notices.say("chatty", "x" * (8 * 1024 * 1024))
    [notice] = said
    assert notice.message == "x" * FOREIGN_MAX + "… (8388608 bytes, cut)"


def test_say_once_says_a_key_once_per_source() -> None:
    notices, said = _notices(Clock())
    assert notices.say_once("p", "k", "first")
    assert not notices.say_once("p", "k", "again")
    assert notices.say_once("q", "k", "other source")
    assert _lines(said) == ["p: first", "q: other source"]


def test_a_listener_stops_hearing_once_stopped_and_stopping_twice_leaves_the_others() -> None:
    notices = Notices()
    heard: list[str] = []
    first = notices.listen(lambda n: heard.append("first " + n.message))
    notices.listen(lambda n: heard.append("second " + n.message))

    notices.say("bingo", "one")
    first()
    first()  # a second stop does nothing
    notices.say("bingo", "two")

    assert heard == ["first one", "second one", "second two"]
    assert notices.listening() == 1
