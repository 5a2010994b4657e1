"""The `bingo` command line: arguments in, one exit status out.

Owns argument parsing and the last line of defence: every failure becomes one line on stderr
and an exit status (0 done, 1 the turn failed, 2 bad usage or settings); a traceback never
reaches the person. What a run does is `app.py`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from .app import Options
from .kernel.errors import BingoError, UsageError

__all__ = ["main", "parse", "run"]

_log = logging.getLogger("bingo")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]  # argparse's signature returns NoReturn
        raise UsageError(message, "see bingo --help")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bingo", description="An agent host whose extensions are cross-process plugins.")
    p.add_argument("prompt", nargs="?", help="one turn, then exit; starting with / runs a slash command")
    p.add_argument("-p", "--print", dest="print_mode", action="store_true", help="plain text output, nothing waits for a person")
    p.add_argument("-c", "--continue", dest="continue_latest", action="store_true", help="continue this project's latest session")
    p.add_argument("--resume", metavar="ID", help="continue the session with this id (or unique prefix)")
    p.add_argument("--provider", metavar="ID", help="the model provider for this run")
    p.add_argument("--model", metavar="NAME", help="the model for this run")
    p.add_argument("--allow", metavar="RULE", action="append", default=[], help="add a permissions.allow rule for this run (repeatable)")
    p.add_argument("--trust", action="store_true", help="trust this project's plugins as they are now, and exit")
    return p


def parse(argv: Sequence[str]) -> Options:
    """Options from the command line; UsageError when they cannot be understood."""
    ns = _parser().parse_args(list(argv))
    if ns.continue_latest and ns.resume:
        raise UsageError("--continue and --resume cannot be used together", "pick one")
    return Options(
        prompt=ns.prompt,
        print_mode=ns.print_mode,
        continue_latest=ns.continue_latest,
        resume=ns.resume,
        provider=ns.provider,
        model=ns.model,
        allow=tuple(ns.allow),
        trust=ns.trust,
    )


def run(argv: Sequence[str]) -> int:
    """Run bingo; the exit status."""
    try:
        options = parse(argv)
        from .app import run_app

        return asyncio.run(run_app(options))
    except BingoError as exc:
        print(f"bingo: {exc.line()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("bingo: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # boundary: the last line of defence
        _log.exception("internal error")
        print(f"bingo: internal error ({type(exc).__name__}: {exc}); details are in the log under ~/.bingo/data/logs/bingo.log", file=sys.stderr)
        return 1


def main() -> None:
    """The console script."""
    sys.exit(run(sys.argv[1:]))
