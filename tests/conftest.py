"""Shared by every test: a clean environment, so no test sees the machine's own settings."""

from __future__ import annotations

import os

import pytest

_CLEARED_PREFIXES = ("BINGO_", "ANTHROPIC_", "OPENAI_")
_CLEARED = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No BINGO_*, provider keys or proxy variables leak in from the machine (httpx style)."""
    for name in list(os.environ):
        if name.startswith(_CLEARED_PREFIXES) or name in _CLEARED:
            monkeypatch.delenv(name, raising=False)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Issue 5, part 7: the figures of the fault zoo, the fuzzing, the load test and the
    store's crash loop, as their tests recorded them (tests/support/summary.py)."""
    from tests.support import summary

    rows = summary.lines()
    if rows:
        terminalreporter.write_sep("=", "faults, fuzzing and load")
        for row in rows:
            terminalreporter.write_line(row)
