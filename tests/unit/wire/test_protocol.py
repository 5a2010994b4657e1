"""The method table: every request's default deadline is declared with it."""

from __future__ import annotations

from bingo.wire import DEFAULT_DEADLINES, FALLBACK_DEADLINE, METHODS, NOTIFICATIONS, deadline_for


def test_every_request_declares_the_deadline_of_interface_section_5() -> None:
    assert dict(DEFAULT_DEADLINES) == {
        "initialize": 10.0,
        "tool/call": 600.0,
        "command/run": 60.0,
        "command/complete": 1.0,
        "context/contribute": 2.0,
        "compactor/compact": 60.0,
        "provider/stream": 60.0,
        "hook/decide": 5.0,
        "service/call": 30.0,
    }
    assert all(info.deadline is not None for info in METHODS.values())
    assert all(info.deadline is None for info in NOTIFICATIONS.values())


def test_a_deadline_is_the_settings_then_the_tables_then_the_fallback() -> None:
    assert deadline_for("tool/call") == 600.0
    assert deadline_for("tool/call", {"tool/call": 5.0}) == 5.0
    assert deadline_for("initialize", {"tool/call": 5.0}) == 10.0
    assert deadline_for("something/new") == FALLBACK_DEADLINE
