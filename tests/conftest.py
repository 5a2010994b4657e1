"""Shared by every test: a clean environment, so no test sees the machine's own settings; the
interpreter `python3` runs first on PATH (not its version manager's shim); the Hypothesis
profiles; the figures of the run's summary, gathered from xdist's workers; and the Matrix
homeserver the workers shared, stopped at the end."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

_CLEARED_PREFIXES = ("BINGO_", "ANTHROPIC_", "OPENAI_")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy")
_CLEARED = (*_PROXIES, "COLUMNS", "LINES")
"""COLUMNS and LINES would override a pseudo-terminal's own size in the bingo a test starts;
an xdist worker has them (80x24) though pytest's own process does not."""


def _interpreter_before_its_shim() -> None:
    """Put the directory of the interpreter `python3` runs first on PATH, when `python3` is a
    version manager's shim (pyenv's, on the CI machine): the test plugins are `python3 main.py`,
    and each start through the shim ran some forty bash processes before the interpreter it
    then runs anyway (0.42 CPU s for a `bingo -p` with two plugins, 0.30 without). Every
    process the tests start inherits it; the interpreter each runs is the same."""
    shim = shutil.which("python3")
    if shim is None:
        return
    try:
        real = subprocess.run(
            [shim, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True, timeout=60
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    here = os.path.dirname(real)
    if not real or not os.path.isabs(real):
        return
    first = [here] if os.path.realpath(here) != os.path.realpath(os.path.dirname(shim)) else []
    bare = _without_site_packages(real)
    if bare is not None:
        first.insert(0, bare)
    if first:
        os.environ["PATH"] = os.pathsep.join([*first, os.environ.get("PATH", "")])


_BARE = Path(__file__).resolve().parents[1] / ".cache" / "plugin-python"


def _without_site_packages(real: str) -> str | None:
    """The bin directory of a virtualenv of `real` with nothing installed (made once, under a
    lock: xdist's workers import this at once), or None when it cannot be made. Its `python3`
    is the same interpreter and standard library, without the machine's site-packages, whose
    .pth files run at every start: this CI machine's import certifi (and with it pathlib,
    zipfile, tempfile), 46 ms of CPU per `python3 -c pass` against 10 without; the test
    plugins, thousands of starts a run, import the standard library only (ADR-0041). The
    plugins that need a package (tests/plugins/mcp-*) are started by the tests' own
    interpreter, sys.executable."""
    stamp = _BARE / ".interpreter"

    def made() -> bool:
        try:
            return stamp.read_text(encoding="utf-8") == real
        except OSError:
            return False

    try:
        if not made():
            _BARE.parent.mkdir(parents=True, exist_ok=True)
            with (_BARE.parent / "plugin-python.lock").open("w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not made():
                    shutil.rmtree(_BARE, ignore_errors=True)
                    subprocess.run([real, "-m", "venv", "--without-pip", str(_BARE)], check=True, timeout=60)
                    stamp.write_text(real, encoding="utf-8")
    except (OSError, subprocess.SubprocessError):
        return None
    return str(_BARE / "bin")


_interpreter_before_its_shim()

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
    """Under pytest-xdist, a worker hands its figures to the controller (tests/support/summary.py),
    and the controller stops the homeserver the workers shared."""
    from tests.support import summary

    workeroutput: dict[str, Any] | None = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["bingo_figures"] = summary.export()
    elif getattr(session.config.option, "numprocesses", None):
        # xdist's controller: the Matrix homeserver its workers shared (tests/e2e/_synapse.py).
        from tests.e2e._synapse import stop_shared

        factory: pytest.TempPathFactory = getattr(session.config, "_tmp_path_factory")  # noqa: B009 (pytest's own)
        stop_shared(factory.getbasetemp())


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


LONG = (
    "tests/e2e/test_store_crash.py::",
    "tests/e2e/test_check_plugin_zoo.py::test_the_checker_names_each_zoo_members_fault",
    "tests/load/test_load.py::",
    "tests/load/test_unread_stdin.py::",
    "tests/e2e/test_package_runners.py::",
    "tests/e2e/test_sessions.py::test_compact_command_compacts_the_session_it_continues",
    "tests/e2e/test_mcp_http.py::",
    "tests/e2e/test_matrix_channel.py::test_messages_still_waiting_when_bingo_stops",
    "tests/e2e/test_matrix_channel.py::test_a_homeserver_restart",
    "tests/e2e/test_bounded_logs.py::test_huge_method_names",
    "tests/e2e/test_bridge_promises.py::test_an_interrupted_turn_sends_tool_cancel",
)
"""Tests of many seconds each (`--durations` on a loaded machine: 10 to 45 s): under xdist's
work stealing they start first, one at the head of each worker's share, so none of them is
the last thing a worker runs while the others have finished (ADR-0041)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist worksteal`, the LONG tests at the heads of the workers' first shares.
    Each worker collects the same order (xdist requires it): it depends on nothing else."""
    workers: int | None = getattr(config, "workerinput", {}).get("workercount")
    if not workers or config.getoption("dist", None) != "worksteal":
        return
    long = [item for item in items if item.nodeid.startswith(LONG)]
    rest = [item for item in items if not item.nodeid.startswith(LONG)]
    if len(items) < 10 * workers * max(1, len(long)):
        return  # a few files: nothing to balance
    # xdist hands each idle worker, in turn, len(pending) // (workers left) from the front.
    ordered: list[pytest.Item] = []
    left, taken = len(items), 0
    for worker in range(workers):
        share = left // (workers - worker)
        head = long[worker::workers][:share]
        ordered += head + rest[taken : taken + share - len(head)]
        taken += share - len(head)
        left -= share
    ordered += rest[taken:]
    if sorted(map(id, ordered)) == sorted(map(id, items)):  # every test, once
        items[:] = ordered
