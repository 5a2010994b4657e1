"""The command line: the quick reader takes the plain shapes people type exactly as argparse
(the parser of record) would, and hands everything else to argparse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bingo.cli import _parsed, _quick, parse
from bingo.kernel.errors import UsageError

_PLAIN = [
    [],
    ["hello"],
    ["-p", "/wordcount notes.txt"],
    ["/help", "-p"],
    ["--print", "-c", "go on"],
    ["--continue", "--model", "m1", "--model", "m2", "x"],
    ["--resume", "2025", "--provider", "openai", "hi"],
    ["--allow", "plugin__*", "--allow", "bash", "-p", "run"],
    ["--trust"],
    [""],
]
_UNUSUAL = [
    ["--help"],
    ["-pc", "x"],
    ["--model=m1", "x"],
    ["--mod", "m1", "x"],
    ["one", "two"],
    ["--model"],
    ["--model", "-p"],
    ["--", "-p"],
    ["-x"],
]


@pytest.mark.parametrize("argv", _PLAIN)
def test_a_plain_command_line_is_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    assert _quick(argv) is not None
    assert _quick(argv) == _parsed(argv)


@pytest.mark.parametrize("argv", _UNUSUAL)
def test_any_other_command_line_is_left_to_argparse(argv: list[str]) -> None:
    assert _quick(argv) is None


def test_bad_flags_are_a_usage_error_from_argparse() -> None:
    with pytest.raises(UsageError):
        parse(["--no-such-flag"])
    with pytest.raises(UsageError):
        parse(["-c", "--resume", "abc"])


def test_importing_the_command_line_imports_nothing_heavy() -> None:
    # What bingo.cli imports is imported before `launch` holds cyclic collection off, and
    # argparse is imported only for a command line the quick reader cannot take.
    heavy = [
        "argparse",
        "asyncio",
        "dataclasses",
        "logging",
        "msgspec",
        "typing",
        "pathlib",
        "socket",
        "threading",
        "bingo.app",
        "bingo.bridge",
        "bingo.bridge.host",
    ]
    script = f"import sys, bingo.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_an_internal_error_before_the_log_is_set_up_goes_to_the_log_not_stderr(tmp_path: Path) -> None:
    # The boundary's own log record must not reach stderr through logging's last resort.
    script = (
        "import sys, bingo.app, bingo.cli\n"
        "async def broken(options): raise RuntimeError('boom')\n"
        "bingo.app.run_app = broken\n"
        "sys.exit(bingo.cli.run(['-p', '/help']))\n"
    )
    home = tmp_path / "bingo-home"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "BINGO_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 1
    assert (
        done.stderr
        == "bingo: internal error (RuntimeError: boom); details are in the log under ~/.bingo/data/logs/bingo.log\n"
    )
    log = (home / "data" / "logs" / "bingo.log").read_text(encoding="utf-8")
    assert "internal error" in log and "Traceback" in log and "RuntimeError: boom" in log
