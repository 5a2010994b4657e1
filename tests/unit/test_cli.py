"""The command line: the quick reader takes the plain shapes people type exactly as argparse
(the parser of record) would, and hands everything else to argparse."""

from __future__ import annotations

import subprocess
import sys

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
    heavy = ["argparse", "asyncio", "dataclasses", "logging", "msgspec", "typing", "pathlib", "socket", "threading",
             "bingo.app", "bingo.bridge", "bingo.bridge.host"]
    script = f"import sys, bingo.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
