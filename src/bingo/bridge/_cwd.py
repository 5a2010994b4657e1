"""What a plugin or server that is not the project's must not take from the project it runs in
(ADR-0050).

A plugin of the person's own layer, or of a package, runs in the project (its working
directory is bingo's), trusted or not. Some commands read what they run from their working
directory before the person's words: `npx NAME` and `npm exec` run the project's
`node_modules/.bin/NAME` when its `node_modules` has one, and read the project's `.npmrc`
(which can name another registry); `python -m NAME` and `python -c` put the working directory
first on `sys.path`, so a `NAME.py` of the project's is the one imported. A repository that
ships those would have its own code run in the person's server's place, before anybody
trusted it. So, for such a process only:
- npm's runners are given `--prefix` an empty directory of bingo's: npm looks there, not in
  the project, for `node_modules` and `.npmrc` (the command still runs in the project);
- Python gets `PYTHONSAFEPATH=1` unless it runs a script (with `-m`, `-c`, or reading
  standard input: 3.11 and later; an older one ignores it), never for a script, whose own
  directory it needs first.

A project's own plugins and `.mcp.json` servers are left as they are: they are the project's,
run once it is trusted, and may mean its `node_modules`. Not covered (named in the ADR):
`pnpm dlx`, `yarn dlx`, `bunx` and `uv run`, whose project settings are read from the working
directory by other means.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..sandbox import launcher

__all__ = ["not_from_the_project"]

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?\Z")


def not_from_the_project(argv: Sequence[str], env: Mapping[str, str], empty: Path) -> tuple[list[str], dict[str, str]]:
    """`argv` and `env` for a process that is not the project's, so that what it runs is not
    found in its working directory (the module); `empty` is a directory of bingo's that holds
    nothing, made here when missing."""
    argv, env = list(argv), dict(env)
    runner = launcher(argv)
    if runner is not None and runner.manager == "npm":
        empty.mkdir(parents=True, exist_ok=True)
        return [argv[0], f"--prefix={empty}", *argv[1:]], env
    if _PYTHON.match(os.path.basename(argv[0]) if argv else "") and not _runs_a_script(argv[1:]):
        env["PYTHONSAFEPATH"] = "1"
    return argv, env


def _runs_a_script(args: Sequence[str]) -> bool:
    """Whether Python's arguments `args` name a script file (whose directory goes first on
    `sys.path`), rather than `-m`, `-c`, standard input or nothing (the working directory)."""
    words = iter(args)
    for arg in words:
        if arg in ("-X", "-W", "--check-hash-based-pycs"):
            next(words, None)  # its value
        elif arg == "-" or arg == "--":
            return False if arg == "-" else next(words, "-") != "-"
        elif not arg.startswith("-"):
            return True
        elif not arg.startswith("--"):
            for flag in arg[1:]:
                if flag in "cm":
                    return False  # the rest of the word, or the next one, is its value
                if flag in "XW":
                    if arg.endswith(flag):
                        next(words, None)
                    break
    return False
