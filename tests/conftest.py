"""Shared by every test: a clean environment, so no test sees the machine's own settings; the
Hypothesis profiles; and the figures of the run's summary, gathered from xdist's workers."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import settings

_CLEARED_PREFIXES = ("BINGO_", "ANTHROPIC_", "OPENAI_")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy")
_CLEARED = (*_PROXIES, "COLUMNS", "LINES")
"""COLUMNS and LINES would override a pseudo-terminal's own size in the bingo a test starts;
an xdist worker has them (80x24) though pytest's own process does not."""

# The Hypothesis profile CI runs (ADR-0041): scripts/test selects it with
# --hypothesis-profile=ci; a developer's own pytest keeps Hypothesis's default (100 examples,
# and every test's own figure). `ci` tries a quarter as many examples of the same properties
# (tests/support/examples.py scales a test's own figure by the same ratio), has no deadline (a
# loaded machine is not a failure) and no example database (parallel workers share nothing).
settings.register_profile("ci", max_examples=25, deadline=None, database=None, print_blob=True)


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No BINGO_*, provider keys, proxy variables (httpx style) or terminal size leak in
    from the machine."""
    for name in list(os.environ):
        if name.startswith(_CLEARED_PREFIXES) or name in _CLEARED:
            monkeypatch.delenv(name, raising=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under pytest-xdist, a worker hands its figures to the controller (tests/support/summary.py)."""
    from tests.support import summary

    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["bingo_figures"] = summary.export()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist's controller: a worker finished; its figures join the summary."""
    from tests.support import summary

    exported = getattr(node, "workeroutput", {}).get("bingo_figures")
    if exported:
        summary.merge(exported)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Issue 5, part 7: the figures of the fault zoo, the fuzzing, the load test and the
    store's crash loop, as their tests recorded them (tests/support/summary.py)."""
    from tests.support import summary

    rows = summary.lines()
    if rows:
        terminalreporter.write_sep("=", "faults, fuzzing and load")
        for row in rows:
            terminalreporter.write_line(row)
